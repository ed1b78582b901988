"""Protocol views of the memory bank."""

from __future__ import annotations

from cmi_inspect.data import MemoryRecord
from cmi_inspect.view import Memory, blind_key, key_to_memory_id, memory_view

BANK = [
    MemoryRecord(memory_id="gold_00", content="A", timestamp=1, scope="Priya", label="useful"),
    MemoryRecord(memory_id="harm_00", content="B", timestamp=2, scope="Priya", label="harmful"),
]


def test_paper_view_shows_what_the_reference_showed():
    view = memory_view("ex", BANK, "paper")
    assert view[0] == Memory("gold_00", "A", 1, "Priya", "useful")
    assert view[1].line() == "[harm_00] B [scope: Priya] [label: harmful]"


def test_blind_view_hides_ids_labels_and_scope():
    view = memory_view("ex", BANK, "blind")
    assert {m.key for m in view} == {blind_key("ex", "gold_00"), blind_key("ex", "harm_00")}
    assert all(m.label is None and m.scope is None for m in view)
    assert [m.key for m in view] == sorted(m.key for m in view)
    for m in view:
        assert "gold" not in m.line() and "harm" not in m.line() and "label" not in m.line()


def test_blind_keys_differ_across_examples_and_map_back():
    assert blind_key("a", "gold_00") != blind_key("b", "gold_00")
    mapping = key_to_memory_id("ex", BANK, "blind")
    assert sorted(mapping.values()) == ["gold_00", "harm_00"]
    assert key_to_memory_id("ex", BANK, "paper") == {"gold_00": "gold_00", "harm_00": "harm_00"}
