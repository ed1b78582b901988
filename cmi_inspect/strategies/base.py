"""The one abstraction every memory strategy implements, and the solver around it.

A strategy receives the request and the protocol's view of the memory bank,
chooses memories (possibly deriving text from them) and returns the prompt
the response model answers; the solver records the choice in the sample's
store and produces the final answer.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from inspect_ai.model import ChatMessageUser, Model, ModelOutput, get_model
from inspect_ai.solver import Generate, Solver, TaskState
from inspect_ai.util import StoreModel
from pydantic import BaseModel, Field

from cmi_inspect.data import PastSession
from cmi_inspect.dataset import CausalLocomoMetadata
from cmi_inspect.protocol import Protocol
from cmi_inspect.view import Memory, ProtocolName, memory_view

AnswerScorer = Callable[[str], Awaitable[float]]
"""Scores one answer to the sample's request (higher is better)."""

AnswerScorerFactory = Callable[[TaskState], AnswerScorer | None]
"""Builds the sample's answer scorer (None: the strategy scores without one); the only
place an answer key may be read."""


@dataclass(frozen=True)
class MemoryTask:
    """What a strategy may use: never labels beyond what the protocol shows."""

    request: str
    memories: list[Memory]
    sessions: list[PastSession]
    """Past sessions, oldest first."""
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
    details: BaseModel | None = None
    """The strategy's own typed record of how it chose, logged with the selection."""
    output: ModelOutput | None = None
    """An answer already generated for exactly ``prompt``, reused instead of a new call."""


MemoryNames = Mapping[str, str]
"""Key a strategy saw -> how the scorer names that memory (id and label)."""


class MemoryStrategy(ABC):
    """A memory system: picks memories for a request and writes the prompt.

    Its docstring is its solver's (``-S`` arguments under ``Args:``); its ``-S`` arguments
    are its constructor's keyword parameters unless it declares them as one record
    (``Args``), and ``strategies.arguments`` checks them before the run.
    """

    name: ClassVar[str]
    Args: ClassVar[type[Any] | None] = None
    """The ``-S`` arguments as one typed record (a dataclass), for a strategy whose
    constructor does not take them one by one (it is built by ``from_args``). None: the
    constructor's keyword parameters are its arguments."""

    @abstractmethod
    async def select(self, task: MemoryTask) -> Selection: ...

    @classmethod
    def from_args(cls, args: Any) -> MemoryStrategy:
        """The strategy built from its ``Args`` record (for a strategy that declares one)."""
        raise NotImplementedError(f"{cls.__name__} declares Args but not from_args")

    @classmethod
    def explain(cls, details: dict[str, Any], names: MemoryNames) -> str:
        """The strategy's details as Markdown for the sample's explanation ('' for none)."""
        return ""

    def check_protocol(self, protocol: Protocol) -> None:
        """Refuse (``Protocol.refuse``, one line) what this strategy would read that
        ``protocol`` hides, before a run whose tasks all follow it. One that reads nothing
        but its ``MemoryTask`` has nothing to refuse."""
        return None

    def answer_scorer(self) -> AnswerScorerFactory | None:
        """What its solver builds from each sample and hands over as
        ``MemoryTask.score_answer`` (None: nothing; CMI's gold scorer is the one there is)."""
        return None


class StrategyError(RuntimeError):
    """A strategy raised while selecting: its sample fails, with the strategy named."""


class MemorySelection(StoreModel):
    """The strategy's choice for one sample, as scorers and the log read it."""

    strategy: str = ""
    selected: list[str] = Field(default_factory=list)
    scores: list[float | None] = Field(default_factory=list)
    details: dict[str, Any] = Field(default_factory=dict)


def memory_task(state: TaskState, answer_scorer: AnswerScorerFactory | None = None) -> MemoryTask:
    meta = state.metadata_as(CausalLocomoMetadata)
    sessions = [s.timestamp for s in meta.past_sessions]
    return MemoryTask(
        request=state.input_text,
        memories=memory_view(meta.example_id, meta.memory_bank, meta.protocol, sessions),
        sessions=sorted(meta.past_sessions, key=lambda s: s.timestamp),
        protocol=meta.protocol,
        model=get_model(),
        score_answer=answer_scorer(state) if answer_scorer else None,
    )


def strategy_solver(
    strategy: MemoryStrategy, answer_scorer: AnswerScorerFactory | None = None
) -> Solver:
    """Rewrite the sample's context with the strategy's choice, then answer."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        try:
            selection = await strategy.select(memory_task(state, answer_scorer))
        except Exception as ex:  # the sample fails naming the strategy; the run goes on
            raise StrategyError(f"strategy {strategy.name!r} failed: {ex!r}") from ex
        record = state.store_as(MemorySelection)
        record.strategy = strategy.name
        record.selected = [p.key for p in selection.picks]
        record.scores = [p.score for p in selection.picks]
        record.details = selection.details.model_dump(mode="json") if selection.details else {}
        state.messages = [ChatMessageUser(content=selection.prompt)]
        if selection.output is None:
            return await generate(state)
        state.output = selection.output
        state.messages.append(selection.output.message)
        return state

    return solve
