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
    assert not abstains(response)  # a value offered beside the disclaimer: a hedge
    assert alias_verdict(response, UNANSWERABLE).score == 0.0
    assert deterministic_score(response, UNANSWERABLE) < 1.0


@pytest.mark.parametrize(
    "response",
    [
        "The conversation doesn't say for sure.",  # qualified, but it offers no value
        "I think the conversation doesn't mention it.",  # the guess is about the conversation
        "I'm not sure; the conversation doesn't say.",
        "The conversation mentions the race, but it doesn't say what she realized.",  # a report
        "The memories only talk about the race; they don't say what she realized.",
        "I'm sorry, but that isn't mentioned in the memories.",
        "It doesn't seem to be mentioned.",
        "It isn't mentioned, so I can't say, and I won't guess.",
    ],
)
def test_an_abstention_with_doubt_or_context_but_no_value_is_credited(response):
    assert abstains(response)
    assert deterministic_score(response, UNANSWERABLE) == 1.0
    assert alias_verdict(response, UNANSWERABLE).score == 1.0


@pytest.mark.parametrize(
    "response",
    [
        "She loves running, though the conversation does not say for sure.",  # the audit's
        "Probably that she loves running; it is not mentioned explicitly.",
        "That she loves running, but that isn't stated.",
        "The conversation doesn't say, but I'd guess she loves running.",
        "It isn't mentioned. My best guess is that she loves running.",
        "That she loves running (not explicitly mentioned).",
        "I don't know for sure; maybe that she loves running.",
        "Not stated, but she loves running.",
        "She loves running, though the conversation does not say anything more.",  # of anything
        "Melanie ran the race, but the conversation doesn't say what she realized.",  # even a premise
    ],
)
async def test_a_value_beside_a_disclaimer_is_a_hedge_not_an_abstention(response):
    assert not abstains(response)
    assert deterministic_score(response, UNANSWERABLE) < 1.0
    assert alias_verdict(response, UNANSWERABLE).score == 0.0
    for scoring in ("paper", "strict"):
        assert not (await answer_score(response, QUESTION, "", UNANSWERABLE, scoring)).success


def test_a_statement_that_something_was_said_or_a_denied_disclaimer_is_no_abstention():
    assert not abstains("It was mentioned that she loves running.")
    assert not abstains("It's not unknown: she loves running.")
    assert not abstains("Caroline realized she loves running, and nobody disputes it.")


ANSWERABLE = ScoringCriteria.model_validate(
    {
        "expected_answer": "7 May 2023",
        "answer_aliases": ["May 7, 2023"],
        "adversarial_answer": "9 June 2023",
        "must_not_include": ["9 June 2023", "14 May 2023"],
        "style": "answer concisely using only the applicable conversational memory",
        "max_words": 60,
    }
)
ASKED = "When did Caroline go to the LGBTQ support group?"


async def test_the_audit_s_disclaimer_with_the_gold_fails_contains():
    response = "7 May 2023, though the conversation does not say for sure."
    strict = await answer_score(response, ASKED, "", ANSWERABLE, "strict")
    assert strict.hedged.hedged and strict.verdict.score == 0.0 and not strict.success
    paper = await answer_score(response, ASKED, "", ANSWERABLE, "paper")
    assert paper.verdict.score == 0.0  # the paper's rules credit containment, the judge no hedge


@pytest.mark.parametrize("scoring", ["paper", "strict"])
async def test_the_audit_s_disclaimer_with_another_value_fails_abstains(scoring):
    response = "1 June 2023, though the conversation does not say for sure."
    assert not ANSWER_RULES["abstains"].credits(response, UNANSWERABLE)
    scored = await answer_score(response, QUESTION, "", UNANSWERABLE, scoring)
    assert not scored.success and scored.verdict.score == 0.0


@pytest.mark.parametrize("scoring", ["paper", "strict"])
@pytest.mark.parametrize("abstention", ["The conversation does not say.", "I don't know.", "Not mentioned."])
@pytest.mark.parametrize("wrong", ["1 June 2023.", "She went on 1 June 2023."])
async def test_abstaining_on_an_answerable_question_scores_no_more_than_a_wrong_answer(scoring, abstention, wrong):
    abstained = await answer_score(abstention, ASKED, "", ANSWERABLE, scoring)
    answered = await answer_score(wrong, ASKED, "", ANSWERABLE, scoring)  # names no forbidden value
    assert not abstained.success and not answered.success
    assert abstained.total <= answered.total


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
