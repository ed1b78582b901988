"""The XL build: identical bytes, its manifest, stratified order, the cached build, real counts."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest
from cmi_inspect.causal_locomo.data import PAPER_FAMILIES, sha256_of
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
from cmi_inspect.xl.build import assign_splits, conversation_splits
from cmi_inspect.xl.params import EXAMPLES_BY_CONVERSATION

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


def _deviation(lines: list[dict[str, Any]], key: str) -> float:
    """The largest gap, over prefixes and values of ``key``, between a prefix's count and its share."""
    sizes, total, worst = Counter(r[key] for r in lines), len(lines), 0.0
    for n in range(1, total + 1):
        prefix = Counter(r[key] for r in lines[:n])
        worst = max(worst, *(abs(prefix[v] - n * size / total) for v, size in sizes.items()))
    return worst


def test_any_prefix_of_a_split_is_stratified_and_the_splits_interleave(mini_lines):
    for split in {r["split"] for r in mini_lines}:
        assert _deviation([r for r in mini_lines if r["split"] == split], "task_family") <= 1.0
    assert _deviation(mini_lines, "split") <= 1.0
    assert _deviation(mini_lines, "task_family") <= 2.0  # one per split it interleaves, at most


def test_splits_are_whole_conversations_closest_to_their_shares():
    counts = {"a": 50, "b": 20, "c": 20, "d": 10}
    assert assign_splits(counts) == {"a": "train", "b": "dev", "c": "test", "d": "train"}
    splits = assign_splits({f"conv-{i}": 100 + i for i in range(10)})
    assert Counter(splits.values()) == {"train": 6, "dev": 2, "test": 2}
    assert assign_splits({"x": 5}) == {"x": "train"}


def test_xl_s_split_of_each_conversation_is_known_without_a_build():
    splits = conversation_splits()
    assert sorted(c for c, s in splits.items() if s == "test") == ["conv-41", "conv-47"]
    assert sorted(c for c, s in splits.items() if s == "dev") == ["conv-26", "conv-50"]
    assert set(splits) == set(EXAMPLES_BY_CONVERSATION)


def test_each_record_carries_its_conversation_split(mini_build, mini_lines):
    _, manifest = mini_build
    by_conversation: dict[str, set[str]] = {}
    for record in mini_lines:
        by_conversation.setdefault(record["source_sample_id"], set()).add(record["split"])
    assert all(len(s) == 1 for s in by_conversation.values())
    for split, entry in manifest["splits"].items():
        assert entry["examples"] == sum(r["split"] == split for r in mini_lines)
        assert entry["conversations"] == sorted(c for c, s in by_conversation.items() if s == {split})


def test_xl_path_builds_once_and_rebuilds_when_tampered(tmp_path, monkeypatch):
    monkeypatch.setenv("CMI_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(build, "locomo_path", lambda: LOCOMO_MINI)
    path = xl_path(2)
    assert path.parent.parent == tmp_path / "xl"
    built = path.stat().st_mtime_ns
    assert xl_path(2) == path and path.stat().st_mtime_ns == built
    good = path.read_bytes()
    path.write_bytes(good + b"\n")
    assert xl_path(2).read_bytes() == good
    monkeypatch.setattr(build, "_code_digest", lambda: "changedcode0")  # another builder's code
    rebuilt = xl_path(2)
    assert rebuilt != path and rebuilt.parent.name.endswith("-changedcode0")
    assert rebuilt.read_bytes() == good


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


XL_SHA256 = "1648a87175ae6961e3ddb88386e5713bd72fb50b2a7dae2985bf14e34c94b78b"
"""causal_locomo_xl.jsonl as builder xl-2 writes it from the pinned LoCoMo (docs/xl.md);
xl-1's was 0fac8e9e... (docs/CHANGELOG.md)."""


@pytest.mark.slow  # builds XL from the real LoCoMo
def test_real_build_bytes_counts_splits_and_label_free_timestamps(tmp_path, locomo_file):
    manifest = build_xl(locomo_file, tmp_path)
    assert manifest["source_sha256"] == LOCOMO_SHA256
    assert manifest["sha256"] == XL_SHA256
    splits = manifest["splits"]
    conversations = [c for entry in splits.values() for c in entry["conversations"]]
    assert len(conversations) == len(set(conversations)) == 10
    assert {s: e["conversations"] for s, e in splits.items()} == {
        "train": ["conv-30", "conv-42", "conv-43", "conv-44", "conv-48", "conv-49"],
        "dev": ["conv-26", "conv-50"],
        "test": ["conv-41", "conv-47"],
    }
    assert manifest["examples"] + sum(manifest["dropped"].values()) == 1986
    records = [json.loads(line) for line in (tmp_path / XL_FILE).read_text().splitlines()]
    assert Counter(r["source_sample_id"] for r in records) == EXAMPLES_BY_CONVERSATION
    assert {s: sorted(c for c, t in conversation_splits().items() if t == s) for s in splits} == {
        s: e["conversations"] for s, e in splits.items()
    }  # the pinned counts split as the build does
    assert manifest["dropped"]["no_gold_answer"] == 446
    assert manifest["examples"] >= 1100
    assert set(manifest["families"]) == set(PAPER_FAMILIES)
    assert set(manifest["attack_kinds"]) == set(ATTACK_KINDS)
    poisoned = sum(r["metadata"]["contains_poisoned_memory"] for r in records) / len(records)
    assert 0.5 <= poisoned <= 0.7
    for name, auc in _timestamp_aucs(records).items():
        assert 0.40 <= auc <= 0.60, (name, auc)
