"""The XL build (``xl.assemble``): identical bytes, its two forms, its manifest; on the real
LoCoMo, the shipped build's sha256, its time, and every memory a LoCoMo turn verbatim."""

import json
import time
from collections import Counter

import pytest
from cmi_inspect.causal_locomo.data import sha256_of
from cmi_inspect.causal_locomo.data_files import load_records
from cmi_inspect.causal_locomo.xl import INLINE_FILE, MANIFEST_FILE, STORE_FILE, build_xl
from cmi_inspect.causal_locomo.xl.assemble import stratified_order

from conftest import LOCOMO_MINI

XL_SHA256 = "1c42cbbef25798f88d7ea5828664a032dcfd3a7c34133787d594185ba9347bd0"
"""The shipped build's sha256 (LoCoMo pinned, ``xl/verdicts.json`` as shipped)."""


def test_two_builds_give_identical_bytes(mini_build, mini_verdicts, tmp_path):
    out, manifest = mini_build
    again = build_xl(LOCOMO_MINI, tmp_path, inline=True, verdicts=mini_verdicts)
    for name in (STORE_FILE, INLINE_FILE, MANIFEST_FILE):
        assert (tmp_path / name).read_bytes() == (out / name).read_bytes()
    assert again == manifest


def test_the_inline_form_is_the_stored_form_expanded(mini_build, mini_records):
    out, manifest = mini_build
    inline = load_records(out / INLINE_FILE)
    assert [r.model_dump() for r in inline] == [r.model_dump() for r in mini_records]
    assert manifest["inline_sha256"] == sha256_of(out / INLINE_FILE)


def test_the_manifest_counts_what_the_file_holds(mini_build, mini_records):
    out, manifest = mini_build
    assert manifest["sha256"] == sha256_of(out / STORE_FILE)
    assert manifest["examples"] == len(mini_records)
    assert manifest["families"] == dict(sorted(Counter(r.task_family for r in mini_records).items()))
    groups = Counter(r.model_extra["metadata"]["group"] for r in mini_records)  # type: ignore[index]
    assert manifest["groups"] == dict(sorted(groups.items()))


def test_the_order_interleaves_families_and_says_nothing_of_a_group(mini_records):
    from cmi_inspect.causal_locomo.data_files import ExampleReference

    refs = [
        ExampleReference(
            store_id=r.model_extra["source_sample_id"],
            memory_labels={},
            **r.model_dump(include={"example_id", "task_family", "current_task", "scoring_criteria"}),
        )  # type: ignore[index]
        for r in mini_records
    ]
    assert sorted(e.example_id for e in stratified_order(refs)) == sorted(r.example_id for r in refs)


@pytest.mark.slow
def test_the_shipped_build_is_pinned_fast_and_every_memory_is_a_locomo_turn(real_build, locomo_file):
    out, manifest = real_build
    assert manifest["sha256"] == XL_SHA256
    raw = json.loads(locomo_file.read_text(encoding="utf-8"))
    turns = {}
    for conv in raw:
        for key, session in conv["conversation"].items():
            if key.startswith("session_") and isinstance(session, list):
                for t in session:
                    caption = f" [shares {t['blip_caption']}]" if t.get("blip_caption") else ""
                    turns[(conv["sample_id"], t["dia_id"])] = t["text"].strip() + caption
    for line in (out / STORE_FILE).read_text(encoding="utf-8").splitlines():
        data = json.loads(line)
        if "memory_store" in data:
            for memory in data["memory_store"]:
                assert memory["content"] == turns[(data["store_id"], memory["memory_id"])]
    started = time.perf_counter()
    build_xl(locomo_file, out / "again")
    assert time.perf_counter() - started < 60
