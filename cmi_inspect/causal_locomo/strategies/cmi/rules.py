"""CMI's rule and its choices: what it runs under one protocol, and the decision both CMI
and analyses use.

A candidate passes when the ablation's tests pass (utility above ``tau_u``, stability at
least ``tau_s``) and the risk filter keeps it; the passing candidates fill the budget in
the ``prefer`` order. ``decide`` is that decision as a pure function of the candidates'
records, so a replay of a log decides exactly as the run did. Every default is resolved in
``config.settings``; ``Choices`` turns its names into the objects that run for one sample,
among them the fold of a cross-fit file that holds out the sample's conversation.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from cmi_inspect.causal_locomo.protocol import PROTOCOLS, Protocol, ProtocolName
from cmi_inspect.causal_locomo.strategies.cmi.ablations import ABLATIONS, Ablation
from cmi_inspect.causal_locomo.strategies.cmi.config import CMIConfig, budget_for, settings
from cmi_inspect.causal_locomo.strategies.cmi.diagnostics import Candidate
from cmi_inspect.causal_locomo.strategies.cmi.effect import Effect, effect
from cmi_inspect.causal_locomo.strategies.cmi.interventions import (
    InterventionScorer,
    intervention_scorer,
)
from cmi_inspect.causal_locomo.strategies.cmi.profiles import Profile
from cmi_inspect.causal_locomo.strategies.cmi.risk import RiskFilter, decimals_apart, risk_filter
from cmi_inspect.causal_locomo.strategies.cmi.selector import CrossFitFile, SelectorFile, shipped


def by_utility(c: Candidate) -> tuple[float, int]:
    """Highest utility first (the reference), then best proposal rank."""
    return -(c.utility or 0.0), c.rank


def by_proposal(c: Candidate) -> tuple[int]:
    """Best proposal rank first: the retriever's order, the interventions only vetoing."""
    return (c.rank,)


def by_probability(c: Candidate) -> tuple[float, int]:
    """Most probably useful first, by the learned selector; then best proposal rank."""
    return -(c.probability or 0.0), c.rank


PREFER: dict[str, Callable[[Candidate], tuple[float, ...]]] = {
    "utility": by_utility,
    "proposal": by_proposal,
    "probability": by_probability,
}
"""Orders in which CMI's passing candidates fill its budget (``probability``: a learned
selector's, which ``-S prefer`` does not name: ``config.RULE_PREFER``)."""


@dataclass(frozen=True)
class Choices:
    """What CMI runs under one protocol (``config.settings``), as the objects that run it."""

    config: CMIConfig
    """The config resolved against the protocol's profile."""
    protocol: Protocol
    profile: Profile
    ablation: Ablation
    scorer: InterventionScorer
    risk: RiskFilter
    effect: Effect
    budget: int
    """At most this many memories are kept."""
    prefer: str
    """Which passing candidates fill the budget first (``PREFER``)."""
    selector: SelectorFile | None = None
    """The learned selector that ranks the candidates (None: the rule decides)."""
    selector_note: str | None = None
    """Why it is not the one asked for (``for_model``)."""
    cross_fit: CrossFitFile | None = None
    """The cross-fit file whose fold ``selector`` is (None: not cross-fitted)."""

    @classmethod
    def of(
        cls, config: CMIConfig, protocol: ProtocolName, conversation: str | None = None
    ) -> Choices:
        """The choices for a sample of ``conversation`` (``MemoryTask.conversation``): a
        cross-fit file's fold that holds it out ranks, one line when none does."""
        chosen = settings(config, protocol)
        source, cross_fit = chosen.selector, None
        selector: SelectorFile | None
        if isinstance(source, CrossFitFile):
            cross_fit, selector = source, source.fold_for(conversation).selector
        else:
            selector = source
        return cls(
            chosen.config,
            PROTOCOLS[protocol],
            chosen.profile,
            ABLATIONS[config.ablation],
            intervention_scorer(chosen.intervention),
            risk_filter(chosen.risk_filter),
            effect(chosen.effect),
            chosen.budget,
            chosen.order,
            selector,
            cross_fit=cross_fit,
        )

    def for_model(self, model: str) -> Choices:
        """These choices for a sample answered by ``model``: a selector fitted on another
        model's answers gives way to the learned non_causal one, which reads no answer, and
        no intervention is asked for; a cross-fitted one is refused (that one may have read
        the sample's conversation)."""
        if self.selector is None or self.selector.holds_for(model):
            return self
        if self.cross_fit is not None:
            self.cross_fit.check_model(model)
        note = (
            f"the {self.selector.name} selector was fitted on {self.selector.response_model}'s "
            f"answers, not {model}'s: the learned non_causal selector ranks instead"
        )
        stand_in = shipped("learned_non_causal")
        return replace(
            self,
            ablation=ABLATIONS["learned_non_causal"],
            selector=stand_in,
            selector_note=note,
            budget=budget_for(self.config, stand_in),
        )

    @property
    def reads_history(self) -> bool:
        """Whether the scorer, the filter or the learned selector checks texts against the
        history."""
        return self.scorer.reads_history or self.risk.reads_history or self.selector is not None

    def rejection(self, c: Candidate, label: str | None) -> str | None:
        """Why the rule, or the learned selector's threshold, rejects ``c`` (None: it
        passes; ``label`` as the protocol shows it, read only by the oracle)."""
        if self.selector is None:
            return rule_rejection(c, label, self.config)
        assert c.probability is not None, "rank the candidates first"
        if c.probability < self.selector.threshold:
            d = decimals_apart(c.probability, self.selector.threshold, 3)
            return (
                f"{self.selector.name}: p(useful) {c.probability:.{d}f} < threshold "
                f"{self.selector.threshold}"
            )
        return None

    def refuse_label_reading(self) -> None:
        """One line for the first choice that reads what a label-free protocol hides
        (``Protocol.refuse``)."""
        for refusal in (
            self.ablation.refused_under_blind,
            self.scorer.refused_under_blind,
            self.risk.refused_under_blind,
        ):
            self.protocol.refuse(refusal)


