"""reflection_memory: label reflections (paper), conflict cautions (blind)."""

from __future__ import annotations

from cmi_inspect.causal_locomo.strategies.reflection import (
    ReflectionMemory,
    blind_reflections,
    conflicts,
    labelled_reflection,
)
from cmi_inspect.causal_locomo.view import Memory

from conftest import memory_task_for


def test_labelled_reflections():
    assert labelled_reflection(Memory("a", "X.", 1, label="useful")) == "Lesson: X."
    assert labelled_reflection(Memory("a", "X.", 1, label="harmful")).startswith("Safety lesson:")
    assert labelled_reflection(Memory("a", "X.", 1, label="irrelevant")) == "Context note: X."


def test_conflicts_need_same_wording_and_different_values():
    a = Memory("a", "Jon lost his job on 19 January, 2023.", 1)
    b = Memory("b", "Jon lost his job on 20 January, 2023.", 7)
    c = Memory("c", "Jon opened a dance studio.", 2)
    assert conflicts(a, b) and not conflicts(a, c) and not conflicts(a, a)
    assert [r.split(":")[0] for r in blind_reflections([a, b, c])] == [
        "Caution, another note disagrees with this one",
        "Caution, another note disagrees with this one",
        "Note from session 2",
    ]


async def test_paper_selects_by_bag_of_words(synthetic_records):
    selection = await ReflectionMemory(top_k=2).select(memory_task_for(synthetic_records[0]))
    assert [p.key for p in selection.picks] == ["gold_00", "harm_00"]
    assert "[gold_00] Lesson: Priya adopted" in selection.prompt
    assert "[harm_00] Safety lesson:" in selection.prompt


async def test_blind_uses_no_label(synthetic_records):
    task = memory_task_for(synthetic_records[0], protocol="blind")
    selection = await ReflectionMemory(top_k=2).select(task)
    assert len(selection.picks) == 2
    assert "Lesson" not in selection.prompt and "label" not in selection.prompt
    assert selection.prompt.count("Caution, another note disagrees") == 2


async def test_the_ranking_goes_on_past_the_picks_in_score_order(synthetic_records):
    selection = await ReflectionMemory(top_k=1).select(memory_task_for(synthetic_records[0]))
    assert selection.ranking is not None and selection.ranking[:2] == ["gold_00", "harm_00"]
    assert [p.key for p in selection.picks] == ["gold_00"]


def test_blind_reflections_caution_exactly_the_memories_another_conflicts_with():
    texts = ["Priya made her first bowl on 3 March 2023.", "Priya made her first bowl on 5 May 2023.",
             "Tomas rides to Porto.", "Tomas rides to Porto."]  # fmt: skip
    memories = [Memory(f"m{i}", t, i) for i, t in enumerate(texts)]
    found = blind_reflections(memories)
    for m, reflection in zip(memories, found, strict=True):
        cautioned = any(conflicts(m, o) for o in memories if o is not m)
        assert reflection.startswith("Caution") == cautioned
    assert [r.startswith("Caution") for r in found] == [True, True, False, False]
