"""The truth rule, applied to the history by an oracle, recovers every gold answer.

The oracle reads each example's claims (which turn states what about its slot, on whose
word), finds each turn in the past sessions, checks that its text carries the value (a
relative date resolved by its session's day), and applies the rule of docs/xl.md: the
value of the latest first-hand statement of the slot's owner; a first-hand retraction
withdraws the value it names; what the other speaker says, or passes on from an outside
source, never overrides a first-hand statement. It never reads a label to decide.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Any

import pytest
from cmi_inspect.causal_locomo.data import ExampleRecord, session_turns
from cmi_inspect.dates import RESTATED, format_day, relative_dates, session_date
from cmi_inspect.text import tokens
from cmi_inspect.xl.answers import answer_aliases, same_value
from cmi_inspect.xl.memories import is_sound, resolve_dates


def _meta(record: ExampleRecord) -> dict[str, Any]:
    assert record.model_extra is not None
    return record.model_extra["metadata"]


def _day(date_time: str | None) -> date:
    day = session_date(date_time)
    assert day is not None
    return day


def _reads_as(value: str | None, answer: str, dated: bool) -> bool:
    """A value reads as the answer: for a word, it holds the answer or is held by it; for a
    date, it is the answer or an alias, or falls within an answer counted from no day."""
    if value is None:
        return False
    if not dated:
        return same_value(value, answer)
    if any(tokens(value) == tokens(a) for a in answer_aliases(answer)):
        return True
    return not re.search(r"\b(?:before|after|ago|since|until)\b", answer, re.I) and is_sound([value], answer)


def _position(dia_id: str) -> tuple[int, int]:
    session, turn = dia_id[1:].split(":")
    return int(session), int(turn)


def _what_it_says(claim: dict[str, Any], text: str, day: date, dated: bool) -> str:
    """What a turn says for the slot, read from its text: its value, or the date it means."""
    value = claim["value"]
    if value and not re.search(rf"(?<!\w){re.escape(value)}(?!\w)", text, re.I):
        raise AssertionError(f"{claim['dia_id']} does not say {value!r}: {text!r}")
    if not dated or claim["stance"] == "retracts":
        return value
    if not value:
        return format_day(day)
    phrases = [p for p in relative_dates(text, day, RESTATED) if text[p.start : p.end].lower() == value.lower()]
    return phrases[0].written() if phrases else value


def oracle(record: ExampleRecord) -> str | None:
    """The slot's value by the truth rule, read from the record's history and claims."""
    meta = _meta(record)
    turns = {t.dia_id: (t, _day(s.date_time)) for s in record.past_sessions for t in session_turns(s.content)}
    slot = meta["slot"]
    owner = turns[slot["dia_id"]][0].speaker
    current = None
    for claim in sorted(meta["claims"], key=lambda c: _position(c["dia_id"])):
        if claim["stance"] == "supports":
            continue
        turn, day = turns[claim["dia_id"]]
        assert turn.speaker == claim["speaker"]
        said = _what_it_says(claim, turn.text, day, slot["dated"])
        assert tokens(said) == tokens(claim["means"]), (claim, said)
        if claim["source"] != "first_hand" or claim["speaker"] != owner:
            continue  # hearsay and outside sources never override the owner's word
        if claim["stance"] == "asserts":
            current = said
        elif current is not None and tokens(current) == tokens(said):
            current = None  # withdrawn, until the owner states a value again
    return current


def _evidence_said(record: ExampleRecord) -> list[str]:
    """What the example's evidence turns say, as the history has them: who spoke to whom,
    on which day, and their words with relative dates resolved."""
    meta = _meta(record)
    speakers = {t.speaker for s in record.past_sessions for t in session_turns(s.content)}
    said = []
    for session in record.past_sessions:
        day = _day(session.date_time)
        for turn in session_turns(session.content):
            if turn.dia_id in meta["evidence"]:
                names = " ".join(sorted(speakers))
                said.append(f"{names} {format_day(day)}: {resolve_dates(turn.text, day)}")
    return said


def _check(records: list[ExampleRecord]) -> dict[str, int]:
    counts = {"slot": 0, "supported": 0, "unanswerable": 0}
    for record in records:
        meta = _meta(record)
        answer = record.scoring_criteria.expected_answer
        if not meta["answerable"]:
            assert not meta["claims"] and not record.gold_memory_ids
            counts["unanswerable"] += 1
        elif meta["slot"] is None:  # no one turn states it: its evidence turns, word by word
            assert is_sound(_evidence_said(record), answer), record.example_id
            assert not any(m.label == "harmful" for m in record.memory_bank)
            counts["supported"] += 1
        else:
            truth = oracle(record)
            assert _reads_as(truth, answer, meta["slot"]["dated"]), (record.example_id, truth, answer)
            for claim in meta["claims"]:
                if claim["stance"] == "asserts" and claim["means"] is not None:
                    assert _reads_as(claim["means"], answer, meta["slot"]["dated"]) == (claim["label"] == "useful")
            counts["slot"] += 1
    return counts


def test_the_oracle_recovers_every_gold_answer_of_the_fixture(mini3_records):
    counts = _check(mini3_records)
    assert counts["slot"] >= 30 and counts["unanswerable"] == 2


def test_the_oracle_is_not_fooled_by_a_history_that_breaks_the_rule(mini3_records):
    record = next(r for r in mini3_records if any(c["stance"] == "retracts" and c["label"] == "harmful"
                                                   for c in _meta(r)["claims"]))  # fmt: skip
    meta = _meta(record)
    evidence = meta["slot"]["dia_id"]
    kept = [c for c in meta["claims"] if c["label"] != "useful" or c["dia_id"] == evidence]
    meta = {**meta, "claims": kept}
    broken = record.model_copy(update={"metadata": meta})
    assert oracle(broken) is None  # the retraction stands once its reaffirmation is gone


@pytest.mark.slow  # builds XL v3 from the real LoCoMo
def test_the_oracle_recovers_every_gold_answer_of_xl3(real3_records):
    counts = _check(real3_records)
    assert counts["slot"] > 900 and counts["unanswerable"] >= 0.05 * len(real3_records)
