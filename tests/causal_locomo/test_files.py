"""Reading a data file: inline records, every bad input a clear error naming file, line
and field; XL v3's stores and the examples that reference them, expanded."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from cmi_inspect.causal_locomo.data import DataError
from cmi_inspect.causal_locomo.files import load_records

from conftest import SYNTHETIC


def _write_lines(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _synthetic_lines() -> list[str]:
    return SYNTHETIC.read_text(encoding="utf-8").splitlines()


def test_invalid_json_names_file_and_line(tmp_path):
    lines = _synthetic_lines()
    lines[1] = lines[1][:-5]
    path = _write_lines(tmp_path, lines)
    with pytest.raises(DataError, match=rf"{path}, line 2: not valid JSON"):
        load_records(path)


def _edited(tmp_path: Path, line: int, edit) -> Path:
    """The synthetic file with record number ``line`` (0-based) changed by ``edit``."""
    lines = _synthetic_lines()
    record = json.loads(lines[line])
    edit(record)
    lines[line] = json.dumps(record)
    return _write_lines(tmp_path, lines)


@pytest.mark.parametrize(
    ("line", "edit", "message"),
    [
        (
            2,
            lambda r: r["current_task"].pop("instruction"),
            r"line 3, field 'current_task.instruction': Field required",
        ),
        (0, lambda r: r["memory_bank"][2].update(label="helpful"), r"line 1, field 'memory_bank\[2\].label'"),
        (0, lambda r: r["scoring_criteria"].update(max_words="sixty"), r"line 1, field 'scoring_criteria.max_words'"),
        (
            0,
            lambda r: r.update(gold_memory_ids=["gold_99"]),
            r"line 1, field 'gold_memory_ids\[0\]': 'gold_99' is not in memory_bank",
        ),
        (
            1,
            lambda r: r["memory_bank"][1].update(memory_id="gold_00"),
            r"line 2, field 'memory_bank\[1\].memory_id': duplicate",
        ),
        (2, lambda r: r.update(task_family="bogus"), r"line 3, field 'task_family': Input should be"),
    ],
    ids=["missing field", "bad label", "wrong type", "unknown gold id", "duplicate memory id", "unknown family"],
)
def test_bad_field_names_file_line_and_field(tmp_path, line, edit, message):
    path = _edited(tmp_path, line, edit)
    with pytest.raises(DataError, match=rf"{path}, {message}"):
        load_records(path)


def test_duplicate_id_is_rejected(tmp_path):
    lines = _synthetic_lines()
    path = _write_lines(tmp_path, [lines[0], lines[0]])
    with pytest.raises(DataError, match=r"line 2, field 'example_id': duplicate"):
        load_records(path)


def test_blank_lines_are_skipped(tmp_path):
    path = _write_lines(tmp_path, ["", *_synthetic_lines(), ""])
    assert len(load_records(path)) == 3


def test_a_byte_order_mark_is_accepted(tmp_path):
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + SYNTHETIC.read_bytes())
    assert [r.example_id for r in load_records(path)] == [r.example_id for r in load_records(SYNTHETIC)]


def test_text_that_is_not_utf8_names_file_and_line(tmp_path):
    lines = _synthetic_lines()
    path = tmp_path / "latin1.jsonl"
    path.write_bytes("\n".join(lines[:2]).encode() + b"\n" + lines[2].replace("Priya", "Andr\u00e9").encode("latin-1"))
    with pytest.raises(DataError, match=rf"{path}, line 3: not UTF-8 text"):
        load_records(path)


def test_relative_paths_are_read_from_where_the_user_ran_the_command(tmp_path, monkeypatch):
    (tmp_path / "mine").mkdir()
    shutil.copy(SYNTHETIC, tmp_path / "mine" / "data.jsonl")
    monkeypatch.setenv("PWD", str(tmp_path))  # the shell's directory; the process is elsewhere
    assert len(load_records("mine/data.jsonl")) == 3
    with pytest.raises(DataError, match=rf"No such data file: {tmp_path}/mine/missing.jsonl"):
        load_records("mine/missing.jsonl")
