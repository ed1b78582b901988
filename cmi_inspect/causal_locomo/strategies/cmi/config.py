"""CMI's configuration, validated, its two presets, and the one place its defaults are resolved.

``CMIConfig`` holds what ``-S`` names (pydantic: a bad value is one line naming the argument
and its range). A choice left None is resolved by ``settings``, and only there: from the
config, else from the preset that decides (``PRESETS``: ``rule``, the utility and stability
thresholds with a risk filter; ``learned``, a learned selector that ranks the candidates
itself), else from the protocol's profile (``profiles.PROFILES``), which also names the
preset a protocol runs by default (paper: rule; blind: learned). How many are kept is
decided by what decides: the rule keeps every candidate that passes, a learned selector
every one above its threshold or its most probable one (``SelectorFile.keeps``), at most
``-S budget`` (default k).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from inspect_ai.solver import TaskState
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator, model_validator

from cmi_inspect.causal_locomo.dataset import CausalLocomoMetadata
from cmi_inspect.causal_locomo.protocol import ProtocolName
from cmi_inspect.causal_locomo.strategies.base import AnswerScorer, AnswerScorerFactory
from cmi_inspect.causal_locomo.strategies.cmi.ablations import ABLATIONS, LEARNED_ABLATIONS
from cmi_inspect.causal_locomo.strategies.cmi.effect import effect
from cmi_inspect.causal_locomo.strategies.cmi.features import FEATURES
from cmi_inspect.causal_locomo.strategies.cmi.interventions import intervention_scorer
from cmi_inspect.causal_locomo.strategies.cmi.profiles import PROFILES, PresetName, Profile
from cmi_inspect.causal_locomo.strategies.cmi.risk import CONFLICT_KINDS, Conflicts, risk_filter
from cmi_inspect.causal_locomo.strategies.cmi.selector import RULE, LearnedSelector, selector_named
from cmi_inspect.errors import UserError, choose, finite_float, flag, positive_int

RULE_PREFER = ("utility", "proposal")
"""The orders ``-S prefer`` chooses from, for the rule (``rules.PREFER``)."""


class CMIConfig(BaseModel):
    """CMI's parameters, each declared and documented here once: its ``-S`` arguments (with
    ``CMIArgs``), from which its strategy solver takes its signature and docstring. A
    choice left None follows the preset, then the protocol's profile (``settings``); the log
    records the rule's thresholds resolved (``resolved``)."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    k: int = 3
    """Candidates proposed by the hybrid retriever."""
    tau_u: float | None = None
    """The rule's utility threshold (select if utility > tau_u); default 0 under
    paper, 0.05 under blind with ``selector=rule`` (chosen on the development sets)."""
    tau_s: float | None = None
    """The rule's stability threshold (select if stability >= tau_s); default 0
    under paper, -1 under blind with ``selector=rule`` (logged, never vetoes)."""
    budget: int | None = None
    """Most memories selected (default: k, save 1 for a learned selector that keeps
    its top candidate, as the shipped ones do; the rule and a selector that keeps every
    candidate above its threshold decide how many)."""
    prefer: str | None = None
    """Which of the rule's passing candidates fill the budget first: ``utility``
    (highest utility, the reference; default under paper) or ``proposal`` (best proposal
    rank; blind with ``selector=rule``). A learned selector keeps its most probable
    candidates."""
    ablation: str = "full"
    """``full`` or one of the ablations ``no_perturb``, ``utility_only``,
    ``stability_only``, ``non_causal`` (no intervention: the top candidates the risk filter
    keeps), ``learned_non_causal`` (no intervention: the learned selector without the
    features that read answers), ``oracle`` (see ``strategies.cmi.ABLATIONS``)."""
    risk_filter: str | None = None
    """``label`` (drop memories labelled harmful; paper protocol), ``evidence``
    (drop a memory that conflicts with a candidate the history supports better) or
    ``none``; default: ``label`` under paper, ``none`` with a learned selector (it weighs
    support and conflicts itself), ``evidence`` under blind with ``selector=rule``."""
    lazy_perturb: bool = False
    """Skip a perturbed call when utility already rules the memory out."""
    intervention: str | None = None
    """How interventions are scored: ``gold`` (the paper's: reads the gold
    answer, refused under the blind protocol) or ``evidence`` (agreement with the agent's
    own history, label-free); default: ``gold`` under paper, ``evidence`` under blind."""
    effect: str | None = None
    """How answers become a memory's effect: ``answer`` (each context scored by its
    generated answer, the paper's) or ``graded`` (by the expected answer score under the
    model's likelihood of the candidate's answers in each context) or ``logprob`` (by the
    log-probability of the candidate's with-memory answer in each context, forced decoding
    alone: utility and stability in nats, so set ``tau_u`` and ``tau_s`` for it; a model
    without forced decoding is refused); default: ``answer``, save ``graded`` under blind
    with ``selector=rule`` (the rule's frozen setting; ``answer`` with ``lazy_perturb``,
    which reads the answer utility). A learned selector reads the answers, which neither
    likelihood effect changes."""
    conflict_kind: str = "claim"
    """When the evidence risk filter counts two candidates as versions of one
    claim: ``claim`` (the default: they state the same slot with another value,
    ``strategies.cmi.claims``) or ``topic`` (the relation of earlier figures: close in
    embedding cosine or in shared words)."""
    conflict_similarity: float = 0.88
    """Under ``topic``, the embedding cosine from which two candidates
    count as versions of one claim (a poison is most often a close paraphrase of the memory
    it distorts); above 1, no pair does."""
    conflict_overlap: float = 0.5
    """The share of the slot weight the two memories share (``claim``), or
    under ``topic`` of the shorter memory's content words the other has too
    (``text.word_overlap``), from which they count as versions of one claim (not
    reflection's ``CONFLICT_WORDING_JACCARD``, a Jaccard of wordings without their dates and
    numbers)."""
    selector: str | None = None
    """What decides, the preset: ``rule`` (the thresholds above and the risk filter;
    default under paper), ``learned`` (the shipped learned selector, which ranks the
    candidates by their probability of being useful from label-free features and keeps the
    top one above its threshold; default under blind), the path of a selector file
    (``cmi-inspect fit-selector``; one fitted now keeps every candidate above its
    threshold) or of a cross-fit file (``--cross-fit``: each sample ranked by the fold that
    never read its conversation, refused where none holds it out), or ``crossfit`` /
    ``crossfit_non_causal`` once they ship. A selector fitted on another model's answers
    gives way, in one logged line, to the learned non_causal one; a cross-fitted one is
    refused before the run."""

    def __init__(self, **values: Any) -> None:
        """A bad value is the one line its check raised, never pydantic's report."""
        try:
            super().__init__(**values)
        except ValidationError as ex:
            error = ex.errors()[0]
            cause = (error.get("ctx") or {}).get("error")
            if isinstance(cause, UserError):
                raise cause from None
            name = ".".join(str(p) for p in error["loc"])
            raise UserError(f"CMI's -S {name}: {error['msg']}.") from None

    @field_validator("k", "budget", mode="before")
    @classmethod
    def _count(cls, value: object, info: Any) -> object:
        return value if value is None else positive_int(info.field_name, value)

    @field_validator("tau_u", "tau_s", mode="before")
    @classmethod
    def _threshold(cls, value: object, info: Any) -> object:
        return value if value is None else finite_float(info.field_name, value)

    @field_validator("conflict_kind", mode="before")
    @classmethod
    def _conflict_kind(cls, value: object) -> str:
        return choose("conflict_kind", value, CONFLICT_KINDS)

    @field_validator("conflict_similarity", mode="before")
    @classmethod
    def _similarity(cls, value: object) -> float:
        # a threshold above 1 is allowed: no pair then counts as one claim
        return finite_float("conflict_similarity", value, -1.0)

    @field_validator("conflict_overlap", mode="before")
    @classmethod
    def _overlap(cls, value: object) -> float:
        return finite_float("conflict_overlap", value, 0.0)

    @field_validator("lazy_perturb", mode="before")
    @classmethod
    def _flag(cls, value: object) -> bool:
        return flag("lazy_perturb", value)

    @field_validator("ablation", mode="before")
    @classmethod
    def _ablation(cls, value: object) -> str:
        return choose("ablation", value, tuple(ABLATIONS))

    @field_validator("prefer", "risk_filter", "intervention", "effect", "selector", mode="before")
    @classmethod
    def _named(cls, value: object, info: Any) -> object:
        """A name of a registry (or a selector file that reads), checked where it lives."""
        if value is None:
            return value
        check: dict[str, Callable[[Any], object]] = {
            "prefer": lambda v: choose("prefer", v, RULE_PREFER),
            "risk_filter": risk_filter,
            "intervention": intervention_scorer,
            "effect": effect,
            "selector": selector_named,
        }
        check[info.field_name](value)
        return value

    @model_validator(mode="after")
    def _consistent(self) -> CMIConfig:
        if self.selector is not None:
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
        if self.lazy_perturb and self.effect is not None and effect(self.effect).graded:
            raise UserError(
                "-S lazy_perturb=true skips perturbed answers by the answer utility, but "
                f"-S effect={self.effect} reads every candidate's perturbed answer: use "
                "effect=answer with lazy_perturb."
            )
        return self

    @property
    def conflicts(self) -> Conflicts:
        """The thresholds the evidence risk filter's measure reads."""
        return Conflicts(self.conflict_similarity, self.conflict_overlap, self.conflict_kind)

    def resolved(self, protocol: ProtocolName) -> CMIConfig:
        """The config with the rule's thresholds and order set, the protocol's profile's where
        left None (what a log records, and what a replay of the rule reads)."""
        profile = PROFILES[protocol]
        return self.model_copy(
            update={
                "tau_u": profile.tau_u if self.tau_u is None else self.tau_u,
                "tau_s": profile.tau_s if self.tau_s is None else self.tau_s,
                "prefer": self.prefer or profile.prefer,
            }
        )


