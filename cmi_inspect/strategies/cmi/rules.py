"""CMI's rule: its configuration, its ablations, and the decision both CMI and analyses use.

A candidate passes when the ablation's tests pass (utility above ``tau_u``, stability at
least ``tau_s``) and the risk filter keeps it; the passing candidates fill the budget in
the ``prefer`` order. ``decide`` is that decision as a pure function of the candidates'
records, so a replay of a log decides exactly as the run did.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from cmi_inspect.causal_locomo.protocol import PROTOCOLS, Protocol, ProtocolName
from cmi_inspect.errors import UserError, choose, finite_float, flag, positive_int
from cmi_inspect.strategies.cmi.diagnostics import Candidate
from cmi_inspect.strategies.cmi.effect import Effect, effect
from cmi_inspect.strategies.cmi.features import FEATURES
from cmi_inspect.strategies.cmi.interventions import InterventionScorer, intervention_scorer
from cmi_inspect.strategies.cmi.profiles import PROFILES, Profile
from cmi_inspect.strategies.cmi.risk import CONFLICT_KINDS, Conflicts, RiskFilter, risk_filter
from cmi_inspect.strategies.cmi.selector import RULE, SelectorFile, selector_named, shipped


@dataclass(frozen=True)
class Ablation:
    """A variant of CMI's rule: which answers it asks for and how it decides."""

    name: str
    asks_no_memory: bool = True
    """Answers with no memory (every rule that reads a utility needs it)."""
    asks_with: bool = True
    """Answers with each candidate memory."""
    asks_perturbed: bool = True
    """Answers with each perturbed candidate."""
    tests_utility: bool = True
    """Rejects a candidate whose utility is not above tau_u."""
    tests_stability: bool = True
    """Rejects a candidate whose stability is below tau_s."""
    no_memory_as_perturbed: bool = False
    """Takes s_pert = s_no instead of asking for a perturbed answer."""
    by_label: bool = False
    """Selects exactly the candidates labelled useful, asking nothing."""
    skipped: str | None = None
    """Why no perturbed answer is asked for, as the log says it."""
    learned: bool = False
    """Ranks with the learned non_causal selector (``selector.SHIPPED``), not the rule."""
    refused_under_blind: str | None = None
    """Why a label-free protocol refuses it, as the user reads it (None: it reads no label)."""


ABLATIONS: dict[str, Ablation] = {
    a.name: a
    for a in (
        Ablation("full"),
        Ablation(
            "no_perturb",
            asks_perturbed=False,
            no_memory_as_perturbed=True,
            skipped="no_perturb ablation: s_pert = s_no",
        ),
        Ablation(
            "utility_only",
            asks_perturbed=False,
            tests_stability=False,
            skipped="utility_only ablation",
        ),
        Ablation("stability_only", tests_utility=False),
        Ablation(
            "non_causal",
            asks_no_memory=False,
            asks_with=False,
            asks_perturbed=False,
            tests_utility=False,
            tests_stability=False,
            skipped="non_causal ablation: no intervention",
        ),
        Ablation(
            "learned_non_causal",
            asks_no_memory=False,
            asks_with=False,
            asks_perturbed=False,
            tests_utility=False,
            tests_stability=False,
            learned=True,
            skipped="learned_non_causal ablation: no intervention",
        ),
        Ablation(
            "oracle",
            asks_with=False,
            asks_perturbed=False,
            tests_utility=False,
            tests_stability=False,
            by_label=True,
            skipped="oracle ablation: no intervention",
            refused_under_blind=(
                "The oracle ablation selects by label: it needs -T protocol=paper."
            ),
        ),
    )
}
"""CMI and its ablations by name. The paper's reference code has the first five;
``non_causal`` is the row the rule has to beat: the same proposal, risk filter and budget
with no intervention call, so the top-ranked candidates the filter keeps.
``learned_non_causal`` is the row the learned selector has to beat: the same learned ranking
without the features that read intervention answers."""


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
selector's, which ``-S prefer`` does not name)."""
RULE_PREFER = ("utility", "proposal")
"""The orders ``-S prefer`` chooses from, for the rule."""


