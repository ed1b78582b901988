"""Reading a data file: inline records, every bad input a clear error naming file, line
and field; XL v3's stores and the examples that reference them, expanded."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from cmi_inspect.causal_locomo.data import DataError
from cmi_inspect.causal_locomo.data_files import load_records

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


def _stored(tmp_path: Path, examples: list[dict] | None = None, store_first: bool = True) -> Path:
    """A stored file in XL v3's form: one store of three memories, then its examples."""
    store = {
        "store_id": "conv-x",
        "past_sessions": [
            {
                "session_id": "s1",
                "timestamp": 1,
                "date_time": "1:00 pm on 8 May, 2023",
                "content": "Session date/time: 1:00 pm on 8 May, 2023.\nD1:1 Ana: I adopted a cat.\nD1:2 Ben: Nice!",
            }
        ],
        "memory_store": [
            {"memory_id": f"D1:{i}", "content": text, "label": "irrelevant", "timestamp": 1}
            for i, text in enumerate(["Ana adopted a cat.", "Ben said nice.", "Ana adopted a dog."], start=1)
        ],
    }
    base = {
        "store_id": "conv-x",
        "task_family": "factual_memory_qa",
        "current_task": {"instruction": "What pet did Ana adopt?"},
        "scoring_criteria": {"expected_answer": "a cat"},
        "source_sample_id": "conv-x",
    }
    examples = examples or [
        {**base, "example_id": "conv-x_qa_0000", "memory_labels": {"D1:1": "useful", "D1:3": "harmful"},
         "attack_kinds": {"D1:3": "stale"}},
        {**base, "example_id": "conv-x_qa_0001", "memory_labels": {}},
    ]  # fmt: skip
    lines = [json.dumps(store), *map(json.dumps, examples)]
    return _write_lines(tmp_path, lines if store_first else lines[1:] + lines[:1])


def test_a_stored_example_expands_into_the_release_schema(tmp_path):
    first, second = load_records(_stored(tmp_path))
    assert [m.memory_id for m in first.memory_bank] == ["D1:1", "D1:2", "D1:3"]  # the store's order
    assert [m.label for m in first.memory_bank] == ["useful", "irrelevant", "harmful"]
    assert first.memory_bank[2].attack_kind == "stale" and first.memory_bank[0].attack_kind is None
    assert first.gold_memory_ids == ["D1:1"] and first.bad_memory_ids == ["D1:2", "D1:3"]
    assert first.past_sessions[0].session_id == "s1" and first.dated_by_source
    assert second.gold_memory_ids == [] and {m.label for m in second.memory_bank} == {"irrelevant"}
    assert first.model_extra and first.model_extra["source_sample_id"] == "conv-x"
    assert "memory_labels" not in first.model_dump() and "store_id" not in first.model_dump()


def test_stored_examples_share_their_store_memories_unless_they_label_them(tmp_path):
    first, second = load_records(_stored(tmp_path))
    assert first.memory_bank[1] is second.memory_bank[1]  # unlabelled: one object for both
    assert first.memory_bank[0] is not second.memory_bank[0]  # labelled: its own copy
    assert first.past_sessions[0] is second.past_sessions[0]


def test_a_stored_file_names_what_it_cannot_expand(tmp_path):
    with pytest.raises(DataError, match=r"line 1, field 'store_id': no store 'conv-x' on an earlier line"):
        load_records(_stored(tmp_path, store_first=False))
    bad = [{"example_id": "e", "store_id": "conv-x", "task_family": "factual_memory_qa",
            "current_task": {"instruction": "q"}, "scoring_criteria": {"expected_answer": "a"},
            "memory_labels": {"D9:9": "useful"}}]  # fmt: skip
    with pytest.raises(DataError, match=r"line 2, field 'memory_labels.D9:9': not a memory of store"):
        load_records(_stored(tmp_path, bad))
    bad[0]["memory_labels"] = {"D1:1": "helpful"}
    with pytest.raises(DataError, match=r"line 2, field 'memory_labels.D1:1'"):
        load_records(_stored(tmp_path, bad))
