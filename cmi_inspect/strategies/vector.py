"""Top-k memories by embedding cosine similarity to the request."""

from __future__ import annotations

from cmi_inspect.prompts import memory_prompt
from cmi_inspect.retrieval import Embedder, top_k
from cmi_inspect.strategy import MemoryTask, Pick, Selection


class VectorMemory:
    name = "vector_memory"

    def __init__(self, embedder: Embedder, k: int = 3) -> None:
        self.embedder = embedder
        self.k = k

    async def select(self, task: MemoryTask) -> Selection:
        scores = await self.embedder.cosine(task.request, [m.content for m in task.memories])
        ranked = top_k(task.memories, list(scores), self.k)
        return Selection(
            picks=[Pick(m.key, s) for m, s in ranked],
            prompt=memory_prompt(task.request, [m.line() for m, _ in ranked]),
            details={"embedder": self.embedder.name, "top_k": self.k},
        )
