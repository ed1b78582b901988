"""The answer prompts, their memory lines, and versions derived from their text."""

from __future__ import annotations

from cmi_inspect.causal_locomo.prompts import (
    PROMPT_VERSION,
    memory_line,
    memory_prompt,
    no_memory_prompt,
    note_contents,
    prompt_version,
)


def test_memory_prompt_without_notes_is_the_no_memory_prompt():
    assert memory_prompt("When?", []) == no_memory_prompt("When?")


def test_note_contents_reads_back_what_memory_line_wrote():
    lines = [memory_line("gold_00", "Priya adopted Comet.", "Priya", "useful"), memory_line("m1", "A [b] c")]
    assert note_contents(memory_prompt("When?", lines)) == ["Priya adopted Comet.", "A [b] c"]
    assert note_contents(no_memory_prompt("When?")) == []


def test_versions_follow_the_text():
    assert prompt_version("a", "b") == prompt_version("a", "b")
    assert prompt_version("a", "b") != prompt_version("a", "c")
    assert prompt_version("ab") != prompt_version("a", "b")
    assert PROMPT_VERSION.startswith("answer-") and len(PROMPT_VERSION) == len("answer-") + 10
