"""The one abstraction every memory strategy implements, and the strategy solver's work around it.

A strategy receives the request and the protocol's view of the memory bank,
chooses memories (possibly deriving text from them) and returns the prompt
the response model answers; the strategy solver records the choice in the sample's
store and produces the final answer.

A strategy is trusted code of this package or an installed one (``-S isolate=true``,
``isolation``, runs an installed one in a sandbox). It is handed its ``MemoryTask``, built
from its protocol's view of the sample (``dataset.view_of``: under ``blind`` no label, gold
answer or criterion), never the sample. What it returns is checked (``strategy_solver``):
its picks against the bank it was shown, an answer it hands back against the response-model
calls it made, the sample's metadata and target unchanged; the record is sealed
(``causal_locomo.selection``), and memories its prompt showed but it did not declare are
scored as selected (``causal_locomo.exposure``).
"""

from __future__ import annotations

import contextvars
import copy
import dataclasses
import time
import typing
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import anyio
from inspect_ai.log import transcript
from inspect_ai.model import ChatMessageUser, Model, ModelOutput, get_model
from inspect_ai.solver import Generate, Solver, TaskState
from inspect_ai.util import LimitExceededError
from pydantic import BaseModel

from cmi_inspect.causal_locomo.data import PastSession
from cmi_inspect.causal_locomo.dataset import (
    CausalLocomoMetadata,
    conversation_of,
    differing_fields,
    view_of,
)
from cmi_inspect.causal_locomo.exposure import Call, answering_call, calls_of, exposed
from cmi_inspect.causal_locomo.protocol import Protocol, ProtocolName, named_protocol
from cmi_inspect.causal_locomo.selection import (
    RANKING_DEPTH,
    GuardRecord,
    MemorySelection,
    digest,
    placeholders,
    seal,
)
from cmi_inspect.causal_locomo.view import Memory
from cmi_inspect.errors import UserError

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
    interventions (CMI) get one, from the strategy solver that injects it."""
    conversation: str | None = None
    """The conversation the example comes from (LoCoMo's, which its id names; for a data
    file of one's own, the example id): no label, but what tells a strategy fitted by
    conversation which of its fits never read this one (CMI's cross-fitted selector)."""


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
    ranking: list[str] | None = None
    """The bank's keys in the strategy's order of preference, best first, when it ranks
    the bank (its top ``RANKING_DEPTH`` are recorded, and F1@k reads them); None: it does
    not rank."""


MemoryNames = Mapping[str, str]
"""Key a strategy saw -> how the scorer names that memory (id and label)."""


class MemoryStrategy(ABC):
    """A memory system: picks memories for a request and writes the prompt.

    Its ``-S`` arguments are its constructor's keyword parameters unless it declares them
    as one record (``Args``), and ``strategies.arguments`` checks them before the run. Its
    docstring's ``Args:`` section documents them (a pydantic ``Args``: its fields'
    docstrings); a built-in one's strategy solver takes its signature and docstring from
    both (``strategies.solvers``), an installed one runs through ``memory_strategy``.
    """

    name: ClassVar[str]
    sandbox: str = ""
    """The sandbox its ``select`` runs in ('' in this process; ``strategies.isolation``)."""
    Args: ClassVar[type[Any] | None] = None
    """The ``-S`` arguments as one typed record (a dataclass or a pydantic model), for a
    strategy whose constructor does not take them one by one (it is built by
    ``from_args``). None: the constructor's keyword parameters are its arguments."""

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

    def check_model(self, model: Model) -> None:
        """Refuse (one line) a response model it cannot work with, before the run (the
        model the run was given). One that calls the model only through its ``MemoryTask``
        takes any."""
        return None

    def answer_scorer(self) -> AnswerScorerFactory | None:
        """What its strategy solver builds from each sample and hands over as
        ``MemoryTask.score_answer`` (None: nothing; CMI's gold scorer is the one there is)."""
        return None


class StrategyError(RuntimeError):
    """A strategy raised while selecting: its sample fails, with the strategy named."""


class PickGuard(typing.Protocol):
    """Filters a strategy's picks without a model call or a label (``cmi_inspect.guard``)."""

    name: str

    async def drops(self, task: MemoryTask, picks: Sequence[Pick]) -> dict[str, str]:
        """The picks it drops, by key, each with why (empty: it keeps them all)."""
        ...


def memory_task(state: TaskState, answer_scorer: AnswerScorerFactory | None = None) -> MemoryTask:
    """The strategy's task: the request and its protocol's view of the sample (``view_of``),
    with the answer scorer the strategy solver injects (the gold one only under ``paper``)."""
    view = view_of(state.metadata_as(CausalLocomoMetadata))
    return MemoryTask(
        request=state.input_text,
        memories=list(view.memories),
        sessions=list(view.past_sessions),
        protocol=view.protocol,
        model=get_model(),
        score_answer=answer_scorer(state) if answer_scorer else None,
        conversation=conversation_of(view.example_id) or view.example_id,
    )


DATA_FILE: contextvars.ContextVar[str] = contextvars.ContextVar("cmi_inspect_data_file")
"""The running sample's data file, for a sandbox to hide (``isolation``); a strategy is
never given it."""


async def checked_select(strategy: MemoryStrategy, task: MemoryTask) -> Selection:
    """``strategy.select(task)``; whatever the strategy raises fails its sample as a
    ``StrategyError`` naming it, ``SystemExit`` and other ``BaseException`` included, except
    cancellation and ``KeyboardInterrupt`` (they stop the run as ever), Inspect's limit
    errors and ``UserError`` (they pass through untouched)."""
    named = f"strategy {strategy.name!r}"
    try:
        result = await strategy.select(task)
    except (anyio.get_cancelled_exc_class(), KeyboardInterrupt, LimitExceededError, UserError):
        raise
    except BaseException as ex:  # SystemExit too: it must not reach the event loop
        raise StrategyError(f"{named} failed: {ex!r}") from ex
    if not isinstance(result, Selection):
        raise StrategyError(f"{named} returned {type(result).__name__}, not a Selection")
    return result


def check_picks(
    name: str, picks: Sequence[Pick], memories: Sequence[Memory], verb: str = "picked"
) -> None:
    """Every pick (or key of a ranking, ``verb`` "ranked") a key of the bank the strategy was
    shown, none twice; else one error naming the strategy and the bad keys."""
    shown = {m.key for m in memories}
    counts = Counter(p.key for p in picks)
    unknown = [k for k in counts if k not in shown]
    twice = [k for k, n in counts.items() if n > 1]
    faults = [f"{', '.join(map(repr, unknown))} not in the bank it was shown"] if unknown else []
    faults += [f"{', '.join(map(repr, twice))} more than once"] if twice else []
    if faults:
        raise StrategyError(f"strategy {name!r} {verb} {'; '.join(faults)}")


def changed_fields(before: Mapping[str, Any], state: TaskState, target: list[str]) -> list[str]:
    """The metadata fields (and target) of ``state`` that differ from a snapshot."""
    fields = differing_fields(before, state.metadata)
    return fields + (["target"] if list(state.target.target) != target else [])


def check_output(name: str, selection: Selection, calls: Sequence[Call]) -> None:
    """An answer a strategy hands back (``Selection.output``) must be what a response-model
    call it made answered to exactly its declared prompt; else one error naming it."""
    if selection.output is None:
        return
    if answering_call(calls, selection.prompt, selection.output.completion) is None:
        raise StrategyError(
            f"strategy {name!r} returned an answer (Selection.output) that no response-model "
            "call it made gave to its prompt: an answer is the model's, never the strategy's"
        )


def strategy_solver(
    strategy: MemoryStrategy,
    answer_scorer: AnswerScorerFactory | None = None,
    guard: PickGuard | None = None,
) -> Solver:
    """The strategy solver's work around a built ``strategy``: rewrite the sample's context
    with the strategy's choice, then answer.

    The strategy chooses (``checked_select``); its picks are checked against
    the bank it was shown, an answer it hands back against the model calls it made, and a
    sample it changed fails naming it. What its prompt exposed (``exposure``) is recorded
    beside what it declared. With a ``guard``, which checks both, a selection it drops
    picks from is made again by the strategy from the picks it kept, so that the prompt,
    which the strategy writes, holds only those. The record is then sealed
    (``selection.seal``): a later change fails the sample when it is scored.
    """

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        before, target = copy.deepcopy(state.metadata), list(state.target.target)
        events = transcript().events
        calls: list[Call] = []

        async def choose(task: MemoryTask) -> Selection:
            start = len(events)
            selection = await checked_select(strategy, task)
            changed = changed_fields(before, state, target)
            if changed:
                raise StrategyError(
                    f"strategy {strategy.name!r} changed the sample it runs in "
                    f"({', '.join(changed)})"
                )
            check_picks(strategy.name, selection.picks, task.memories)
            ranked = [Pick(key) for key in selection.ranking or ()]
            check_picks(strategy.name, ranked, task.memories, "ranked")
            calls.extend(calls_of(events[start:]))
            check_output(strategy.name, selection, calls)
            return selection

        meta = state.metadata_as(CausalLocomoMetadata)
        strategy.check_protocol(named_protocol(meta.protocol))  # one line, for every sample
        task = memory_task(state, answer_scorer)
        DATA_FILE.set(meta.data_file)
        shown = {m.key: m.content for m in task.memories}
        selection = await choose(task)
        seen = exposed(shown, selection.prompt, calls, task.request)
        record = state.store_as(MemorySelection)
        if guard is not None:
            declared = [p.key for p in selection.picks]
            picks = [*selection.picks, *(Pick(k) for k in seen if k not in declared)]
            start = time.perf_counter()
            dropped = await guard.drops(task, picks)
            record.guard = GuardRecord(
                guard=guard.name,
                checked=[p.key for p in picks],
                dropped=dropped,
                seconds=time.perf_counter() - start,
            )
            if dropped:
                kept = {p.key for p in picks} - dropped.keys()
                memories = [m for m in task.memories if m.key in kept]
                selection = await choose(dataclasses.replace(task, memories=memories))
                seen = exposed(shown, selection.prompt, calls, task.request)
        record.strategy = strategy.name
        record.selected = [p.key for p in selection.picks]
        record.scores = [p.score for p in selection.picks]
        if selection.ranking is not None:
            record.ranking = selection.ranking[:RANKING_DEPTH]
        record.exposed = seen
        record.prompt_sha256 = digest(selection.prompt)
        record.details = selection.details.model_dump(mode="json") if selection.details else {}
        record.explanation = strategy.explain(record.details, placeholders(shown))
        record.isolation = strategy.sandbox
        seal(record)
        state.messages = [ChatMessageUser(content=selection.prompt)]
        if selection.output is None:
            return await generate(state)
        state.output = selection.output
        state.messages.append(selection.output.message)
        return state

    return solve
