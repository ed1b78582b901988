"""The truth rule, applied to the history by an oracle that reads it, recovers every gold
answer and every label.

The oracle reads each example's claims (which turn bears on which evidence turn), finds
each turn in the past sessions and decides it from its words alone: the evidence turn and
the claim turns whose closing sentence says the claim is true state the answer; a claim
turn whose closing sentence says it is untrue states a value that is not the answer. It
never reads a label, a ``says_true`` or a speaker's role to decide.
"""

from __future__ import annotations

from typing import Any

import pytest
from cmi_inspect.causal_locomo.data import ExampleRecord, session_turns
from cmi_inspect.dates import date_spans
from cmi_inspect.text import tokens
from cmi_inspect.xl.answers import answer_aliases, same_value
from cmi_inspect.xl.v4.frames import FRAMES, read_frame


def _meta(record: ExampleRecord) -> dict[str, Any]:
    assert record.model_extra is not None
    return record.model_extra["metadata"]


def _reads_as(value: str, answer: str) -> bool:
    """A stated value reads as the answer: a date overlaps a period the answer means (a false one lies weeks from it);
    a word value holds the answer or is held by it."""
    days, periods = date_spans(value), date_spans(answer)
    if days and periods:
        return any(p.overlaps(d) for p in periods for d in days)
    return any(tokens(value) == tokens(a) for a in answer_aliases(answer)) or same_value(value, answer)


def decide(record: ExampleRecord) -> dict[str, bool]:
    """Each claim turn -> whether its own words call it true: read from the history."""
    turns = {t.dia_id: t for s in record.past_sessions for t in session_turns(s.content)}
    decided = {}
    for claim in _meta(record)["claims"]:
        text = turns[claim["dia_id"]].text
        if claim["value"]:
            assert tokens(claim["value"]) and " ".join(tokens(claim["value"])) in " ".join(tokens(text)), (
                claim,
                text,
            )
        found = read_frame(text)
        if claim["kind"] == "equivalent":  # LoCoMo's own words, stating the whole answer
            decided[claim["dia_id"]] = found is None or found[1]
        else:  # a claim turn, or the evidence (its words closed by a true frame)
            assert found is not None, text
            decided[claim["dia_id"]] = found[1]
    return decided


def _check(records: list[ExampleRecord]) -> dict[str, int]:
    counts = {"answerable": 0, "harmful": 0, "unanswerable": 0}
    for record in records:
        meta, answer = _meta(record), record.scoring_criteria.expected_answer
        if not meta["answerable"]:
            assert not meta["claims"] and not record.gold_memory_ids
            counts["unanswerable"] += 1
            continue
        decided = decide(record)
        labels = {m.memory_id: m.label for m in record.memory_bank}
        for claim in meta["claims"]:
            true = decided[claim["dia_id"]]
            assert labels[claim["dia_id"]] == ("useful" if true else "harmful"), claim
            if claim["means"]:
                assert _reads_as(claim["means"], answer) == true, (record.example_id, claim, answer)
            counts["harmful"] += not true
        counts["answerable"] += 1
    return counts


def test_the_oracle_recovers_every_gold_and_label_of_the_fixture(mini4_records):
    counts = _check(mini4_records)
    assert counts["answerable"] >= 5 and counts["harmful"] >= 10


def test_the_oracle_is_not_fooled_by_a_claim_whose_words_were_turned(mini4_records):
    record = next(r for r in mini4_records if any(c["label"] == "harmful" for c in _meta(r)["claims"]))
    false = next(c for c in _meta(record)["claims"] if c["label"] == "harmful")
    sessions = []
    for session in record.past_sessions:
        content = session.content
        for frame in FRAMES:
            content = content.replace(frame.false, frame.true)
        sessions.append(session.model_copy(update={"content": content}))
    turned = record.model_copy(update={"past_sessions": sessions})
    assert decide(turned)[false["dia_id"]] is True  # the oracle reads words, not labels
    with pytest.raises(AssertionError):
        _check([turned])


@pytest.mark.slow  # builds XL v4 from the real LoCoMo
def test_the_oracle_recovers_every_gold_and_label_of_the_real_build(real4_records):
    counts = _check(real4_records)
    assert counts["answerable"] >= 150 and counts["harmful"] >= 400 and counts["unanswerable"] >= 10
