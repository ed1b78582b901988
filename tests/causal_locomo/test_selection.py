"""The sealed selection record: its seal, the answer check and placeholders in explanations."""

from __future__ import annotations

import pytest
from cmi_inspect.causal_locomo.selection import (
    SEAL,
    MemorySelection,
    SelectionSealError,
    check_seal,
    examine,
    fill,
    placeholder,
    record_digest,
)
from inspect_ai.event import Event, InfoEvent, ModelEvent
from inspect_ai.model import ChatMessageUser, GenerateConfig, ModelOutput
from inspect_ai.util import Store


def record(**fields) -> MemorySelection:
    made = MemorySelection(store=Store())
    for name, value in fields.items():
        setattr(made, name, value)
    return made


def seal_of(r: MemorySelection) -> InfoEvent:
    return InfoEvent(source=SEAL, data={"selection_sha256": record_digest(r)})


def call(prompt: str, answer: str, role: str | None = None) -> ModelEvent:
    return ModelEvent(
        model="mockllm/model",
        role=role,
        input=[ChatMessageUser(content=prompt)],
        tools=[],
        tool_choice="none",
        config=GenerateConfig(),
        output=ModelOutput.from_content("mockllm/model", answer),
    )


def test_a_record_that_matches_its_seal_passes_and_a_changed_one_fails():
    r = record(strategy="s", selected=["m1"], scores=[0.5])
    events = [seal_of(r)]
    check_seal(r, events)
    r.selected = []
    with pytest.raises(SelectionSealError, match="strategy 's' recorded was changed after it was sealed"):
        check_seal(r, events)


def test_the_last_seal_counts_and_a_record_with_content_but_no_seal_fails():
    r = record(strategy="s", selected=["m1"])
    old = seal_of(r)
    r.selected = ["m2"]
    check_seal(r, [old, seal_of(r)])
    with pytest.raises(SelectionSealError, match="written without its seal"):
        check_seal(r, [])
    check_seal(record(), [])  # nothing recorded (a sample stopped before it chose): nothing to check


def test_examine_finds_the_answering_call_and_what_its_prompt_exposed():
    from cmi_inspect.causal_locomo.selection import digest

    shown = {"m1": "Caroline painted a lake.", "m2": "Melanie ran a race."}
    prompt = "Notes: Caroline painted a lake. Question?"
    r = record(strategy="s", selected=[], prompt_sha256=digest(prompt))
    events: list[Event] = [seal_of(r), call("other", "yes"), call(prompt, "yes")]
    seen = examine(r, events, "yes", shown)
    assert seen.exposed == ["m1"] and seen.undeclared == ["m1"]
    with pytest.raises(SelectionSealError, match="no response-model call's answer to the prompt it recorded"):
        examine(r, events, "no", shown)
    grader_only: list[Event] = [seal_of(r), call(prompt, "yes", role="grader")]
    with pytest.raises(SelectionSealError):
        examine(r, grader_only, "yes", shown)
    assert examine(record(), [], "", shown).exposed == []  # stopped before it answered


def test_placeholders_are_filled_with_the_names_the_scorer_knows():
    text = f"kept {placeholder('m1')}, dropped {placeholder('m9')}"
    assert fill(text, {"m1": "mem_01 (useful)"}) == "kept mem_01 (useful), dropped ⟨m9⟩"


def test_a_record_without_a_ranking_digests_as_records_did_before_rankings():
    import hashlib
    import json

    r = record(strategy="s", selected=["m1"], scores=[0.5])
    before = r.model_dump(mode="json", exclude={"store", "instance", "ranking"})
    assert (
        record_digest(r) == hashlib.sha256(json.dumps(before, sort_keys=True, ensure_ascii=False).encode()).hexdigest()
    )
    ranked = record(strategy="s", selected=["m1"], scores=[0.5], ranking=["m1", "m2"])
    assert record_digest(ranked) != record_digest(r)
    check_seal(ranked, [seal_of(ranked)])
    ranked.ranking = ["m2", "m1"]
    with pytest.raises(SelectionSealError, match="changed after it was sealed"):
        check_seal(ranked, [seal_of(r)])
