"""Where a negation starts to deny the expected answer: answers that deny it, against
honest answers that hold a negation elsewhere or doubt themselves."""

from __future__ import annotations

import pytest
from cmi_inspect.causal_locomo.negation import clause_before, mentions, negation

ANSWERS = ["7 May 2023", "May 7, 2023"]


@pytest.mark.parametrize(
    "response",
    [
        "It was not 7 May 2023 that Caroline went to the LGBTQ support group.",
        "It wasn't 7 May 2023.",
        "It wasn’t 7 May 2023.",  # a typographic apostrophe
        "She never went to the group on 7 May 2023.",
        "Not 7 May 2023 but 14 May 2023.",  # not X but Y: X is denied
        "Neither 5 May nor 7 May 2023.",
        "I don't think it was 7 May 2023.",
        "It was not at 1:56 pm on 7 May 2023.",  # a time's colon breaks no clause
        "7 May 2023 is wrong.",
        "The answer May 7, 2023 isn't right.",  # an alias, denied after it
        "May 7, 2023 was incorrect; it was later.",
        # the issue's: denial after the mention, lexical and determiner negation
        "7 May 2023? No.",
        "7 May 2023 - that is wrong.",
        "7 May 2023, which is wrong.",
        "7 May 2023 is not the date.",
        "It is untrue that she went on 7 May 2023.",
        "Hardly 7 May 2023.",
        "I doubt it was 7 May 2023.",
        "Rather than 7 May 2023, she went later.",
        "Instead of 7 May 2023, she went later.",
        "Nobody went on 7 May 2023.",
        "There was no meeting on 7 May 2023.",
        # a denial in a neighbouring sentence
        "The note says 7 May 2023. That is not correct.",
        "That is wrong. The note says 7 May 2023, but she went later.",
        "Earlier I said 7 May 2023, but that was a mistake.",
    ],
)
def test_answers_that_deny_the_expected_answer_are_negated(response):
    assert negation(response, ANSWERS).negated


@pytest.mark.parametrize(
    "response",
    [
        "On 7 May 2023.",
        "She did not go on 5 May; she went on 7 May 2023.",  # the negation is another clause's
        "She didn't go on 5 May, she went on 7 May 2023.",
        "Not 5 May but 7 May 2023.",
        "It was not 5 May - it was 7 May 2023.",
        "It was 7 May 2023, not 5 May.",
        "She didn't go until 7 May 2023.",  # "not until X" affirms X
        "She hasn't been back since 7 May 2023.",
        "The roads weren't safe so she left on 7 May 2023.",
        "I'm not sure it was 7 May 2023.",  # doubt, not denial
        "I am not 100% sure, but it was 7 May 2023.",
        "If I'm not mistaken it was 7 May 2023.",
        "She went not only on 7 May 2023.",
        "The note says it was not 7 May 2023, but it was 7 May 2023.",  # also stated plainly
        "It was not 17 May 2023.",  # 7 May 2023 only inside another date
        "I do not know.",  # no mention, nothing to deny
        # the issue's: a negator that governs another verb, a denied doubt, a comparison
        "She did not hesitate and went on 7 May 2023.",
        "She couldn't wait and went on 7 May 2023.",
        "I can't be more precise than 7 May 2023.",
        "I don't doubt it was 7 May 2023.",
        "No doubt about it: 7 May 2023.",
        "Without a doubt, 7 May 2023.",
        "She could not stop talking about 7 May 2023.",
        "No. It was 7 May 2023.",  # a "no" that answers, before a sentence that states it
        "Nobody but Caroline went, on 7 May 2023.",
        "7 May 2023 is right.",
        "7 May 2023, which is right.",
        "7 May 2023 - no other date fits.",
    ],
)
def test_honest_answers_with_a_negation_elsewhere_are_not(response):
    assert not negation(response, ANSWERS).negated


def test_a_negation_set_off_by_commas_is_missed_on_purpose():
    # the rule would rather miss a denial than deny an honest answer
    assert not negation("It was not, I think, 7 May 2023.", ANSWERS).negated


def test_a_question_in_the_negative_is_answered_in_the_negative():
    asked = "What type of beer does John not like?"
    assert not negation("He doesn't like dark beer.", ["dark beer"], asked).negated
    assert not negation("She couldn't walk her dogs because of a knee injury.", ["knee injury"]).negated
    assert negation("He doesn't like dark beer.", ["dark beer"], "What beer does John like?").negated


