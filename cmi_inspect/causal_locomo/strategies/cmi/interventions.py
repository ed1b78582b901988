"""Intervention scorers: how CMI scores the answer to each intervention, by name.

``gold`` (the paper's) scores against the gold answer. The strategy solver builds that scorer
from the sample's record and target (``gold_answer_scorer``, the only code on a solver's path
that reads the gold answer, refused under ``blind``) and hands it to the strategy as
``MemoryTask.score_answer``. ``evidence`` (label-free) scores an answer by its agreement
with the agent's own history, built from the blind ``MemoryTask`` alone, so it cannot
read what the protocol hides. A new scorer is one entry of ``INTERVENTION_SCORERS``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from inspect_ai.solver import TaskState

from cmi_inspect.causal_locomo.data import ScoringCriteria
from cmi_inspect.causal_locomo.dataset import CausalLocomoMetadata
from cmi_inspect.causal_locomo.measures import deterministic_score
from cmi_inspect.causal_locomo.protocol import PROTOCOLS
from cmi_inspect.causal_locomo.strategies.base import AnswerScorer, AnswerScorerFactory, MemoryTask
from cmi_inspect.causal_locomo.strategies.cmi.history import History
from cmi_inspect.errors import UserError, choose


def nothing_injected(state: TaskState) -> None:
    """The strategy solver hands the strategy no answer scorer: the scorer needs none."""
    return None


@dataclass(frozen=True)
class InterventionScorer:
    """One way to score the answers to CMI's interventions."""

    name: str
    make: Callable[[MemoryTask, History], AnswerScorer]
    """The sample's scorer, from what the strategy sees."""
    injected: AnswerScorerFactory = nothing_injected
    """What the strategy solver builds from the sample and injects as
    ``MemoryTask.score_answer``."""
    reads_history: bool = False
    refused_under_blind: str | None = None
    """Why a label-free protocol refuses it, as the user reads it (None: it reads no label)."""


GOLD_REFUSAL = (
    "cmi with -S intervention=gold (the paper's CMI) reads the gold answer inside its "
    "selection loop, which the blind protocol forbids. Run it with -T protocol=paper, or "
    "choose the label-free -S intervention=evidence."
)


def answer_key_scorer(criteria: ScoringCriteria) -> AnswerScorer:
    """The deterministic task score against the gold criteria, as an answer scorer: for
    the strategy solver under ``paper``, and for analyses of finished runs."""

    async def score(answer: str) -> float:
        return deterministic_score(answer, criteria)

    return score


def gold_answer_scorer(state: TaskState) -> AnswerScorer:
    """The reference intervention scorer of the sample, refused under ``blind``: built before
    the strategy runs, from the sample's scoring criteria."""
    meta = state.metadata_as(CausalLocomoMetadata)
    PROTOCOLS[meta.protocol].refuse(GOLD_REFUSAL)
    return answer_key_scorer(meta.scoring_criteria)


def injected_gold(task: MemoryTask, history: History) -> AnswerScorer:
    """The gold scorer the strategy solver injected into the task."""
    if task.score_answer is None:
        raise UserError("cmi with -S intervention=gold needs the gold answer scorer.")
    return task.score_answer


def history_evidence(task: MemoryTask, history: History) -> AnswerScorer:
    """An answer's support by the evidence the history holds for the request."""
    return history.evidence.score


INTERVENTION_SCORERS: dict[str, InterventionScorer] = {
    s.name: s
    for s in (
        InterventionScorer(
            "gold",
            injected_gold,
            injected=gold_answer_scorer,
            refused_under_blind=GOLD_REFUSAL,
        ),
        InterventionScorer("evidence", history_evidence, reads_history=True),
    )
}


def intervention_scorer(name: str) -> InterventionScorer:
    """The scorer named by ``-S intervention=``; a bad name is one line naming the choices."""
    return INTERVENTION_SCORERS[choose("intervention scorer", name, tuple(INTERVENTION_SCORERS))]
