"""Protocol views of the memory bank."""

from __future__ import annotations

from cmi_inspect.causal_locomo.data import MemoryRecord
from cmi_inspect.causal_locomo.view import Memory, blind_keys, key_to_memory_id, memory_view

BANK = [
    MemoryRecord(
        memory_id="gold_00",
        content="Met on 3 May. Resolved temporal answer: 3 May.",
        timestamp=1,
        scope="Priya",
        label="useful",
    ),
    MemoryRecord(memory_id="harm_00", content="B", timestamp=9, scope="Priya", label="harmful"),
]


def test_paper_view_shows_what_the_reference_showed():
    view = memory_view("ex", BANK, "paper")
    assert view[0] == Memory("gold_00", BANK[0].content, 1, "Priya", "useful")
    assert view[1].line() == "[harm_00] B [scope: Priya] [label: harmful]"


def test_blind_view_hides_ids_labels_scope_and_artefacts():
    view = memory_view("ex", BANK, "blind", session_timestamps=[1, 2, 3])
    assert sorted(m.key for m in view) == ["m1", "m2"] and [m.key for m in view] == ["m1", "m2"]
    assert all(m.label is None and m.scope is None for m in view)
    for m in view:
        assert "gold" not in m.line() and "harm" not in m.line() and "label" not in m.line()
        assert "Resolved" not in m.content and m.timestamp <= 3  # no answer suffix, no date after the history
    assert {m.content for m in view} == {"Met on 3 May.", "B"}


def test_blind_keys_are_distinct_in_any_bank():
    # 20,000 memories: six hex digits of a hash (the old keys) collide here almost surely
    bank = [MemoryRecord(memory_id=f"x{i}", content="", timestamp=0, label="irrelevant") for i in range(20_000)]
    assert len(set(blind_keys("ex", bank).values())) == len(bank)


def test_blind_keys_differ_across_examples_and_map_back(real_records):
    orders = {tuple(blind_keys(r.example_id, r.memory_bank).items()) for r in real_records[:20]}
    assert len(orders) > 1  # the hash order depends on the example
    mapping = key_to_memory_id("ex", BANK, "blind")
    assert sorted(mapping.values()) == ["gold_00", "harm_00"]
    assert key_to_memory_id("ex", BANK, "paper") == {"gold_00": "gold_00", "harm_00": "harm_00"}
    for r in real_records:
        keys = blind_keys(r.example_id, r.memory_bank)
        assert len(set(keys.values())) == len(r.memory_bank)
