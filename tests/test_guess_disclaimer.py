"""The guess-plus-disclaimer benchmark: counts per family under both scorings, on XL
examples built from the LoCoMo-format fixture."""

from __future__ import annotations

import asyncio

from benchmarks.guess_disclaimer import FORMS, abstain_vs_wrong, rates


def test_a_guess_beside_a_disclaimer_is_no_strict_success_but_meets_the_papers_threshold(mini_records):
    strict = asyncio.run(rates(mini_records, "strict"))
    paper = asyncio.run(rates(mini_records, "paper"))
    assert sum(n for _, n in strict.values()) == len(FORMS) * len(mini_records)
    assert all(won == 0 for won, _ in strict.values())
    answerable = {r.task_family for r in mini_records if r.scoring_criteria.answer_rule != "abstains"}
    assert answerable and all(paper[f][0] == paper[f][1] for f in answerable)  # the gold is contained


def test_abstaining_on_an_answerable_question_scores_no_more_than_a_wrong_answer(mini_records):
    for scoring in ("paper", "strict"):
        abstain, wrong = asyncio.run(abstain_vs_wrong(mini_records, scoring))
        assert 0 < abstain <= wrong < 1
