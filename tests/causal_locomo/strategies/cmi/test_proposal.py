"""CMI's proposal score and its top k."""

from __future__ import annotations

import pytest
from cmi_inspect.causal_locomo.strategies.cmi.profiles import HYBRID, RELEVANCE
from cmi_inspect.causal_locomo.strategies.cmi.proposal import proposal_scores, propose
from cmi_inspect.causal_locomo.view import Memory
from cmi_inspect.retrieval import HashingEmbedder

from conftest import memory_task_for

MEMORIES = [Memory("a", "Priya adopted Comet", 1), Memory("b", "other words", 3)]


def test_the_hybrid_proposal_is_the_references_formula():
    scores = proposal_scores([1.0, -1.0], MEMORIES, "Priya adopted Comet", HYBRID)
    assert scores == pytest.approx([0.7 + 0.0 + 0.1, 0.0 + 0.2 + 0.0])


def test_the_label_free_proposal_has_no_recency():
    scores = proposal_scores([1.0, -1.0], MEMORIES, "Priya adopted Comet", RELEVANCE)
    assert scores == pytest.approx([0.7 + 0.1, 0.0])


async def test_propose_keeps_the_k_best_in_score_order(synthetic_records):
    task = memory_task_for(synthetic_records[0])
    proposed = await propose(task, HashingEmbedder(), HYBRID, 2)
    assert len(proposed) == 2
    everything = await propose(task, HashingEmbedder(), HYBRID, len(task.memories))
    assert proposed == everything[:2] and [s for _, s in everything] == sorted((s for _, s in everything), reverse=True)
