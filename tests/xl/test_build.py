"""The XL build: identical bytes, its manifest, stratified order, the cached build, real counts."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest
from cmi_inspect.causal_locomo.data import TASK_FAMILIES, sha256_of
from cmi_inspect.xl import (
    ATTACK_KINDS,
    BUILDER_VERSION,
    LOCOMO_SHA256,
    MANIFEST_FILE,
    XL_FILE,
    build,
    build_xl,
    xl_path,
)

from conftest import LOCOMO_MINI


def test_two_builds_give_identical_bytes(mini_build, tmp_path):
    out, manifest = mini_build
    again = build_xl(LOCOMO_MINI, tmp_path)
    assert (tmp_path / XL_FILE).read_bytes() == (out / XL_FILE).read_bytes()
    assert (tmp_path / MANIFEST_FILE).read_bytes() == (out / MANIFEST_FILE).read_bytes()
    assert again == manifest


def test_manifest_fields(mini_build, mini_lines):
    out, manifest = mini_build
    assert manifest == json.loads((out / MANIFEST_FILE).read_text())
    assert manifest["source_sha256"] == sha256_of(LOCOMO_MINI)
    assert manifest["builder_version"] == BUILDER_VERSION
    assert manifest["sha256"] == sha256_of(out / XL_FILE)
    assert sum(manifest["families"].values()) == manifest["examples"] == len(mini_lines)
    harmful = Counter(m["attack_kind"] for r in mini_lines for m in r["memory_bank"] if m["label"] == "harmful")
    assert manifest["attack_kinds"] == dict(harmful)


def test_dropped_items_are_counted(mini_build):
    _, manifest = mini_build
    assert manifest["dropped"] == {"no_gold_answer": 2, "evidence_not_found": 1, "unsound": 2}
    total = sum(len(c["qa"]) for c in json.loads(LOCOMO_MINI.read_text()))
    assert manifest["examples"] + sum(manifest["dropped"].values()) == total


def test_any_prefix_is_stratified(mini_build, mini_lines):
    _, manifest = mini_build
    total = len(mini_lines)
    for n in range(1, total + 1):
        prefix = Counter(r["task_family"] for r in mini_lines[:n])
        for family, size in manifest["families"].items():
            assert abs(prefix[family] - n * size / total) <= 1.0


def test_xl_path_builds_once_and_rebuilds_when_tampered(tmp_path, monkeypatch):
    monkeypatch.setenv("CMI_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(build, "locomo_path", lambda: LOCOMO_MINI)
    path = xl_path()
    assert path.parent.parent == tmp_path / "xl"
    built = path.stat().st_mtime_ns
    assert xl_path() == path and path.stat().st_mtime_ns == built
    good = path.read_bytes()
    path.write_bytes(good + b"\n")
    assert xl_path().read_bytes() == good


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
    manifest = build_xl(locomo_file, tmp_path)
    assert manifest["source_sha256"] == LOCOMO_SHA256
    assert manifest["examples"] + sum(manifest["dropped"].values()) == 1986
    assert manifest["dropped"]["no_gold_answer"] == 446
    assert manifest["examples"] >= 1100
    assert set(manifest["families"]) == set(TASK_FAMILIES)
    assert set(manifest["attack_kinds"]) == set(ATTACK_KINDS)
    records = [json.loads(line) for line in (tmp_path / XL_FILE).read_text().splitlines()]
    poisoned = sum(r["metadata"]["contains_poisoned_memory"] for r in records) / len(records)
    assert 0.5 <= poisoned <= 0.7
    for name, auc in _timestamp_aucs(records).items():
        assert 0.40 <= auc <= 0.60, (name, auc)
