"""The negation benchmark: its labelled set is in the schema, names the answer in every
answer, and holds at least 60 of each reading; the rates it prints are counted right."""

from __future__ import annotations

import asyncio
from collections import Counter

from benchmarks.negation_rates import FILE, LabelledAnswer, load, report, score_all
from cmi_inspect.causal_locomo.data import ScoringCriteria


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
    assert "| tune | strict | 0.000 (0/1) | 0.000 (0/1) | 0.500 (1/2) |" in table
    assert "| tune | affirms | 1 | 0 | 1 |" in table
    assert "| held_out | paper | n/a | n/a | n/a |" in table
