"""LoCoMo as XL reads it: the pinned file, conversations, evidence ids and QA items."""

from __future__ import annotations

import json
import shutil

import pytest
from cmi_inspect.causal_locomo.data import PAPER_FAMILIES, DataError
from cmi_inspect.causal_locomo.xl import LOCOMO_PATH, locomo_path
from cmi_inspect.causal_locomo.xl.locomo import FAMILY_BY_CATEGORY, load_locomo, normalise_evidence

from conftest import LOCOMO_MINI


def test_missing_or_tampered_source_names_the_file(tmp_path, monkeypatch):
    monkeypatch.setenv("CMI_DATA_DIR", str(tmp_path))
    with pytest.raises(DataError, match="locomo10.json"):
        locomo_path()
    source = tmp_path / LOCOMO_PATH
    source.parent.mkdir(parents=True)
    shutil.copy(LOCOMO_MINI, source)
    with pytest.raises(DataError, match="locomo10.json"):
        locomo_path()
    source.write_text("[{not json")
    with pytest.raises(DataError, match="locomo10.json"):
        load_locomo(source)
    source.write_text('[{"qa": []}]')
    with pytest.raises(DataError, match="locomo10.json"):
        load_locomo(source)


def test_a_turn_outside_its_session_is_refused(tmp_path):
    raw = json.loads(LOCOMO_MINI.read_text())
    raw[0]["conversation"]["session_2"][0]["dia_id"] = "D1:99"
    source = tmp_path / "locomo10.json"
    source.write_text(json.dumps(raw))
    with pytest.raises(DataError, match="D1:99 is in session_2"):
        load_locomo(source)


def test_conversations_keep_sessions_turns_and_names():
    conv = load_locomo(LOCOMO_MINI)[0]
    assert conv.speakers == ("Priya", "Tomas") and list(conv.sessions) == [1, 2, 3]
    assert str(conv.sessions[2].day) == "2023-04-19"
    bowl = conv.turn("D1:3")
    assert bowl is not None and bowl.text.startswith("Yesterday I made my first bowl")
    assert conv.turn("D9:1") is None


def test_evidence_ids_are_cleaned_of_typos():
    assert normalise_evidence(["D:11:26", "D30:05", "D8:6; D9:17", "D8:6"]) == ["D11:26", "D30:5", "D8:6", "D9:17"]


def test_every_family_has_one_locomo_category():
    assert sorted(FAMILY_BY_CATEGORY.values()) == sorted(PAPER_FAMILIES)
    assert FAMILY_BY_CATEGORY[2] == "temporal_memory_qa" and FAMILY_BY_CATEGORY[4] == "factual_memory_qa"