def test_names_and_numbers_are_negated_by_the_same_line():
    assert negation("She has never met Melanie.", ["Melanie"]).negated
    assert not negation("She met Melanie, not John.", ["Melanie"]).negated
    assert negation("She doesn't have 3 kids.", ["3", "three"]).negated
    assert not negation("She doesn't have 2 kids; she has 3.", ["3", "three"]).negated


def test_the_denying_clauses_are_kept_for_the_log():
    found = negation("Hello. It was not 7 May 2023 that she went.", ANSWERS)
    assert found.clauses == ["It was not 7 May 2023"]
    assert found.describe() == "negates the expected answer: 'It was not 7 May 2023'"
    assert negation("7 May 2023? No.", ANSWERS).clauses == ["7 May 2023 ... No"]
    assert negation("7 May 2023 is not the date.", ANSWERS).clauses == ["7 May 2023 is not the date."]


def test_the_negator_of_a_verb_is_what_cmi_s_feature_reads_and_it_is_unchanged():
    from cmi_inspect.causal_locomo.negation import NEGATOR

    assert [m.group() for m in NEGATOR.finditer("No, nobody did not go; she can't, never, cannot")] == [
        "not", "can't", "never", "cannot"
    ]  # fmt: skip


def test_mentions_are_whole_phrases_and_the_clause_ends_at_a_break():
    assert mentions("On 7 May 2023 or 17 May 2023.", ["7 May 2023"]) == [(3, 13)]
    assert mentions("anything", ["", " "]) == []
    text = "Not then; but maybe not 7 May"
    assert clause_before(text, text.index("7 May")) == " maybe not "


@pytest.mark.parametrize(
    "response",
    [
        # the audit's: credited before as assertions of the answer
        "7 May 2023 can't be the answer.",
        "7 May 2023 was ruled out.",
        "7 May 2023 seems unlikely.",
        "It's a myth that it was 7 May 2023.",
        "It was anything but 7 May 2023.",
        # more of their kinds
        "7 May 2023 couldn't have been it.",
        "7 May 2023 was later ruled out.",
        "7 May 2023 has been debunked.",
        "7 May 2023 is a red herring.",
        "7 May 2023 doesn't fit the timeline.",
        "7 May 2023 has to be wrong.",
        "7 May 2023 was never the date.",
        "It is false that she went on 7 May 2023.",
        "It would be wrong to say 7 May 2023.",
        "Unlikely that it was 7 May 2023.",
        "She went some day other than 7 May 2023.",
        "She went on anything but 7 May 2023.",
        "I'd rule out 7 May 2023.",
        "7 May 2023? I doubt it.",
        "7 May 2023? Not likely.",
        "7 May 2023, which was later ruled out.",
        "7 May 2023 is what the note claims, and it is false.",
    ],
)
def test_denials_by_meaning_modal_and_ruled_out_are_negated(response):
    assert negation(response, ANSWERS).negated


@pytest.mark.parametrize(
    "response",
    [
        # the audit's: refused before as denials or hedges
        "Nobody disputes 7 May 2023.",
        "There is no reason to doubt 7 May 2023.",
        "It cannot be anything other than 7 May 2023.",
        # more of their kinds: a double negation, an exception after a negation
        "No one denies it was 7 May 2023.",
        "It couldn't have been anything but 7 May 2023.",
        "It isn't a myth that she went on 7 May 2023.",
        "It is not untrue that she went on 7 May 2023.",
        "I see no reason to question 7 May 2023.",
        "Nobody doubts 7 May 2023.",
        "None other than 7 May 2023.",
        "Nothing other than 7 May 2023 fits.",
        "Nothing but 7 May 2023.",
        "It was without doubt 7 May 2023.",
        "No one would mistake it for anything but 7 May 2023.",
        "Caroline never hid that she went on 7 May 2023.",
        "It was not a contest: 7 May 2023.",
    ],
)
def test_double_negations_and_exceptions_affirm(response):
    assert not negation(response, ANSWERS).negated


def test_the_memory_guard_reads_double_negations_and_nouns_alike():
    from cmi_inspect.causal_locomo.negation import negated_clauses

    assert negated_clauses("Nobody disputes that Priya adopted Comet") == []
    assert negated_clauses("It was not film contest, it was something else") == ["It was not film contest"]
    assert negated_clauses("Priya adopted anything but a dog") == ["Priya adopted anything but a dog"]
