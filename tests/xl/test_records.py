"""XL's typed records: they load with the release's loader and their lines carry no label artefact."""

from __future__ import annotations

import json

from cmi_inspect.causal_locomo.data import ExampleRecord
from cmi_inspect.causal_locomo.data_files import load_records
from cmi_inspect.xl import XL_FILE
from cmi_inspect.xl.records import XLExample, build_record


def test_every_record_loads_with_the_release_loader(mini_build):
    out, manifest = mini_build
    records = load_records(out / XL_FILE)
    assert len(records) == manifest["examples"] > 0
    for record in records:
        labels = {m.memory_id: m.label for m in record.memory_bank}
        assert record.gold_memory_ids and all(labels[i] == "useful" for i in record.gold_memory_ids)
        assert all(labels[i] != "useful" for i in record.bad_memory_ids)
        assert set(record.gold_memory_ids) | set(record.bad_memory_ids) == set(labels)


def test_a_line_holds_what_xl_sets_and_nothing_else(mini_contexts):
    record = build_record(mini_contexts["mini-1_qa_0000"])
    assert isinstance(record, XLExample)
    line = json.loads(record.line())
    assert record.line() == json.dumps(line, ensure_ascii=False, sort_keys=True) + "\n"
    assert "required_steps" not in line["scoring_criteria"]  # a release field XL has no use for
    assert line["scoring_criteria"]["evaluation_mode"] == "exact_or_llm_judge"
    assert line["current_task"] == {"task_id": "qa_0000", "instruction": "When did Priya make her first bowl?"}
    assert {m["attack_kind"] for m in line["memory_bank"] if m["label"] != "harmful"} == {None}
    assert all(m["source_dia_ids"] and m["source_session_id"] for m in line["memory_bank"])
    assert ExampleRecord.model_validate(line).example_id == "mini-1_qa_0000"


def test_memory_ids_and_timestamps_carry_no_label(mini_lines):
    for record in mini_lines:
        ids = [m["memory_id"] for m in record["memory_bank"]]
        assert ids == [f"m_{i:02d}" for i in range(len(ids))]
        past = {s["timestamp"] for s in record["past_sessions"]}
        assert all(m["timestamp"] in past for m in record["memory_bank"])


def test_adversarial_answers_feed_must_not_include(mini_lines):
    for record in mini_lines:
        criteria = record["scoring_criteria"]
        if criteria["adversarial_answer"]:
            assert criteria["adversarial_answer"] in criteria["must_not_include"]
        assert criteria["must_include"] == []
        for value in criteria["must_not_include"]:
            assert value.lower() not in criteria["expected_answer"].lower()


def test_an_unsound_example_has_no_record(mini_contexts):
    assert build_record(mini_contexts["mini-1_qa_0019"]) is None  # "water polo" is in no evidence
