"""The one abstraction every memory strategy implements, and the solver around it.

A strategy receives the request and the protocol's view of the memory bank,
chooses memories (possibly deriving text from them) and returns the prompt
the response model answers; the solver records the choice in the sample's
store and produces the final answer.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from inspect_ai.model import ChatMessageUser, Model, ModelOutput, get_model
from inspect_ai.solver import Generate, Solver, TaskState
from inspect_ai.util import StoreModel
from pydantic import Field

from cmi_inspect.dataset import CausalLocomoMetadata
from cmi_inspect.memory import Memory, Session, memory_view
from cmi_inspect.memory import Protocol as ProtocolName

AnswerScorer = Callable[[str], Awaitable[float]]
"""Scores one answer to the sample's request (higher is better)."""

AnswerScorerFactory = Callable[[TaskState], AnswerScorer]
"""Builds the sample's answer scorer; the only place an answer key may be read."""


@dataclass(frozen=True)
class MemoryTask:
    """What a strategy may use: never labels beyond what the protocol shows."""

    request: str
    memories: list[Memory]
    sessions: list[Session]
    protocol: ProtocolName
    model: Model
    score_answer: AnswerScorer | None = None
    """Scores a candidate answer in [0, 1]; only strategies that score their own
    interventions (CMI) get one, from the solver that injects it."""


@dataclass
class Pick:
    """A bank memory counted as selected, with the score that ranked it."""

    key: str
    score: float | None = None


@dataclass
class Selection:
    picks: list[Pick]
    prompt: str
    details: dict[str, Any] = field(default_factory=dict)
    output: ModelOutput | None = None
    """An answer already generated for exactly ``prompt``, reused instead of a new call."""


class MemoryStrategy(Protocol):
    name: str

    async def select(self, task: MemoryTask) -> Selection: ...


class MemorySelection(StoreModel):
    """The strategy's choice for one sample, as scorers and the log read it."""

    strategy: str = ""
    selected: list[str] = Field(default_factory=list)
    scores: list[float | None] = Field(default_factory=list)
    details: dict[str, Any] = Field(default_factory=dict)


def memory_task(state: TaskState, answer_scorer: AnswerScorerFactory | None = None) -> MemoryTask:
    meta = state.metadata_as(CausalLocomoMetadata)
    sessions = sorted(
        (Session(timestamp=int(s["timestamp"]), content=s["content"]) for s in meta.past_sessions),
        key=lambda s: s.timestamp,
    )
    return MemoryTask(
        request=state.input_text,
        memories=memory_view(meta.example_id, meta.memory_bank, meta.protocol),
        sessions=sessions,
        protocol=meta.protocol,
        model=get_model(),
        score_answer=answer_scorer(state) if answer_scorer else None,
    )


def strategy_solver(
    strategy: MemoryStrategy, answer_scorer: AnswerScorerFactory | None = None
) -> Solver:
    """Rewrite the sample's context with the strategy's choice, then answer."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        selection = await strategy.select(memory_task(state, answer_scorer))
        record = state.store_as(MemorySelection)
        record.strategy = strategy.name
        record.selected = [p.key for p in selection.picks]
        record.scores = [p.score for p in selection.picks]
        record.details = selection.details
        state.messages = [ChatMessageUser(content=selection.prompt)]
        if selection.output is None:
            return await generate(state)
        state.output = selection.output
        state.messages.append(selection.output.message)
        return state

    return solve
