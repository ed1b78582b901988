"""The negation benchmark: its labelled sets are in the schema, name the answer in every
answer, and hold enough of each reading; the rates it prints are counted right."""

from __future__ import annotations

import asyncio
from collections import Counter

from benchmarks.negation_rates import AUDIT_FILE, FILE, LabelledAnswer, load, read_as, report, score_all
from cmi_inspect.causal_locomo.data import ScoringCriteria
from cmi_inspect.causal_locomo.hedge import content


def test_the_set_names_the_answer_in_every_answer_and_holds_sixty_of_each_reading():
    items = load(FILE)
    assert min(Counter(i.reading for i in items).values()) >= 60
    assert {i.part for i in items} == {"tune", "held_out", "fresh"}
    for item in items:
        names = [item.scoring_criteria.expected_answer, *item.scoring_criteria.answer_aliases]
        assert any(n.lower() in item.answer.lower() for n in names), item.answer
    assert len({i.example_id for i in items}) == len(items)


def item(reading: str, answer: str) -> LabelledAnswer:
    return LabelledAnswer(
        example_id=f"{reading}-{answer}",
        reading=reading,  # type: ignore[arg-type]
        part="tune",
        request="When did Priya adopt Comet?",
        answer=answer,
        scoring_criteria=ScoringCriteria(expected_answer="3 March 2022"),
        gold_behavior="",
    )


def test_the_rates_count_credited_denials_and_refused_affirmations():
    items = [
        item("affirms", "3 March 2022."),
        item("affirms", "Maybe 3 March 2022."),  # labelled as affirming, read as a hedge: refused
        item("denies", "It was not 3 March 2022."),
        item("hedges", "3 March 2022, I guess."),
    ]
    table = report(items, asyncio.run(score_all(items)))
    assert "| tune | contains | strict | 0.000 (0/1) | 0.000 (0/1) | 0.500 (1/2) |" in table
    assert "| tune | contains | affirms | 1 | 0 | 1 |" in table
    assert "| held_out | contains | paper | n/a | n/a | n/a |" in table


def test_the_audit_set_holds_a_hundred_of_each_sort_in_both_families():
    items = load(AUDIT_FILE)
    contains = [i for i in items if i.scoring_criteria.answer_rule == "contains"]
    abstains = [i for i in items if i.scoring_criteria.answer_rule == "abstains"]
    counts = Counter(i.reading for i in contains)
    assert counts["denies"] >= 100 and counts["affirms"] >= 100  # denials, and assertions that look denied
    assert len([i for i in items if i.reading == "hedges"]) >= 100  # a value beside a disclaimer
    assert {i.reading for i in abstains} == {"affirms", "hedges"}  # pure abstentions, and hedges
    assert {i.part for i in items} == {"audit", "audit_held_out"}
    for item in contains:
        names = [item.scoring_criteria.expected_answer, *item.scoring_criteria.answer_aliases]
        assert any(n.lower() in item.answer.lower() for n in names), item.answer
    for item in abstains:
        assert item.reading == "affirms" or content(item.answer), item.answer  # a hedge names a value
    assert len({i.example_id for i in items}) == len(items)
    assert not {i.example_id for i in items} & {i.example_id for i in load(FILE)}


def test_the_audit_set_s_tuned_part_is_read_as_labelled():
    items = [i for i in load(AUDIT_FILE) if i.part == "audit"]
    scores = asyncio.run(score_all(items))
    assert [i.answer for i, s in zip(items, scores["strict"], strict=True) if read_as(i, s) != i.reading] == []


def abstaining(reading: str, answer: str) -> LabelledAnswer:
    criteria = {"expected_answer": "The conversation does not say.", "answer_rule": "abstains"}
    return item(reading, answer).model_copy(update={"scoring_criteria": ScoringCriteria.model_validate(criteria)})


def test_under_abstains_an_answer_affirms_when_the_rule_credits_it():
    items = [
        abstaining("affirms", "It is not mentioned."),
        abstaining("hedges", "Lyon, though the conversation does not say for sure."),
        abstaining("affirms", "Probably Lyon; it is not mentioned explicitly."),  # mislabelled: refused
    ]
    table = report(items, asyncio.run(score_all(items)))
    assert "| tune | abstains | strict | n/a | 0.000 (0/1) | 0.500 (1/2) |" in table
    assert "| tune | abstains | affirms | 1 | 0 | 1 |" in table
