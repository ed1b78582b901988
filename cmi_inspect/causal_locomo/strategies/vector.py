"""Top-k memories by embedding cosine similarity to the request."""

from __future__ import annotations

from pydantic import BaseModel

from cmi_inspect.causal_locomo.prompts import memory_prompt
from cmi_inspect.causal_locomo.selection import RANKING_DEPTH
from cmi_inspect.causal_locomo.strategies.base import MemoryStrategy, MemoryTask, Pick, Selection
from cmi_inspect.errors import positive_int
from cmi_inspect.retrieval import make_embedder, top_k


class RetrievalDetails(BaseModel):
    """How many memories a top-k retriever kept."""

    top_k: int


class VectorDetails(RetrievalDetails):
    embedder: str


class VectorMemory(MemoryStrategy):
    """Answer from the top-k memories by embedding cosine similarity.

    Args:
        top_k: Memories to select.
        embedder: ``e5`` (multilingual-e5-small, embedded, offline), ``hashing``
            (character n-grams, no model) or ``openai`` (text-embedding-3-large).
    """

    name = "vector_memory"

    def __init__(self, top_k: int = 3, embedder: str = "e5") -> None:
        self.k = positive_int("top_k", top_k)
        self.embedder = make_embedder(embedder)

    async def select(self, task: MemoryTask) -> Selection:
        scores = await self.embedder.cosine(task.request, [m.content for m in task.memories])
        ranking = top_k(task.memories, list(scores), max(self.k, RANKING_DEPTH))
        ranked = ranking[: self.k]
        return Selection(
            picks=[Pick(m.key, s) for m, s in ranked],
            prompt=memory_prompt(task.request, [m.line() for m, _ in ranked]),
            details=VectorDetails(top_k=self.k, embedder=self.embedder.name),
            ranking=[m.key for m, _ in ranking],
        )