def check_before_run(config: CMIConfig, protocol: Protocol) -> None:
    """One line for an ablation, intervention scorer or risk filter that reads what
    ``protocol`` hides, before a run (no sample, so no fold of a cross-fit file)."""
    chosen = settings(config, protocol.name)
    protocol.refuse(ABLATIONS[config.ablation].refused_under_blind)
    protocol.refuse(intervention_scorer(chosen.intervention).refused_under_blind)
    protocol.refuse(risk_filter(chosen.risk_filter).refused_under_blind)


def rule_rejection(c: Candidate, label: str | None, config: CMIConfig) -> str | None:
    """Why the ablation's rule rejects the candidate, or None if it passes (``label``: the
    memory's label as the protocol shows it, read only by the oracle; ``config``: resolved,
    ``CMIConfig.resolved``)."""
    ablation = ABLATIONS[config.ablation]
    if ablation.by_label:
        return None if label == "useful" else f"oracle: labelled {label}"
    assert config.tau_u is not None and config.tau_s is not None, "resolve the config first"
    if ablation.tests_utility:
        assert c.utility is not None
        if c.utility <= config.tau_u:
            d = decimals_apart(c.utility, config.tau_u, 3)
            return f"utility {c.utility:+.{d}f} <= tau_u {config.tau_u}"
    if ablation.tests_stability:
        assert c.stability is not None
        if c.stability < config.tau_s:
            d = decimals_apart(c.stability, config.tau_s, 3)
            return f"stability {c.stability:+.{d}f} < tau_s {config.tau_s}"
    return None


@dataclass(frozen=True)
class Decision:
    """Which candidates CMI keeps, and why each was kept or not, as the log says it."""

    kept: list[str]
    """Keys in the order their memories enter the prompt."""
    reasons: dict[str, str]


def decide(
    candidates: Sequence[Candidate],
    rejections: Mapping[str, str | None],
    prefer: str,
    budget: int,
) -> Decision:
    """Keep the candidates nothing rejects (``rejections``: key -> why the rule or the risk
    filter rejects it, None if neither does), the ``budget`` first in the ``prefer`` order."""
    passing = sorted((c for c in candidates if rejections[c.key] is None), key=PREFER[prefer])
    kept = [c.key for i, c in enumerate(passing) if i < budget]
    reasons = {
        c.key: rejections[c.key] or ("selected" if c.key in kept else "over budget")
        for c in candidates
    }
    return Decision(kept, reasons)
