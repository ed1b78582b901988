"""The answer rules: the paper's containment, and abstention for questions the conversation
does not answer, in the deterministic score, the offline judge and the task score."""

from __future__ import annotations

import pytest
from cmi_inspect.causal_locomo.answer_rules import ANSWER_RULES, abstains, answer_rule
from cmi_inspect.causal_locomo.data import DataError, ScoringCriteria
from cmi_inspect.causal_locomo.judge import JUDGE_PROMPT_VERSION, alias_verdict, judge_prompt
from cmi_inspect.causal_locomo.measures import deterministic_score
from cmi_inspect.causal_locomo.scorers import answer_score

UNANSWERABLE = ScoringCriteria.model_validate(
    {
        "expected_answer": "The conversation does not say.",
        "adversarial_answer": "self-care is important",
        "must_not_include": ["self-care is important"],
        "max_words": 60,
        "answer_rule": "abstains",
    }
)
QUESTION = "What did Caroline realize after her charity race?"


@pytest.mark.parametrize(
    "response",
    [
        "The conversation does not say.",
        "It is not mentioned in the conversation.",
        "Caroline never mentioned a charity race.",
        "There is no information about that.",
        "I don't know.",
        "I can\u2019t tell from the memories.",
        "That was not stated anywhere.",
        "Unknown.",
    ],
)
def test_an_abstention_is_credited(response):
    assert abstains(response)
    assert deterministic_score(response, UNANSWERABLE) == 1.0
    assert alias_verdict(response, UNANSWERABLE).score == 1.0


@pytest.mark.parametrize(
    "response",
    [
        "She realized that self-care is important.",
        "Caroline realized she loves running.",
        "After the race she went home.",
        "It was a great race, nothing was cancelled.",
    ],
)
def test_an_answer_to_an_unanswerable_question_is_not(response):
    assert not abstains(response) or "self-care" in response
    assert alias_verdict(response, UNANSWERABLE).score == 0.0
    assert deterministic_score(response, UNANSWERABLE) < 1.0


def test_an_abstention_that_states_the_adversarial_answer_is_not_credited():
    response = "It is not mentioned, but probably that self-care is important."
    assert abstains(response)
    assert alias_verdict(response, UNANSWERABLE).score == 0.0
    assert deterministic_score(response, UNANSWERABLE) < 1.0


async def test_the_task_score_abstains_through_the_criteria_and_reads_no_hedge_or_denial():
    scored = await answer_score("It is not mentioned.", QUESTION, "", UNANSWERABLE, "strict")
    assert scored.success and scored.total == pytest.approx(1.0)
    assert not scored.hedged.hedged and not scored.negated.negated
    wrong = await answer_score("Self-care is important.", QUESTION, "", UNANSWERABLE, "strict")
    assert not wrong.success


def test_the_paper_rule_is_unchanged_and_left_out_of_the_judge_prompt():
    criteria = ScoringCriteria(expected_answer="7 May 2023", answer_aliases=["May 7, 2023"])
    assert answer_rule(criteria) is ANSWER_RULES["contains"]
    assert deterministic_score("It was on 7 May 2023.", criteria) == 1.0
    assert deterministic_score("It was on May 7, 2023.", criteria) < 1.0  # aliases: judge only
    assert alias_verdict("It was on May 7, 2023.", criteria).score == 1.0
    assert alias_verdict("It is not mentioned.", criteria).score == 0.0
    assert "answer_rule" not in judge_prompt("q", "b", criteria, "r")
    assert '"answer_rule": "abstains"' in judge_prompt("q", "b", UNANSWERABLE, "r")
    assert JUDGE_PROMPT_VERSION.startswith("judge-")


def test_an_unknown_rule_is_a_data_error_naming_the_rules():
    criteria = ScoringCriteria.model_validate({"expected_answer": "x", "answer_rule": "guess"})
    with pytest.raises(DataError, match="Unknown answer_rule 'guess'.*contains, abstains"):
        deterministic_score("x", criteria)
