"""Artefact control of the blind protocol: answer suffixes and label-free dates."""

from __future__ import annotations

from cmi_inspect.causal_locomo.blinding import blind_timestamps, strip_answer_suffix
from cmi_inspect.causal_locomo.data import MemoryRecord


def _memory(memory_id: str, label: str, timestamp: int, content: str = "") -> MemoryRecord:
    return MemoryRecord(
        memory_id=memory_id,
        label=label,  # type: ignore[arg-type]
        timestamp=timestamp,
        content=content or f"{memory_id} note",
    )


def test_both_suffix_forms_are_removed_and_the_rest_kept_byte_for_byte():
    temporal = "Jon lost his job on 19 January, 2023 (said “yesterday”). "
    assert strip_answer_suffix(temporal + "Resolved temporal answer: 19 January, 2023.") == (temporal.rstrip())
    other = "Nate plays with teammates. Resolved answer for the current question: C. S.Lewis.."
    assert strip_answer_suffix(other) == "Nate plays with teammates."


def test_text_without_the_suffix_is_unchanged():
    for text in ("", "  spaced  ", "He resolved to answer: later.", "Resolved, he left.\n"):
        assert strip_answer_suffix(text) == text


def test_release_suffixes_leave_only_a_prefix_of_useful_memories(real_records):
    changed = []
    for record in real_records:
        for memory in record.memory_bank:
            stripped = strip_answer_suffix(memory.content)
            assert memory.content.startswith(stripped)
            assert "Resolved" not in stripped
            if stripped != memory.content:
                changed.append(memory.label)
    assert len(changed) == 50 and set(changed) == {"useful"}


def test_only_harmful_and_late_memories_are_redated():
    bank = [
        _memory("a", "useful", 2, "Ana adopted a cat in May 2023."),
        _memory("b", "irrelevant", 1),
        _memory("c", "useful", 9),
        _memory("d", "harmful", 9, "Ana adopted a dog in May 2023."),
    ]
    shown = blind_timestamps("ex-1", bank, [1, 2, 3])
    assert shown["a"] == 2 and shown["b"] == 1
    assert shown["c"] == 3  # dated after the history: shown at its end
    assert shown["d"] in {1, 2, 3}


def test_harmful_dates_come_from_the_bank_and_are_stable():
    bank = [_memory(f"m{i}", "irrelevant", i) for i in range(1, 6)]
    bank.append(_memory("x", "harmful", 40))
    shown = blind_timestamps("ex-2", bank, [1, 2, 3, 4, 5])
    assert shown == blind_timestamps("ex-2", list(reversed(bank)), [5, 4, 3, 2, 1])
    draws = {blind_timestamps(f"ex-{n}", bank, [1, 2, 3, 4, 5])["x"] for n in range(40)}
    assert draws <= {1, 2, 3, 4, 5} and len(draws) > 2


def test_a_lone_harmful_memory_draws_a_past_session():
    shown = blind_timestamps("ex-3", [_memory("x", "harmful", 12)], [4, 7])
    assert shown["x"] in {4, 7}
    assert blind_timestamps("ex-3", [_memory("x", "harmful", 12)], []) == {"x": 12}


def test_no_release_memory_is_dated_after_its_history(real_records):
    for record in real_records:
        sessions = [s.timestamp for s in record.past_sessions]
        shown = blind_timestamps(record.example_id, record.memory_bank, sessions)
        assert max(shown.values()) <= max(sessions)
        for memory in record.memory_bank:
            if memory.label != "harmful":
                assert shown[memory.memory_id] == min(memory.timestamp, max(sessions))


def test_a_bank_dated_by_its_sources_keeps_every_date_within_the_history():
    bank = [
        _memory("u", "useful", 3, "Ana adopted a cat in May."),
        _memory("h", "harmful", 1, "Ana adopted a dog in May."),
        _memory("late", "irrelevant", 9),
    ]
    shown = blind_timestamps("ex", bank, [1, 2, 3, 4], keep_dates=True)
    assert shown == {"u": 3, "h": 1, "late": 4}  # the harmful memory keeps its own session
    assert blind_timestamps("ex", bank, [1, 2, 3, 4])["h"] in {3, 4}  # else a peer's date
