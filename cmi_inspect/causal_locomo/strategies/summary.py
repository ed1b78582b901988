"""Show one synthetic "summary" memory built from the bank; the whole bank counts as selected.

``llm`` (default) has the ``summarizer`` model role, or else the response model,
write the summary; ``concat`` joins the first eight memory contents as the
reference code did. A bank whose notes do not fit the summarizer's window in one request
(a conversation's whole store) is summarised in chunks that do, and the chunks' summaries
summarised in turn until one request holds them: the notes are then taken in an order no
sample changes (date, then text), and the store's summary (its chunking included) and each
request are made once per run, so every sample of one store shares them.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from inspect_ai.model import GenerateConfig, Model, get_model
from pydantic import BaseModel

from cmi_inspect.causal_locomo.prompts import memory_prompt
from cmi_inspect.causal_locomo.strategies.base import MemoryStrategy, MemoryTask, Pick, Selection
from cmi_inspect.causal_locomo.strategies.full_history import fits, window
from cmi_inspect.errors import choose

SUMMARY_MODES = ("llm", "concat")
CONCAT_LIMIT = 8
SUMMARY_MAX_TOKENS = 160


def summary_request(lines: Sequence[str]) -> str:
    notes = "\n".join(f"- {line}" for line in lines)
    return (
        "Summarise the notes below in a short paragraph. Keep every name, date, "
        f"number and fact; add nothing.\n\nNotes:\n{notes}\n\nSummary:"
    )


class SummaryDetails(BaseModel):
    mode: str
    summary: str
    requests: int = 1
    """Summarising requests behind the summary: 1 when the bank fits one request, else the
    chunks' and the rounds' that reduced them (shared by every sample of the store)."""


@dataclass
class _Shared:
    """A piece of summarising work and how many samples await it now."""

    future: asyncio.Future[tuple[str, int]]
    waiters: int = 0


_MADE: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[str, ...], _Shared]] = (
    weakref.WeakKeyDictionary()
)
"""The summarising work of a run's event loop (each request, and each store's whole summary,
chunking included), by model and input: samples of one store await the same instead of
repeating it."""


async def _shared(
    key: tuple[str, ...], make: Callable[[], Awaitable[tuple[str, int]]]
) -> tuple[str, int]:
    """``make()``'s result, made once for every sample that asks with ``key`` meanwhile or
    later; a failure is made again by the next sample, and work no sample awaits any more
    (each that did was cancelled: Ctrl-C, a time limit) stops rather than runs on."""
    made = _MADE.setdefault(asyncio.get_running_loop(), {})
    if key not in made:
        made[key] = _Shared(asyncio.ensure_future(make()))
    shared = made[key]
    shared.waiters += 1
    try:
        return await asyncio.shield(shared.future)
    except BaseException:
        if shared.future.done() or shared.waiters == 1:
            shared.future.cancel()
            if made.get(key) is shared:
                del made[key]
        raise
    finally:
        shared.waiters -= 1


async def _summarise(model: Model, lines: Sequence[str]) -> str:
    prompt = summary_request(lines)

    async def ask() -> tuple[str, int]:
        config = GenerateConfig(max_tokens=SUMMARY_MAX_TOKENS)
        return (await model.generate(prompt, config=config)).completion.strip(), 1

    return (await _shared(("request", str(model), prompt), ask))[0]


async def chunks(model: Model, notes: Sequence[str], budget: int) -> list[list[str]]:
    """``notes`` in order, cut into the fewest runs whose summarising request fits ``budget``
    tokens (a note too long for a request alone is a run of its own)."""
    runs: list[list[str]] = []
    start = 0
    while start < len(notes):
        lo, hi = start + 1, len(notes)  # the longest run from start that fits: binary search
        while lo < hi:
            mid = (lo + hi + 1) // 2
            fitting = await fits(model, summary_request(notes[start:mid]), budget)
            lo, hi = (mid, hi) if fitting else (lo, mid - 1)
        runs.append(list(notes[start:lo]))
        start = lo
    return runs


async def store_summary(model: Model, notes: Sequence[str], budget: int) -> tuple[str, int]:
    """One summary of ``notes``: each chunk summarised, then the summaries, until one
    request holds them; with the number of requests made for it. Made once a run for every
    sample of the store (its chunking too, which reads many token counts)."""
    key = ("store", str(model), str(budget), *notes)
    return await _shared(key, lambda: _reduce(model, notes, budget))


async def _reduce(model: Model, notes: Sequence[str], budget: int) -> tuple[str, int]:
    requests = 0
    while True:
        runs = await chunks(model, notes, budget)
        summaries = await asyncio.gather(*(_summarise(model, run) for run in runs))
        requests += len(runs)
        if len(runs) == 1:
            return summaries[0], requests
        notes = list(summaries)


class SummaryMemory(MemoryStrategy):
    """Answer from one summary of the bank.

    Args:
        mode: ``llm`` (written by the ``summarizer`` role, else the response model; a bank
            too large for one request is summarised in chunks) or ``concat`` (the reference
            code's first eight memories joined).
    """

    name = "summary_memory"

    def __init__(self, mode: str = "llm") -> None:
        self.mode = choose("summary mode", mode, SUMMARY_MODES)

    async def select(self, task: MemoryTask) -> Selection:
        requests = 0
        if self.mode == "concat":
            summary = " ".join(m.content for m in task.memories[:CONCAT_LIMIT])
        else:
            summarizer = get_model(role="summarizer", default=task.model)
            lines = [m.line() for m in task.memories]
            budget = window(summarizer, SUMMARY_MAX_TOKENS)
            if await fits(summarizer, summary_request(lines), budget):
                summary, requests = await _summarise(summarizer, lines), 1
            else:  # the notes without their per-sample keys, in an order no sample changes
                ordered = sorted(task.memories, key=lambda m: (m.timestamp, m.content))
                notes = [m.content for m in ordered]
                summary, requests = await store_summary(summarizer, notes, budget)
        return Selection(
            picks=[Pick(m.key) for m in task.memories],
            prompt=memory_prompt(task.request, [f"[summary] {summary}"]),
            details=SummaryDetails(mode=self.mode, summary=summary, requests=requests),
        )
