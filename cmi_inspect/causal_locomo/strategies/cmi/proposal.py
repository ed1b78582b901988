"""CMI's candidates: the top k memories by a weighted proposal score (``ProposalWeights``)."""

from __future__ import annotations

from cmi_inspect.causal_locomo.strategies.base import MemoryTask
from cmi_inspect.causal_locomo.strategies.cmi.profiles import ProposalWeights
from cmi_inspect.causal_locomo.view import Memory
from cmi_inspect.retrieval import Embedder, jaccard, min_max, top_k


def proposal_scores(
    cosines: list[float], memories: list[Memory], request: str, weights: ProposalWeights
) -> list[float]:
    """Weighted cosine mapped to [0, 1], min-max recency and token Jaccard, per memory."""
    ages = min_max([float(m.timestamp) for m in memories])
    return [
        weights.cosine * (c + 1) / 2
        + weights.recency * r
        + weights.jaccard * jaccard(request, m.content)
        for c, r, m in zip(cosines, ages, memories, strict=True)
    ]


async def propose(
    task: MemoryTask, embedder: Embedder, weights: ProposalWeights, k: int
) -> list[tuple[Memory, float]]:
    """The k best memories of the task's bank, each with its proposal score."""
    cosines = await embedder.cosine(task.request, [m.content for m in task.memories])
    scores = proposal_scores(list(cosines), task.memories, task.request, weights)
    return top_k(task.memories, scores, k)
