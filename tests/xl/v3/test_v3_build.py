"""The v3 build: identical bytes, the stored and inline forms, its manifest, stratified
order; on the real LoCoMo, its sha256, counts, banks and form (slow)."""

from __future__ import annotations

import json
import statistics
from collections import Counter

import pytest
from cmi_inspect.causal_locomo.data import TASK_FAMILIES, sha256_of
from cmi_inspect.causal_locomo.data_files import load_records
from cmi_inspect.causal_locomo.form_audit import form_audit, form_items
from cmi_inspect.xl import LOCOMO_SHA256, build_xl3
from cmi_inspect.xl.v3.params import BUILDER_VERSION, CHANNELS, INLINE_FILE, MANIFEST_FILE, STORE_FILE

from conftest import LOCOMO_MINI


def test_two_builds_give_identical_bytes(mini3_build, tmp_path):
    out, manifest = mini3_build
    again = build_xl3(LOCOMO_MINI, tmp_path, inline=True)
    for name in (STORE_FILE, INLINE_FILE, MANIFEST_FILE):
        assert (tmp_path / name).read_bytes() == (out / name).read_bytes()
    assert again == manifest


def test_each_store_is_written_once_then_the_examples(mini3_build):
    out, manifest = mini3_build
    lines = [json.loads(line) for line in (out / STORE_FILE).read_text().splitlines()]
    stores = [line for line in lines if "memory_store" in line]
    assert [s["store_id"] for s in stores] == ["mini-1", "mini-2"] and lines[:2] == stores
    assert all("memory_bank" not in line and "store_id" in line for line in lines[2:])
    assert manifest["bank_size"]["by_conversation"] == {s["store_id"]: len(s["memory_store"]) for s in stores}


def test_the_inline_form_is_the_stored_form_expanded(mini3_build, mini3_records):
    out, manifest = mini3_build
    inline = load_records(out / INLINE_FILE)
    assert [r.model_dump() for r in inline] == [r.model_dump() for r in mini3_records]
    assert manifest["inline_sha256"] == sha256_of(out / INLINE_FILE)
    assert all("memory_bank" in json.loads(line) for line in (out / INLINE_FILE).read_text().splitlines())


def test_manifest_counts_what_the_file_holds(mini3_build, mini3_records):
    out, manifest = mini3_build
    assert manifest["builder_version"] == BUILDER_VERSION == "xl-3"
    assert manifest["sha256"] == sha256_of(out / STORE_FILE)
    assert manifest["source_sha256"] == sha256_of(LOCOMO_MINI)
    assert manifest["examples"] == len(mini3_records) == manifest["answerable"] + manifest["unanswerable"]
    assert manifest["families"] == dict(sorted(Counter(r.task_family for r in mini3_records).items()))
    kinds = Counter(m.attack_kind for r in mini3_records for m in r.memory_bank if m.attack_kind)
    assert manifest["attack_kinds"] == dict(sorted(kinds.items()))
    several = [r for r in mini3_records if len(r.model_extra["metadata"]["evidence"]) > 1 and r.gold_memory_ids]
    assert manifest["needs_several_memories"] == len(several)
    assert manifest["dropped"] == {"evidence_not_found": 1, "unsound": 2}
    assert manifest["splits"] == {"train": [], "dev": [], "test": []}  # mini's are in none


def _deviation(values: list[str]) -> float:
    """The largest gap, over prefixes and values, between a prefix's count and its share."""
    sizes, total, worst = Counter(values), len(values), 0.0
    for n in range(1, total + 1):
        prefix = Counter(values[:n])
        worst = max(worst, *(abs(prefix[v] - n * size / total) for v, size in sizes.items()))
    return worst


def test_any_prefix_is_stratified_by_family_and_by_conversation_within_one(mini3_records):
    assert _deviation([r.task_family for r in mini3_records]) <= 1.0
    for family in {r.task_family for r in mini3_records}:
        members = [r.model_extra["metadata"]["conversation"] for r in mini3_records if r.task_family == family]  # type: ignore[index]
        assert _deviation(members) <= 1.0


XL3_SHA256 = "f143734c59935369f0c11b92201f115d3aa35ac627ea552cb8c9bf65f2328f55"
"""causal_locomo_xl.jsonl as builder xl-3 writes it from the pinned LoCoMo (docs/xl.md)."""


@pytest.mark.slow  # builds XL v3 from the real LoCoMo
def test_real_build_bytes_counts_banks_and_shares(real3_build, real3_records):
    _, manifest = real3_build
    assert manifest["source_sha256"] == LOCOMO_SHA256
    assert manifest["sha256"] == XL3_SHA256
    assert len(manifest["conversations"]) == 10 and manifest["examples"] == len(real3_records)
    assert set(manifest["families"]) == set(TASK_FAMILIES)
    assert manifest["bank_size"]["median"] >= 200
    assert statistics.median(len(r.memory_bank) for r in real3_records) == manifest["bank_size"]["median"]
    assert manifest["needs_several_share"] >= 0.20 and manifest["unanswerable_share"] >= 0.05
    assert set(manifest["attack_kinds"]) == set(CHANNELS) and all(manifest["attack_kinds"].values())
    assert manifest["splits"]["test"] == ["conv-41", "conv-47"]  # v2's assignment, kept
    assert {r.split for r in real3_records if r.example_id.startswith("conv-26_")} == {"dev"}


@pytest.mark.slow  # the form audit on the real build
def test_real_build_form_gives_nothing_away(real3_records):
    result = form_audit(form_items(real3_records))
    assert all(0.40 <= auc <= 0.60 for auc in result["features"].values()), result["features"]
    assert result["classifier"] <= 0.62 and result["within_bounds"]
    assert result["groups"] == 10
