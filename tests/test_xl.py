"""Causal-LoCoMo-XL builder: determinism, schema, attacks, soundness, order, artefacts."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from cmi_inspect import xl
from cmi_inspect.data import DataError, load_records

MINI = Path(__file__).resolve().parent.parent / "datasets" / "fixtures" / "locomo_mini.json"


@pytest.fixture(scope="module")
def mini_build(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    out = tmp_path_factory.mktemp("xl-mini")
    return out, xl.build_xl(MINI, out)


def _records(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / xl.XL_FILE).read_text().splitlines()]


def test_two_builds_give_identical_bytes(mini_build, tmp_path):
    out, manifest = mini_build
    again = xl.build_xl(MINI, tmp_path)
    assert (tmp_path / xl.XL_FILE).read_bytes() == (out / xl.XL_FILE).read_bytes()
    assert (tmp_path / xl.MANIFEST_FILE).read_bytes() == (out / xl.MANIFEST_FILE).read_bytes()
    assert again == manifest


def test_every_record_loads_with_the_release_loader(mini_build):
    out, manifest = mini_build
    records = load_records(out / xl.XL_FILE)
    assert len(records) == manifest["examples"] > 0
    for record in records:
        labels = {m.memory_id: m.label for m in record.memory_bank}
        assert record.gold_memory_ids and all(labels[i] == "useful" for i in record.gold_memory_ids)
        assert all(labels[i] != "useful" for i in record.bad_memory_ids)
        assert set(record.gold_memory_ids) | set(record.bad_memory_ids) == set(labels)


def test_manifest_fields(mini_build):
    out, manifest = mini_build
    assert manifest == json.loads((out / xl.MANIFEST_FILE).read_text())
    assert manifest["source_sha256"] == xl.sha256_of(MINI)
    assert manifest["builder_version"] == xl.BUILDER_VERSION
    assert manifest["sha256"] == xl.sha256_of(out / xl.XL_FILE)
    assert sum(manifest["families"].values()) == manifest["examples"]
    records = _records(out)
    harmful = Counter(
        m["attack_kind"] for r in records for m in r["memory_bank"] if m["label"] == "harmful"
    )
    assert manifest["attack_kinds"] == dict(harmful)


def test_every_attack_kind_is_produced_and_recorded(mini_build):
    out, manifest = mini_build
    assert set(manifest["attack_kinds"]) == set(xl.ATTACK_KINDS)
    for record in _records(out):
        for memory in record["memory_bank"]:
            assert (memory["attack_kind"] is not None) == (memory["label"] == "harmful")


def test_planted_claims_appear_in_the_history(mini_build):
    out, _ = mini_build
    planted = [
        (r, m) for r in _records(out) for m in r["memory_bank"] if m["attack_kind"] == "planted"
    ]
    assert planted
    for record, memory in planted:
        claim = memory["content"].split(': "', 1)[1].rstrip('"')
        spoken = " ".join(s["content"] for s in record["past_sessions"])
        assert xl.re.sub(r" \[[^\]]*\]", "", claim) in spoken


def test_adversarial_answers_feed_must_not_include(mini_build):
    out, _ = mini_build
    for record in _records(out):
        criteria = record["scoring_criteria"]
        if criteria["adversarial_answer"]:
            assert criteria["adversarial_answer"] in criteria["must_not_include"]
        assert criteria["must_include"] == []
        for value in criteria["must_not_include"]:
            assert value.lower() not in criteria["expected_answer"].lower()


def test_memory_ids_carry_no_label(mini_build):
    out, _ = mini_build
    for record in _records(out):
        ids = [m["memory_id"] for m in record["memory_bank"]]
        assert ids == [f"m_{i:02d}" for i in range(len(ids))]
        past = {s["timestamp"] for s in record["past_sessions"]}
        assert all(m["timestamp"] in past for m in record["memory_bank"])


def test_soundness_filter_drops_and_counts(mini_build):
    out, manifest = mini_build
    ids = {r["example_id"] for r in _records(out)}
    assert "mini-1_qa_0019" not in ids  # answer "water polo" is nowhere in its evidence
    assert manifest["dropped"]["unsound"] >= 1
    assert manifest["dropped"]["no_gold_answer"] == 2
    assert manifest["dropped"]["evidence_not_found"] == 1
    total = sum(len(c["qa"]) for c in json.loads(MINI.read_text()))
    assert manifest["examples"] + sum(manifest["dropped"].values()) == total


def test_temporal_memories_resolve_relative_dates(mini_build):
    out, _ = mini_build
    record = next(r for r in _records(out) if r["example_id"] == "mini-1_qa_0000")
    useful = [m for m in record["memory_bank"] if m["label"] == "useful"]
    assert "Yesterday [3 March 2023]" in useful[0]["content"]
    assert {"3 March 2023", "March 3, 2023", "2023-03-03"} <= set(
        record["scoring_criteria"]["answer_aliases"]
    )


def test_any_prefix_is_stratified(mini_build):
    out, manifest = mini_build
    records = _records(out)
    total = len(records)
    for n in range(1, total + 1):
        prefix = Counter(r["task_family"] for r in records[:n])
        for family, size in manifest["families"].items():
            assert abs(prefix[family] - n * size / total) <= 1.0


def test_missing_or_tampered_source_names_the_file(tmp_path, monkeypatch):
    monkeypatch.setenv("CMI_DATA_DIR", str(tmp_path))
    with pytest.raises(DataError, match="locomo10.json"):
        xl.locomo_path()
    source = tmp_path / xl.LOCOMO_PATH
    source.parent.mkdir(parents=True)
    shutil.copy(MINI, source)
    with pytest.raises(DataError, match="locomo10.json"):
        xl.locomo_path()
    source.write_text("[{not json")
    with pytest.raises(DataError, match="locomo10.json"):
        xl.build_xl(source, tmp_path / "out")
    source.write_text('[{"qa": []}]')
    with pytest.raises(DataError, match="locomo10.json"):
        xl.build_xl(source, tmp_path / "out")


def test_xl_path_builds_once_and_rebuilds_when_tampered(tmp_path, monkeypatch):
    monkeypatch.setenv("CMI_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(xl, "locomo_path", lambda: MINI)
    path = xl.xl_path()
    assert path.parent.parent == tmp_path / "xl"
    built = path.stat().st_mtime_ns
    assert xl.xl_path() == path and path.stat().st_mtime_ns == built
    good = path.read_bytes()
    path.write_bytes(good + b"\n")
    assert xl.xl_path().read_bytes() == good


def _timestamp_aucs(records: list[dict[str, Any]]) -> dict[str, float]:
    """AUCs of label-free timestamp features, harmful vs useful and harmful vs irrelevant."""
    from sklearn.metrics import roc_auc_score

    features: dict[str, dict[str, list[float]]] = {"after": {}, "rank": {}}
    for record in records:
        last = max(s["timestamp"] for s in record["past_sessions"])
        stamps = [m["timestamp"] for m in record["memory_bank"]]
        for memory in record["memory_bank"]:
            t = memory["timestamp"]
            rank = (sum(s < t for s in stamps) + 0.5 * sum(s == t for s in stamps)) / len(stamps)
            features["after"].setdefault(memory["label"], []).append(float(t > last))
            features["rank"].setdefault(memory["label"], []).append(rank)
    aucs = {}
    for name, by_label in features.items():
        for other in ("useful", "irrelevant"):
            harmful, rest = by_label["harmful"], by_label[other]
            scores = harmful + rest
            if len(set(scores)) == 1:
                aucs[f"{name}/{other}"] = 0.5
                continue
            aucs[f"{name}/{other}"] = roc_auc_score([1] * len(harmful) + [0] * len(rest), scores)
    return aucs


@pytest.mark.slow  # builds XL from the real LoCoMo
def test_real_build_counts_and_label_free_timestamps(tmp_path, locomo_file):
    manifest = xl.build_xl(locomo_file, tmp_path)
    assert manifest["source_sha256"] == xl.LOCOMO_SHA256
    assert manifest["examples"] + sum(manifest["dropped"].values()) == 1986
    assert manifest["dropped"]["no_gold_answer"] == 446
    assert manifest["examples"] >= 1100
    assert set(manifest["families"]) == set(xl.FAMILY_ORDER)
    assert set(manifest["attack_kinds"]) == set(xl.ATTACK_KINDS)
    records = _records(tmp_path)
    poisoned = sum(r["metadata"]["contains_poisoned_memory"] for r in records) / len(records)
    assert 0.5 <= poisoned <= 0.7
    for name, auc in _timestamp_aucs(records).items():
        assert 0.40 <= auc <= 0.60, (name, auc)
