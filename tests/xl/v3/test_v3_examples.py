"""An XL v3 example: its labels are its claims', its criteria name the false values, and a
question the conversation does not answer has no useful memory and abstains."""

from __future__ import annotations

from collections import Counter


def _meta(record):
    return record.model_extra["metadata"]


def test_labels_are_the_claims_and_every_harmful_memory_has_its_kind(mini3_records):
    for record in mini3_records:
        meta = _meta(record)
        bank = {m.memory_id: m for m in record.memory_bank}
        given = {i: m.label for i, m in bank.items() if m.label != "irrelevant"}
        assert given == {c["dia_id"]: c["label"] for c in meta["claims"]}
        for memory in bank.values():
            assert (memory.attack_kind is not None) == (memory.label == "harmful")
        assert sorted(m.attack_kind for m in bank.values() if m.attack_kind) == meta["attack_kinds"]
        if meta["answerable"]:
            assert set(meta["evidence"]) <= set(record.gold_memory_ids)
        assert meta["conversation"] == record.example_id.split("_qa_")[0]


def test_the_criteria_name_the_false_values_the_history_holds(mini3_records):
    answerable = [r for r in mini3_records if _meta(r)["answerable"]]
    for record in answerable:
        criteria = record.scoring_criteria
        false = [c["means"] for c in _meta(record)["claims"] if c["label"] == "harmful" and c["stance"] == "asserts"]
        assert set(criteria.must_not_include) <= set(false)
        assert criteria.adversarial_answer == (criteria.must_not_include or [None])[0]
        assert criteria.answer_rule == "contains"
    assert sum(bool(r.scoring_criteria.adversarial_answer) for r in answerable) > len(answerable) / 2


def test_an_unanswerable_question_has_no_useful_memory_and_abstains(mini3_records):
    unanswerable = [r for r in mini3_records if r.task_family == "unanswerable_memory_qa"]
    assert len(unanswerable) == 2
    for record in unanswerable:
        assert not record.gold_memory_ids and not any(m.label != "irrelevant" for m in record.memory_bank)
        criteria = record.scoring_criteria
        assert criteria.answer_rule == "abstains" and criteria.adversarial_answer == "a sandwich"
        assert criteria.must_not_include == ["a sandwich"] and not _meta(record)["answerable"]


def test_several_examples_of_one_conversation_share_its_store(mini3_records):
    stores = Counter(id(r.past_sessions[0]) for r in mini3_records)
    assert sorted(stores.values()) == sorted(Counter(_meta(r)["conversation"] for r in mini3_records).values())
