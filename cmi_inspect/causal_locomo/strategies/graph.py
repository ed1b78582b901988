"""Top-k memories by their links, in a memory / scope / concept graph, to the request.

A memory links to its scope node and to a concept node for each of its
tokens longer than three characters. Its score is the number of its concept
neighbours that occur in the request, plus 1 if one of its scope nodes does,
plus the Jaccard overlap of request and memory tokens. The ``blind`` protocol
hides the scope field, so scope nodes there are the capitalised words
(names) of the memory's own text.
"""

from __future__ import annotations

import re

from cmi_inspect.causal_locomo.prompts import memory_prompt
from cmi_inspect.causal_locomo.selection import RANKING_DEPTH
from cmi_inspect.causal_locomo.strategies.base import MemoryStrategy, MemoryTask, Pick, Selection
from cmi_inspect.causal_locomo.strategies.vector import RetrievalDetails
from cmi_inspect.causal_locomo.view import Memory
from cmi_inspect.errors import positive_int
from cmi_inspect.retrieval import jaccard, top_k
from cmi_inspect.text import tokens

_NAME = re.compile(r"\b[A-Z][a-z]+\b")


def scope_nodes(memory: Memory) -> set[str]:
    if memory.scope is not None:
        return set(tokens(memory.scope))
    return {name.lower() for name in _NAME.findall(memory.content)}


def concept_nodes(memory: Memory) -> set[str]:
    return {t for t in tokens(memory.content) if len(t) > 3}


def graph_score(request: str, memory: Memory) -> float:
    query = set(tokens(request))
    linked = len(concept_nodes(memory) & query)
    in_scope = 1.0 if scope_nodes(memory) & query else 0.0
    return linked + in_scope + jaccard(request, memory.content)


class GraphMemory(MemoryStrategy):
    """Answer from the top-k memories of the memory / scope / concept graph.

    Args:
        top_k: Memories to select.
    """

    name = "graph_memory"

    def __init__(self, top_k: int = 3) -> None:
        self.k = positive_int("top_k", top_k)

    async def select(self, task: MemoryTask) -> Selection:
        scores = [graph_score(task.request, m) for m in task.memories]
        ranking = top_k(task.memories, scores, max(self.k, RANKING_DEPTH))
        ranked = ranking[: self.k]
        return Selection(
            picks=[Pick(m.key, s) for m, s in ranked],
            prompt=memory_prompt(task.request, [m.line() for m, _ in ranked]),
            details=RetrievalDetails(top_k=self.k),
            ranking=[m.key for m, _ in ranking],
        )
