"""view_screenshot: which rows of View's list, or of a run's samples, show nothing where they must."""

from __future__ import annotations

from benchmarks.view_screenshot import SAMPLE_COMPLETE, incomplete


def test_a_run_missing_a_filled_column_is_named_with_the_column():
    header = ["TASK", "MODEL", "TASK ARGS", "TAGS", "SCORE", "SAMPLES", "TOKENS"]
    shown = ["causal_locomo", "gguf/smollm2", 'protocol="blind"', "cmi (blind)", "0.5", "3", "431"]
    untagged = [*shown[:3], "-", *shown[4:]]
    assert incomplete([header, shown, untagged]) == ["causal_locomo | gguf/smollm2: TAGS"]


def test_a_sample_without_its_target_and_a_list_without_the_column_are_named():
    rows = [["", "ID", "TARGET"], ["", "conv-26_qa_0000", "7 May 2023"], ["", "conv-42_qa_0000", ""]]
    assert incomplete(rows, SAMPLE_COMPLETE) == ["conv-42_qa_0000: TARGET"]
    assert incomplete([["", "ID", "ANSWER"]], SAMPLE_COMPLETE) == ["no TARGET column"]