class CMIArgs(CMIConfig):
    """CMI's ``-S`` arguments: its config, and the proposal's embedder by name."""

    embedder: str | None = None
    """Embedder for the proposal score (``e5``, ``hashing`` or ``openai``); default:
    ``hashing`` under paper (the reproduction's exact selections), ``e5`` under blind."""


@dataclass(frozen=True)
class Preset:
    """What decides CMI's choice, and the defaults that follow from it (None: the protocol
    profile's, which are the rule's)."""

    name: PresetName
    risk_filter: str | None = None
    effect: str | None = None
    order: str | None = None
    """The order the kept candidates fill the budget in (None: the rule's ``prefer``)."""


PRESETS: dict[PresetName, Preset] = {
    "rule": Preset("rule"),
    # a learned selector weighs conflicts and support itself (no filter) and reads the
    # answers themselves (which the graded effect does not change)
    "learned": Preset("learned", risk_filter="none", effect="answer", order="probability"),
}
"""CMI's two presets by name: ``-S selector=rule``, or a learned selector (``learned``, the
non_causal one, or a fitted file)."""


@dataclass(frozen=True)
class Settings:
    """Every choice CMI runs with under one protocol, none left None."""

    config: CMIConfig
    """The config, the rule's thresholds and order resolved (``CMIConfig.resolved``)."""
    profile: Profile
    preset: Preset
    selector: LearnedSelector | None
    """The learned selector that ranks the candidates, or the cross-fitted ones, one of
    which ranks each sample (``rules.Choices.of``); None: the rule decides."""
    intervention: str
    risk_filter: str
    effect: str
    budget: int
    """At most this many kept (``budget_for``)."""
    order: str
    """The order the passing candidates fill the budget in (``rules.PREFER``)."""
    embedder: str
    """The proposal's embedder, unless one is given (``-S embedder``)."""


