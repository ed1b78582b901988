"""The v4 build: identical bytes, the stored and inline forms, its manifest; on the real
LoCoMo, its sha256, counts, shares, and structure drawn alike for both labels (slow)."""

from __future__ import annotations

import statistics
from collections import Counter

import pytest
from cmi_inspect.causal_locomo.data import TASK_FAMILIES, sha256_of
from cmi_inspect.causal_locomo.data_files import load_records
from cmi_inspect.xl import LOCOMO_SHA256, build_xl4
from cmi_inspect.xl.v4.frames import FRAMES, read_frame
from cmi_inspect.xl.v4.params import BUILDER_VERSION, INLINE_FILE, MANIFEST_FILE, STORE_FILE

from conftest import LOCOMO_MINI


def test_two_builds_give_identical_bytes(mini4_build, tmp_path):
    out, manifest = mini4_build
    again = build_xl4(LOCOMO_MINI, tmp_path, inline=True)
    for name in (STORE_FILE, INLINE_FILE, MANIFEST_FILE):
        assert (tmp_path / name).read_bytes() == (out / name).read_bytes()
    assert again == manifest


def test_the_inline_form_is_the_stored_form_expanded(mini4_build, mini4_records):
    out, manifest = mini4_build
    inline = load_records(out / INLINE_FILE)
    assert [r.model_dump() for r in inline] == [r.model_dump() for r in mini4_records]
    assert manifest["inline_sha256"] == sha256_of(out / INLINE_FILE)


def test_manifest_counts_what_the_file_holds(mini4_build, mini4_records):
    out, manifest = mini4_build
    assert manifest["builder_version"] == BUILDER_VERSION == "xl-4"
    assert manifest["sha256"] == sha256_of(out / STORE_FILE)
    assert manifest["examples"] == len(mini4_records) == manifest["answerable"] + manifest["unanswerable"]
    assert manifest["families"] == dict(sorted(Counter(r.task_family for r in mini4_records).items()))
    kinds = Counter(m.attack_kind for r in mini4_records for m in r.memory_bank if m.attack_kind)
    assert manifest["attack_kinds"] == dict(sorted(kinds.items()))
    several = [r for r in mini4_records if len(r.model_extra["metadata"]["evidence"]) >= 2]  # type: ignore[index]
    assert manifest["needs_several_evidence_turns"] == len(several)


def test_every_frame_has_a_mirrored_pair_of_the_same_words():
    for frame in FRAMES:
        true, false = frame.true.lower().split(), frame.false.lower().split()
        assert abs(len(true) - len(false)) <= 2 and len(set(true) & set(false)) >= len(set(true)) / 2, frame
        assert read_frame(f"Something I said. {frame.true}") == (frame, True)
        assert read_frame(f"Something I said. {frame.false}") == (frame, False)
    assert {f.voice for f in FRAMES} == {"owner", "other"}


def test_every_claim_turn_states_its_value_and_closes_with_its_frame(mini4_records):
    for record in mini4_records:
        turns = {t.dia_id: t.text for s in record.past_sessions for t in _turns(s)}
        for claim in record.model_extra["metadata"]["claims"]:  # type: ignore[index]
            if claim["kind"] == "claim":
                found = read_frame(turns[claim["dia_id"]])
                assert found is not None and found[1] == claim["says_true"]
                assert (claim["label"] == "useful") == claim["says_true"]


def _turns(session):  # type: ignore[no-untyped-def]
    from cmi_inspect.causal_locomo.data import session_turns

    return session_turns(session.content)


XL4_SHA256 = "8b81a493c346440d29ae987561b844ba053078caf2c12d4a7f08fabba85c4753"
"""causal_locomo_xl.jsonl as builder xl-4 writes it from the pinned LoCoMo (docs/xl.md)."""


@pytest.mark.slow  # builds XL v4 from the real LoCoMo
def test_real_build_bytes_counts_banks_and_shares(real4_build, real4_records):
    _, manifest = real4_build
    assert manifest["source_sha256"] == LOCOMO_SHA256
    assert manifest["sha256"] == XL4_SHA256
    assert len(manifest["conversations"]) == 10 and manifest["examples"] == len(real4_records)
    # LoCoMo's one inferential question left stated its answer only in a photo's caption
    assert set(manifest["families"]) == set(TASK_FAMILIES) - {"inferential_memory_qa"}
    assert manifest["bank_size"]["median"] >= 200
    assert statistics.median(len(r.memory_bank) for r in real4_records) == manifest["bank_size"]["median"]
    assert manifest["needs_several_share"] >= 0.20 and manifest["unanswerable_share"] >= 0.05
    assert manifest["splits"]["test"] == ["conv-41", "conv-47"]  # v2's assignment, kept


@pytest.mark.slow  # the relational audit on the real build
def test_real_build_structure_gives_nothing_away(real4_records):
    from cmi_inspect.causal_locomo.form_audit import form_audit, form_items
    from cmi_inspect.causal_locomo.relational_audit import relational_audit, relational_features

    form = form_audit(form_items(real4_records))
    assert all(0.40 <= auc <= 0.60 for auc in form["features"].values()), form["features"]
    result = relational_audit(form_items(real4_records), relational_features(real4_records))
    assert all(0.40 <= auc <= 0.60 for auc in result["features"].values()), result["features"]
    assert result["trees"]["all"]["pooled"] <= 0.62


@pytest.mark.slow  # the real build
def test_no_unanswerable_question_has_its_answer_said_by_the_person_it_asks_about(real4_records):
    for record in real4_records:
        meta = record.model_extra["metadata"]  # type: ignore[index]
        if meta["answerable"]:
            continue
        adversarial = record.scoring_criteria.adversarial_answer
        asked = meta["asked_person"]
        said = [t.text for s in record.past_sessions for t in _turns(s) if t.speaker == asked]
        assert adversarial and not any(adversarial.lower() in text.lower() for text in said), record.example_id
