"""Answer scorers that CMI's intervention loop is given, kept apart from the loop itself.

The paper's CMI scores each intervention answer against the gold answer:
``gold_answer_scorer`` is that choice, and the only code on a solver's path
that reads the answer key. It refuses to run under the ``blind`` protocol.
The label-free choice, ``evidence``, needs no factory: CMI builds it inside the
strategy from the blind ``MemoryTask`` (``cmi_inspect.evidence``), so it cannot
read what the protocol hides. Which scorer and which risk filter run follows
the protocol unless named.
"""

from __future__ import annotations

from inspect_ai.solver import TaskState

from cmi_inspect.choices import gold_needs_answers, intervention_name
from cmi_inspect.dataset import CausalLocomoMetadata
from cmi_inspect.scoring import deterministic_score
from cmi_inspect.strategies.base import AnswerScorer, AnswerScorerFactory


def gold_answer_scorer(state: TaskState) -> AnswerScorer:
    """The reference scorer: the deterministic task score against the gold criteria."""
    meta = state.metadata_as(CausalLocomoMetadata)
    gold_needs_answers(meta.protocol)
    criteria = meta.scoring_criteria

    async def score(answer: str) -> float:
        return deterministic_score(answer, criteria)

    return score


def protocol_default_scorer(state: TaskState) -> AnswerScorer | None:
    """The gold scorer under ``paper``; none under ``blind``, where CMI scores by evidence."""
    if state.metadata_as(CausalLocomoMetadata).protocol == "blind":
        return None
    return gold_answer_scorer(state)


def intervention_scorer(name: str | None) -> AnswerScorerFactory | None:
    """The factory the solver injects for the named scorer (None: the protocol's default)."""
    if name is None:
        return protocol_default_scorer
    return gold_answer_scorer if intervention_name(name) == "gold" else None
