"""vector_memory: top-k by cosine, in score order."""

from __future__ import annotations

from cmi_inspect.causal_locomo.strategies.vector import VectorMemory

from conftest import memory_task_for


async def test_top_k_by_cosine(synthetic_records):
    task = memory_task_for(synthetic_records[0])
    selection = await VectorMemory(top_k=2, embedder="hashing").select(task)
    keys = [p.key for p in selection.picks]
    assert len(keys) == 2 and set(keys) <= {"gold_00", "harm_00"}
    scores = [p.score or 0.0 for p in selection.picks]
    assert None not in [p.score for p in selection.picks] and scores == sorted(scores, reverse=True)
    assert "[gold_00] Priya adopted the greyhound Comet on 3 March 2022." in selection.prompt
    assert "Marco" not in selection.prompt


async def test_ties_keep_bank_order(synthetic_records):
    record = synthetic_records[0].model_copy(deep=True)
    for m in record.memory_bank:
        m.content = "identical text"
    selection = await VectorMemory(top_k=3, embedder="hashing").select(memory_task_for(record))
    assert [p.key for p in selection.picks] == ["gold_00", "irr_00", "irr_01"]


async def test_top_k_larger_than_the_bank(synthetic_records):
    selection = await VectorMemory(top_k=10, embedder="hashing").select(memory_task_for(synthetic_records[2]))
    assert len(selection.picks) == 2


async def test_the_ranking_is_the_bank_by_cosine_and_its_top_k_are_the_picks(synthetic_records):
    task = memory_task_for(synthetic_records[0])
    selection = await VectorMemory(top_k=1, embedder="hashing").select(task)
    assert selection.ranking is not None and sorted(selection.ranking) == sorted(m.key for m in task.memories)
    assert selection.ranking[:1] == [p.key for p in selection.picks]
    wider = await VectorMemory(top_k=3, embedder="hashing").select(task)
    assert wider.ranking == selection.ranking and wider.ranking[:3] == [p.key for p in wider.picks]
