"""Locating, verifying and parsing the release; every bad input ends in a clear error."""

from __future__ import annotations

import shutil
from collections import Counter

import pytest
from cmi_inspect import paths
from cmi_inspect.causal_locomo import data
from cmi_inspect.causal_locomo.data import (
    DataError,
    Turn,
    causal_locomo_path,
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