@dataclass(frozen=True)
class CMIConfig:
    """CMI's parameters, each documented once, as ``-S`` arguments, in ``CMI``'s docstring. A
    choice left None follows the protocol's profile (``profiles.PROFILES``); the log records
    them resolved (``resolved``)."""

    k: int = 3
    tau_u: float | None = None
    tau_s: float | None = None
    budget: int | None = None
    prefer: str | None = None
    ablation: str = "full"
    risk_filter: str | None = None
    lazy_perturb: bool = False
    intervention: str | None = None
    effect: str | None = None
    conflict_kind: str = "claim"
    conflict_similarity: float = 0.88
    conflict_overlap: float = 0.5
    selector: str | None = None

    def __post_init__(self) -> None:
        choose("ablation", self.ablation, tuple(ABLATIONS))
        if self.prefer is not None:
            choose("prefer", self.prefer, RULE_PREFER)
        object.__setattr__(self, "k", positive_int("k", self.k))
        if self.tau_u is not None:
            object.__setattr__(self, "tau_u", finite_float("tau_u", self.tau_u))
        if self.tau_s is not None:
            object.__setattr__(self, "tau_s", finite_float("tau_s", self.tau_s))
        if self.budget is not None:
            object.__setattr__(self, "budget", positive_int("budget", self.budget))
        object.__setattr__(self, "lazy_perturb", flag("lazy_perturb", self.lazy_perturb))
        choose("conflict_kind", self.conflict_kind, CONFLICT_KINDS)
        # a threshold above 1 is allowed: no pair then counts as one claim
        similarity = finite_float("conflict_similarity", self.conflict_similarity, -1.0)
        object.__setattr__(self, "conflict_similarity", similarity)
        overlap = finite_float("conflict_overlap", self.conflict_overlap, 0.0)
        object.__setattr__(self, "conflict_overlap", overlap)
        if self.risk_filter is not None:
            risk_filter(self.risk_filter)
        if self.selector is not None:
            selector_named(self.selector)
            learned = self.selector != RULE
            if learned and self.ablation not in LEARNED_ABLATIONS:
                raise UserError(
                    f"-S selector={self.selector} ranks CMI's candidates itself, while "
                    f"-S ablation={self.ablation} tests the rule: use selector=rule with it."
                )
            if self.ablation == "learned_non_causal" and not learned:
                raise UserError(
                    "-S ablation=learned_non_causal ranks with a learned selector, not the rule."
                )
        if self.intervention is not None:
            intervention_scorer(self.intervention)
        if self.effect is not None:
            effect(self.effect)
            if self.lazy_perturb and effect(self.effect).graded:
                raise UserError(
                    "-S lazy_perturb=true skips perturbed answers by the answer utility, but "
                    "-S effect=graded reads every candidate's perturbed answer: use "
                    "effect=answer with lazy_perturb."
                )

    @property
    def conflicts(self) -> Conflicts:
        """The thresholds the evidence risk filter's measure reads."""
        return Conflicts(self.conflict_similarity, self.conflict_overlap, self.conflict_kind)

    def resolved(self, protocol: ProtocolName) -> CMIConfig:
        """The config with every choice left None set to the protocol's profile."""
        profile = PROFILES[protocol]
        return replace(
            self,
            tau_u=profile.tau_u if self.tau_u is None else self.tau_u,
            tau_s=profile.tau_s if self.tau_s is None else self.tau_s,
            prefer=profile.prefer if self.prefer is None else self.prefer,
        )


LEARNED_ABLATIONS = ("full", "learned_non_causal")
"""The ablations a learned selector ranks for; the others test the rule."""


def learned_selector(config: CMIConfig, profile: Profile) -> SelectorFile | None:
    """The learned selector CMI ranks with (None: the rule decides): the one named, else
    the profile's for a full run, the shipped non_causal one for ``learned_non_causal``.
    ``learned`` names the shipped selector of the ablation."""
    ablation = ABLATIONS[config.ablation]
    name = config.selector or (
        profile.selector if config.ablation == "full" or ablation.learned else RULE
    )
    if ablation.learned and name in (RULE, "learned"):
        name = "learned_non_causal"
    found = selector_named(name)
    if ablation.learned and found is not None and found.causal:
        raise UserError(
            f"-S ablation=learned_non_causal needs a selector that reads no intervention "
            f"answer; {name} reads {', '.join(f for f in found.features if FEATURES[f].causal)}."
        )
    return found


@dataclass(frozen=True)
class Choices:
    """What CMI runs under one protocol: the config's named choices, else the profile's."""

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

    @classmethod
    def of(cls, config: CMIConfig, protocol: ProtocolName) -> Choices:
        profile = PROFILES[protocol]
        ablation = ABLATIONS[config.ablation]
        selector = learned_selector(config, profile)
        # lazy perturbation reads the answer utility, so it keeps the answer effect; a learned
        # selector reads the answers themselves, which the graded effect does not change
        answer_effect = config.lazy_perturb or selector is not None
        default_effect = "answer" if answer_effect else profile.effect
        # a learned selector weighs conflicts and support itself: no filter unless named
        default_risk = "none" if selector is not None else profile.risk_filter
        return cls(
            config.resolved(protocol),
            PROTOCOLS[protocol],
            profile,
            ablation,
            intervention_scorer(config.intervention or profile.intervention),
            risk_filter(config.risk_filter or default_risk),
            effect(config.effect or default_effect),
            config.budget or (1 if selector else profile.budget or config.k),
            "probability" if selector else config.prefer or profile.prefer,
            selector,
        )

    def for_model(self, model: str) -> Choices:
        """These choices for a sample answered by ``model``: a selector fitted on another
        model's answers gives way to the learned non_causal one, which reads no answer, and
        no intervention is asked for."""
        if self.selector is None or self.selector.holds_for(model):
            return self
        note = (
            f"the {self.selector.name} selector was fitted on {self.selector.response_model}'s "
            f"answers, not {model}'s: the learned non_causal selector ranks instead"
        )
        return replace(
            self,
            ablation=ABLATIONS["learned_non_causal"],
            selector=shipped("learned_non_causal"),
            selector_note=note,
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
            return (
                f"{self.selector.name}: p(useful) {c.probability:.3f} < threshold "
                f"{self.selector.threshold}"
            )
        return None

    def refuse_label_reading(self, ablation: bool = True) -> None:
        """One line for the first choice that reads what a label-free protocol hides
        (``Protocol.refuse``). ``ablation`` False leaves the ablation out, as the check
        before a run does, so that a run of every ablation under blind still runs the
        others (the oracle's samples fail, with this line)."""
        reads = [self.ablation.refused_under_blind] if ablation else []
        for refusal in (*reads, self.scorer.refused_under_blind, self.risk.refused_under_blind):
            self.protocol.refuse(refusal)


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
            return f"utility {c.utility:+.3f} <= tau_u {config.tau_u}"
    if ablation.tests_stability:
        assert c.stability is not None
        if c.stability < config.tau_s:
            return f"stability {c.stability:+.3f} < tau_s {config.tau_s}"
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
