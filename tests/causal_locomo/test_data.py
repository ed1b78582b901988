"""Locating, verifying and parsing the release; every bad input ends in a clear error."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest
from cmi_inspect import paths
from cmi_inspect.causal_locomo import data
from cmi_inspect.causal_locomo.data import (
    DataError,
    Turn,
    causal_locomo_path,
    load_records,
    session_text,
    session_turns,
)

from conftest import SYNTHETIC


def test_release_statistics(real_records):
    assert len(real_records) == 87
    families = Counter(r.task_family for r in real_records)
    assert families == {
        "temporal_memory_qa": 46,
        "multi_evidence_memory_qa": 25,
        "inferential_memory_qa": 14,
        "factual_memory_qa": 2,
    }
    labels = Counter(m.label for r in real_records for m in r.memory_bank)
    assert labels == {"useful": 89, "irrelevant": 348, "harmful": 54}
    assert sum(len(r.past_sessions) for r in real_records) == 432


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


def test_local_copy_with_wrong_checksum(tmp_path, monkeypatch):
    target = tmp_path / data.CAUSAL_LOCOMO_PATH
    target.parent.mkdir(parents=True)
    target.write_text(SYNTHETIC.read_text())
    monkeypatch.setenv(data.DATA_DIR_ENV, str(tmp_path))
    with pytest.raises(DataError, match=rf"expected sha256 {data.CAUSAL_LOCOMO_SHA256}, found [0-9a-f]{{64}}"):
        causal_locomo_path()


def test_local_dir_without_the_file(tmp_path, monkeypatch):
    monkeypatch.setenv(data.DATA_DIR_ENV, str(tmp_path))
    with pytest.raises(DataError, match=r"CMI_DATA_DIR=.* has no causal-locomo/"):
        causal_locomo_path()


def test_no_data_and_no_network_says_which_variable(tmp_path, monkeypatch):
    monkeypatch.delenv(data.DATA_DIR_ENV, raising=False)
    monkeypatch.setenv(paths.CACHE_DIR_ENV, str(tmp_path))
    monkeypatch.setattr(data, "CAUSAL_LOCOMO_URL", "http://127.0.0.1:9/causal.jsonl")
    with pytest.raises(DataError, match="set CMI_DATA_DIR"):
        causal_locomo_path()
    assert not any(tmp_path.rglob("*.jsonl"))


def test_download_is_verified_and_cached(tmp_path, monkeypatch):
    monkeypatch.delenv(data.DATA_DIR_ENV, raising=False)
    monkeypatch.setenv(paths.CACHE_DIR_ENV, str(tmp_path))
    monkeypatch.setattr(data, "CAUSAL_LOCOMO_URL", SYNTHETIC.as_uri())  # a download, offline
    monkeypatch.setattr(data, "CAUSAL_LOCOMO_SHA256", data.sha256_of(SYNTHETIC))
    path = causal_locomo_path()
    assert path == tmp_path / data.CAUSAL_LOCOMO_PATH
    assert path.read_bytes() == SYNTHETIC.read_bytes()
    monkeypatch.setattr(data, "CAUSAL_LOCOMO_URL", "http://127.0.0.1:9/gone.jsonl")
    assert causal_locomo_path() == path  # served from the cache, no network


def test_download_with_wrong_checksum_leaves_nothing(tmp_path, monkeypatch):
    monkeypatch.delenv(data.DATA_DIR_ENV, raising=False)
    monkeypatch.setenv(paths.CACHE_DIR_ENV, str(tmp_path / "cache"))
    wrong = tmp_path / "wrong.jsonl"
    shutil.copy(SYNTHETIC, wrong)
    monkeypatch.setattr(data, "CAUSAL_LOCOMO_URL", wrong.as_uri())
    with pytest.raises(DataError, match="Checksum mismatch"):
        causal_locomo_path()
    assert not any(p.is_file() for p in (tmp_path / "cache").rglob("*"))


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


def test_session_text_reads_back_as_its_turns():
    turns = [Turn("D3:1", "Priya", "Hi Tomas!"), Turn("D3:2", "Tomas", "Hi: all good. [shares a photo]")]
    content = session_text("2:05 pm on 2 June, 2023", turns)
    assert content.splitlines()[0] == "Session date/time: 2:05 pm on 2 June, 2023."
    assert content.splitlines()[2] == "D3:2 Tomas: Hi: all good. [shares a photo]"
    assert session_turns(content) == turns
    assert [t.session for t in turns] == [3, 3]


def test_a_line_that_is_not_a_turn_continues_the_last_one():
    assert session_turns("header\nD1:1 Ines: I ran\n  a marathon\n\nD1:2 Tomasz: wow") == [
        Turn("D1:1", "Ines", "I ran a marathon"),
        Turn("D1:2", "Tomasz", "wow"),
    ]


def test_release_sessions_read_as_turns(real_records):
    sessions = [s for r in real_records for s in r.past_sessions]
    turns = [t for s in sessions for t in session_turns(s.content)]
    assert len(turns) > 1000 and all(t.speaker and t.text for t in turns)
    assert all(f"D{s.timestamp}:" in s.content for s in sessions if session_turns(s.content))


def test_a_malformed_turn_id_is_a_data_error():
    with pytest.raises(DataError, match="D3-4"):
        assert Turn("D3-4", "Ines", "hi").session
