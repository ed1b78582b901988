"""graph_memory: concept links + scope + Jaccard."""

from __future__ import annotations

import pytest
from cmi_inspect.causal_locomo.strategies.graph import GraphMemory, graph_score, scope_nodes
from cmi_inspect.causal_locomo.view import Memory

from conftest import memory_task_for


def test_score_components():
    m = Memory("x", "Priya adopted the greyhound Comet.", 1, scope="Priya")
    request = "When did Priya adopt the greyhound Comet?"
    # concepts in the request: priya, greyhound, comet (adopted != adopt); scope hit; Jaccard 4/8
    assert graph_score(request, m) == pytest.approx(3 + 1 + 4 / 8)


def test_scope_and_concepts_outrank_a_stranger():
    request = "Which two instruments does Marco play?"
    shares = Memory("a", "Marco plays instruments in an orchestra.", 1, scope="Marco")
    stranger = Memory("b", "Priya keeps a garden.", 1, scope="Priya")
    assert graph_score(request, shares) > graph_score(request, stranger)


def test_blind_scope_comes_from_names_in_the_text():
    assert scope_nodes(Memory("k", "Marco met Priya in Rome.", 1)) == {"marco", "priya", "rome"}
    assert scope_nodes(Memory("k", "text", 1, scope="Jon")) == {"jon"}


async def test_selects_top_k_in_score_order(synthetic_records):
    selection = await GraphMemory(top_k=2).select(memory_task_for(synthetic_records[1]))
    # both: concept "marco" + scope; gold_01 has the higher Jaccard (1/12 vs 1/13)
    assert [p.key for p in selection.picks] == ["gold_01", "gold_00"]
    assert [p.score for p in selection.picks] == [2 + 1 / 12, 2 + 1 / 13]


async def test_ties_break_by_bank_order(synthetic_records):
    record = synthetic_records[0].model_copy(deep=True)
    for m in record.memory_bank:
        m.content, m.scope = "unrelated words", "Nobody"
    selection = await GraphMemory(top_k=2).select(memory_task_for(record))
    assert [p.key for p in selection.picks] == ["gold_00", "irr_00"]


async def test_the_ranking_goes_on_past_the_picks_in_score_order(synthetic_records):
    selection = await GraphMemory(top_k=1).select(memory_task_for(synthetic_records[1]))
    assert selection.ranking is not None and selection.ranking[:2] == ["gold_01", "gold_00"]
    assert len(selection.ranking) == len(synthetic_records[1].memory_bank)