def settings(config: CMIConfig, protocol: ProtocolName) -> Settings:
    """What ``config`` runs under ``protocol``: each choice named, else its preset's, else
    the profile's; lazy perturbation reads the answer utility, so it keeps the answer
    effect; the budget follows the selector's way of keeping."""
    profile = PROFILES[protocol]
    selector = learned_selector(config, profile)
    preset = PRESETS["rule" if selector is None else "learned"]
    resolved = config.resolved(protocol)
    default_effect = "answer" if config.lazy_perturb else preset.effect or profile.effect
    return Settings(
        config=resolved,
        profile=profile,
        preset=preset,
        selector=selector,
        intervention=config.intervention or profile.intervention,
        risk_filter=config.risk_filter or preset.risk_filter or profile.risk_filter,
        effect=config.effect or default_effect,
        budget=budget_for(config, selector),
        order=preset.order or str(resolved.prefer),
        embedder=profile.embedder,
    )


def budget_for(config: CMIConfig, selector: LearnedSelector | None) -> int:
    """The most memories kept: ``-S budget``, else 1 for a selector that keeps its top
    candidate, else k (the rule, and a selector that keeps every one above its threshold)."""
    return config.budget or (1 if selector and selector.keeps == "top" else config.k)


NON_CAUSAL_OF = {
    RULE: "learned_non_causal",
    "learned": "learned_non_causal",
    "crossfit": "crossfit_non_causal",
}
"""What ``-S ablation=learned_non_causal`` ranks with for a name of a causal selector."""


def learned_selector(config: CMIConfig, profile: Profile) -> LearnedSelector | None:
    """The learned selector CMI ranks with (None: the rule decides): the one named, else
    the profile's preset's for a full run, the shipped non_causal one for
    ``learned_non_causal`` (``learned`` and ``crossfit`` name the shipped selector of the
    ablation)."""
    ablation = ABLATIONS[config.ablation]
    default = profile.preset if config.ablation == "full" or ablation.learned else RULE
    name = config.selector or default
    if ablation.learned:
        name = NON_CAUSAL_OF.get(name, name)
    found = selector_named(name)
    if ablation.learned and found is not None and found.causal:
        raise UserError(
            f"-S ablation=learned_non_causal needs a selector that reads no intervention "
            f"answer; {name} reads {', '.join(f for f in found.features if FEATURES[f].causal)}."
        )
    return found


def injected_scorer(name: str | None) -> AnswerScorerFactory:
    """What the strategy solver injects for the named intervention scorer (None: each
    sample's protocol's, by ``settings``); the gold one reads the sample's gold answer."""

    def inject(state: TaskState) -> AnswerScorer | None:
        protocol = state.metadata_as(CausalLocomoMetadata).protocol
        chosen = settings(CMIConfig(intervention=name), protocol).intervention
        return intervention_scorer(chosen).injected(state)

    return inject
