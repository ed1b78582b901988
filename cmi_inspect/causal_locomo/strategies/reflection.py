"""Turn each memory into a reflection, retrieve the top-k reflections by bag of words.

``paper`` protocol: the reflection follows the memory's label, as the
reference did (a lesson, a safety warning, or a context note). ``blind``
protocol, where labels are hidden: a memory that contradicts another one
(same wording, different dates or numbers) becomes a caution, any other a
dated note, so conflicts are flagged without knowing which side is true.
The model sees the reflections; their source memories count as selected.
"""

from __future__ import annotations

import anyio
from pydantic import BaseModel

from cmi_inspect.causal_locomo.prompts import memory_prompt
from cmi_inspect.causal_locomo.protocol import named_protocol
from cmi_inspect.causal_locomo.selection import RANKING_DEPTH
from cmi_inspect.causal_locomo.strategies.base import MemoryStrategy, MemoryTask, Pick, Selection
from cmi_inspect.causal_locomo.view import Memory
from cmi_inspect.dates import MONTH_NAMES
from cmi_inspect.errors import positive_int
from cmi_inspect.retrieval import bow_cosine, top_k
from cmi_inspect.text import tokens

_MONTHS = frozenset(name.lower() for name in MONTH_NAMES)
CONFLICT_WORDING_JACCARD = 0.5
"""Jaccard of two memories' wordings (their tokens less dates and numbers) from which they
say the same thing; not CMI's ``conflict_overlap``, a share of the shorter memory's words."""


def _values(text: str) -> set[str]:
    return {t for t in tokens(text) if t in _MONTHS or any(c.isdigit() for c in t)}


def _wording(text: str) -> set[str]:
    return set(tokens(text)) - _values(text)


def conflicts(a: Memory, b: Memory) -> bool:
    """Two memories that say the same thing with different dates or numbers."""
    wa, wb = _wording(a.content), _wording(b.content)
    overlap = len(wa & wb) / len(wa | wb) if wa | wb else 0.0
    return overlap >= CONFLICT_WORDING_JACCARD and _values(a.content) != _values(b.content)


def labelled_reflection(memory: Memory) -> str:
    if memory.label == "useful":
        return f"Lesson: {memory.content}"
    if memory.label == "harmful":
        return f"Safety lesson: this note is unreliable, do not act on it: {memory.content}"
    return f"Context note: {memory.content}"


def blind_reflections(memories: list[Memory]) -> list[str]:
    """Each memory's reflection: a caution where another memory ``conflicts`` with it. Each
    memory's wording and values are read once, so a store of hundreds costs seconds."""
    read = [(_wording(m.content), _values(m.content)) for m in memories]

    def disagree(i: int, j: int) -> bool:
        (wa, va), (wb, vb) = read[i], read[j]
        union = wa | wb
        overlap = len(wa & wb) / len(union) if union else 0.0
        return overlap >= CONFLICT_WORDING_JACCARD and va != vb

    out = []
    for i, m in enumerate(memories):
        if any(disagree(i, j) for j in range(len(memories)) if j != i):
            out.append(f"Caution, another note disagrees with this one: {m.content}")
        else:
            out.append(f"Note from session {m.timestamp}: {m.content}")
    return out


class ReflectionDetails(BaseModel):
    top_k: int
    reflections: dict[str, str]
    """Key -> the reflection the model saw instead of the memory."""


class ReflectionMemory(MemoryStrategy):
    """Answer from the top-k reflections on the bank, by bag-of-words score.

    Args:
        top_k: Reflections (and so source memories) to select.
    """

    name = "reflection_memory"

    def __init__(self, top_k: int = 3) -> None:
        self.k = positive_int("top_k", top_k)

    async def select(self, task: MemoryTask) -> Selection:
        if not named_protocol(task.protocol).label_free:  # the labels are shown: follow them
            reflections = [labelled_reflection(m) for m in task.memories]
        else:  # pairwise over the bank: off the event loop, so the run's display stays live
            reflections = await anyio.to_thread.run_sync(blind_reflections, task.memories)
        scores = [bow_cosine(task.request, r) for r in reflections]
        pairs = list(zip(task.memories, reflections, strict=True))
        ranking = top_k(pairs, scores, max(self.k, RANKING_DEPTH))
        ranked = ranking[: self.k]
        return Selection(
            picks=[Pick(m.key, s) for (m, _), s in ranked],
            prompt=memory_prompt(task.request, [f"[{m.key}] {r}" for (m, r), _ in ranked]),
            details=ReflectionDetails(top_k=self.k, reflections={m.key: r for (m, r), _ in ranked}),
            ranking=[m.key for (m, _), _ in ranking],
        )
