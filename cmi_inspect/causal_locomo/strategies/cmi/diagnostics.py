"""CMI's typed record of one sample: every candidate's interventions and verdict, as logged.

The strategy solver stores it in the sample's ``MemorySelection``; ``logged_diagnostics`` reads it
back from a log through that store.
"""

from __future__ import annotations

from typing import Any

from inspect_ai.log import EvalSample
from pydantic import BaseModel

from cmi_inspect.causal_locomo.selection import MemorySelection
from cmi_inspect.causal_locomo.strategies.cmi.effect import GradedEffect
from cmi_inspect.causal_locomo.strategies.cmi.evidence import EvidenceWindow, Support

STRATEGY = "cmi"
"""CMI's strategy name, as ``MemorySelection.strategy`` records it."""


class Candidate(BaseModel):
    """One candidate's interventions and verdict, as the log shows them."""

    key: str
    rank: int
    proposal_score: float
    perturbation: str | None = None
    answer_with: str | None = None
    answer_perturbed: str | None = None
    s_with: float | None = None
    s_pert: float | None = None
    utility: float | None = None
    stability: float | None = None
    perturbed_skipped: str | None = None
    """Why no perturbed answer was asked for, when none was."""
    support_with: Support | None = None
    """The evidence's support of the with-memory answer (label-free scoring)."""
    support_perturbed: Support | None = None
    memory_support: Support | None = None
    """The evidence's support of the memory's own text (the evidence risk filter's check)."""
    effect: GradedEffect | None = None
    """What the graded utility and stability were computed from (``-S effect=graded``)."""
    conflicts: dict[str, float] = {}
    """Other candidates that are versions of the same claim, with their embedding cosine."""
    features: dict[str, float] = {}
    """What the learned selector read of it (``features.FEATURES``), when one ranked."""
    probability: float | None = None
    """The learned selector's probability that it is useful."""
    selected: bool = False
    reason: str = ""


class CMIDiagnostics(BaseModel):
    """Everything CMI measured for one sample: the log's record of why it chose."""

    config: dict[str, Any]
    embedder: str
    intervention: str = "gold"
    """The intervention scorer that ran (``scorers.INTERVENTION_SCORERS``)."""
    effect: str = "answer"
    """How answers became effects (``effect.EFFECTS``)."""
    budget: int | None = None
    """Most memories it could keep (None in logs from before it was recorded: ``k``)."""
    risk_filter: str = "label"
    """The risk filter that ran (``risk.RISK_FILTERS``)."""
    selector: str = "rule"
    """What decided: ``rule`` (utility and stability thresholds) or a learned selector's name."""
    selector_note: str | None = None
    """Why another selector than the one asked for decided (a model it was not fitted on)."""
    proposal: str = "hybrid"
    """``hybrid`` (cosine, recency, Jaccard: the reference) or ``relevance`` (no recency)."""
    evidence: list[EvidenceWindow] = []
    """The history windows answers were checked against (label-free scoring)."""
    support_no_memory: Support | None = None
    answer_no_memory: str | None
    """None when the rule asks for no intervention (``non_causal``)."""
    s_no: float | None
    candidates: list[Candidate]
    model_calls: int
    final_answer_reused: bool


def logged_diagnostics(sample: EvalSample) -> CMIDiagnostics | None:
    """CMI's record of a logged sample, read through its ``MemorySelection`` store; None
    when another strategy chose."""
    record = sample.store_as(MemorySelection)
    if record.strategy != STRATEGY:
        return None
    return CMIDiagnostics.model_validate(record.details)
