"""Where a hedge starts: answers listing several values of the kind asked for, against
honest answers that mention a second value for context."""

from __future__ import annotations

import pytest
from cmi_inspect.causal_locomo.hedge import answer_kind, hedge, offered

REQUEST = "When did Caroline move to Lisbon?"


@pytest.mark.parametrize(
    ("expected", "kind"),
    [("7 May 2023", "date"), ("May 2023", "date"), ("3", "number"), ("twelve", "number"),
     ("Melanie", "name"), ("a pottery class", None)],
)  # fmt: skip
def test_the_kind_of_answer_is_read_from_the_answer_key(expected, kind):
    assert answer_kind(expected) == kind


@pytest.mark.parametrize(
    "response",
    [
        ", ".join(f"{d} May 2023" for d in range(1, 15)),  # fourteen dates, the right one among them
        "Either 7 May 2023 or 14 May 2023.",
        "It was 7 May 2023, 9 May 2023 or maybe 1 June 2023.",
        "On 7 May 2023, 14 May 2023 and 21 May 2023.",
    ],
)
def test_answers_that_spread_over_dates_hedge(response):
    assert hedge(response, "7 May 2023", REQUEST).hedged


@pytest.mark.parametrize(
    "response",
    [
        "On 7 May 2023.",
        "She moved on 7 May 2023, a week after her birthday on 30 April 2023.",  # context
        "Caroline moved in May 2023.",
        "I do not know.",
    ],
)
def test_honest_answers_with_a_second_date_for_context_do_not(response):
    assert not hedge(response, "7 May 2023", REQUEST).hedged


def test_numbers_and_names_hedge_by_the_same_line():
    assert hedge("Three, or maybe 4.", "3", "How many kids does Melanie have?").hedged
    assert not hedge("She has 3 kids; her sister has 2.", "3", "How many kids does Melanie have?").hedged
    asked = "Who did Caroline meet at the gallery?"
    assert hedge("She met Melanie, John, Anna and Priya.", "Melanie", asked).hedged
    assert not hedge("She met Melanie, who had come with John.", "Melanie", asked).hedged
    assert not hedge("Caroline met Melanie.", "Melanie", asked).hedged  # the asked-about name is not a value


def test_an_answer_key_with_two_values_allows_two():
    key = "7 May 2023 and 9 May 2023"
    assert not hedge("On 7 May 2023 and on 9 May 2023.", key, REQUEST).hedged
    assert hedge("On 7, 9, 11 or 13 May 2023: 7 May 2023, 9 May 2023, 11 May 2023, 13 May 2023.", key, REQUEST).hedged


@pytest.mark.parametrize(
    "response",
    [
        "I don't know. Maybe 7 May 2023.",  # the issue's
        "Perhaps 7 May 2023.",
        "It might have been 7 May 2023.",
        "I'm not sure whether it was 7 May 2023.",
        "I can't remember if it was 7 May 2023.",
        "Was it 7 May 2023? I'm not sure.",
        "Not sure. 7 May 2023?",
        "My best guess is 7 May 2023.",
        "I think it was 7 May 2023, but I'm not certain.",
        "Either 7 May 2023 or a few days later.",
        "7 May 2023?",
    ],
)
def test_answers_that_offer_the_answer_only_in_doubt_hedge(response):
    found = hedge(response, "7 May 2023", REQUEST)
    assert found.hedged and found.doubts
    assert found.describe().startswith("offers the expected answer in doubt: ")


@pytest.mark.parametrize(
    "response",
    [
        "I think it was 7 May 2023.",
        "I'm sure it was 7 May 2023.",
        "Was it 7 May 2023? Yes, 7 May 2023.",  # one mention committed to is enough
        "Was it 7 May 2023? Yes.",
        "She moved on 7 May 2023. I don't know where she lived before that, though.",  # a sentence of its own
        "I don't doubt it was 7 May 2023.",
        "It was not 7 May 2023.",  # a denial, not a hedge (``negation``)
    ],
)
def test_answers_that_commit_or_deny_do_not(response):
    assert not hedge(response, "7 May 2023", REQUEST).hedged


def test_doubt_is_read_for_an_alias_and_for_an_answer_of_no_kind():
    assert hedge("Maybe May 7, 2023.", "7 May 2023", REQUEST, ["May 7, 2023"]).hedged
    assert hedge("Possibly a pottery class.", "a pottery class").hedged
    assert not hedge("A pottery class.", "a pottery class").hedged


@pytest.mark.parametrize(
    "response",
    [
        "7 May 2023, though the conversation does not say for sure.",  # the audit's
        "Probably 7 May 2023; it is not mentioned explicitly.",
        "I think it's 7 May 2023 but I'm not sure.",
        "7 May 2023, but that isn't stated.",
        "7 May 2023. That isn't confirmed anywhere, though.",  # the next sentence disclaims it
        "The conversation doesn't say, but it was 7 May 2023.",
        "7 May 2023 (not explicitly mentioned).",
        "The memories never say when she moved; 7 May 2023, I suspect.",  # "when" is what was asked
        "My guess is 7 May 2023, though nothing in the memories confirms it.",
    ],
)
def test_an_answer_beside_a_disclaimer_of_it_hedges(response):
    found = hedge(response, "7 May 2023", REQUEST)
    assert found.hedged and found.doubts


@pytest.mark.parametrize(
    "response",
    [
        "She moved on 7 May 2023; the conversation doesn't say what time.",  # a disclaimer of another thing
        "She moved on 7 May 2023. The conversation does not say where she lived before.",
        "7 May 2023: the memories don't say otherwise.",
        "7 May 2023; it's not unknown, she said so herself.",  # a denied disclaimer
        "Not a guess: 7 May 2023.",  # a denied doubt
        "Not probably, definitely 7 May 2023.",
        "I wouldn't call it a guess: 7 May 2023.",
        "I am not unsure: 7 May 2023.",
    ],
)
def test_a_disclaimer_of_something_else_or_a_denied_doubt_commits(response):
    assert not hedge(response, "7 May 2023", REQUEST).hedged


def test_an_answer_of_several_sentences_is_read_with_the_sentences_it_spans():
    answer = "Go slowly. Stay patient."
    assert hedge(f"{answer}, though the conversation does not say for sure.", answer).hedged
    assert hedge(f"{answer} That isn't stated, though.", answer).hedged
    assert not hedge(f"{answer} That is what she said.", answer).hedged


@pytest.mark.parametrize(
    ("response", "clause"),
    [
        ("Lyon, though the conversation does not say for sure.", "Lyon"),
        ("Probably Lyon; it is not mentioned explicitly.", "Probably Lyon"),
        ("The conversation doesn't say, but I'd guess Lyon.", "I'd guess Lyon"),
        ("The conversation does not say.", None),
        ("Ines talks about her job; it isn't stated.", None),  # a report of what is said
        ("Ines moved, but the conversation doesn't say which city she chose.", "Ines moved"),  # a statement
    ],
)
def test_a_value_is_offered_beside_a_disclaimer_where_no_answer_is_named(response, clause):
    assert offered(response) == clause
