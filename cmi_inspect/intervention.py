"""Answer scorers that CMI's intervention loop is given, kept apart from the loop itself.

The paper's CMI scores each intervention answer against the gold answer:
``gold_answer_scorer`` is that choice, and the only code on a solver's path
that reads the answer key. It refuses to run under the ``blind`` protocol.
A label-free scorer plugs in by the same ``AnswerScorerFactory`` signature.
"""

from __future__ import annotations

from inspect_ai.solver import TaskState

from cmi_inspect.dataset import CausalLocomoMetadata
from cmi_inspect.scoring import deterministic_score
from cmi_inspect.strategies.base import AnswerScorer, AnswerScorerFactory


class BlindProtocolError(RuntimeError):
    """A gold-reading component was asked to run under the blind protocol."""


def gold_answer_scorer(state: TaskState) -> AnswerScorer:
    """The reference scorer: the deterministic task score against the gold criteria."""
    meta = state.metadata_as(CausalLocomoMetadata)
    if meta.protocol == "blind":
        raise BlindProtocolError(
            "cmi with -S intervention=gold (the paper's CMI) reads the gold answer "
            "inside its selection loop, which the blind protocol forbids. Run it "
            "with -T protocol=paper, or give cmi a label-free intervention scorer."
        )
    criteria = meta.scoring_criteria

    async def score(answer: str) -> float:
        return deterministic_score(answer, criteria)

    return score


INTERVENTION_SCORERS: dict[str, AnswerScorerFactory] = {"gold": gold_answer_scorer}


def intervention_scorer(name: str) -> AnswerScorerFactory:
    if name not in INTERVENTION_SCORERS:
        raise ValueError(
            f"Unknown intervention scorer {name!r}; choose from {sorted(INTERVENTION_SCORERS)}"
        )
    return INTERVENTION_SCORERS[name]
