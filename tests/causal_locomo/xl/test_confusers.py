"""The candidate rule of XL v5 (``xl.confusers``), on the LoCoMo-format fixture."""

from pathlib import Path

import pytest
from cmi_inspect.causal_locomo.xl import confusers as C
from cmi_inspect.causal_locomo.xl.locomo import load_locomo

from conftest import LOCOMO_MINI


@pytest.fixture(scope="module")
def convs():
    return {c.sample_id: c for c in load_locomo(Path(LOCOMO_MINI))}


@pytest.mark.parametrize(
    ("question", "form"),
    [
        ("How many vases did Priya sell?", "how_many"),
        ("When did Tomas paint the shed?", "when"),
        ("In what year did she move?", "when"),
        ("Which city is Lena moving to?", "what"),
        ("Would Priya enjoy a ceramics exhibition?", "yes_no"),
        ("Why did Nate get a third turtle?", "why"),
    ],
)
def test_wh_form(question, form):
    assert C.wh_form(question) == form


def test_topic_leaves_out_names_months_years_and_question_words():
    words = C.topic("What did Tomas paint in June 2023, and which kind?", ("Tomas", "Priya"))
    assert words == C.stems("paint")


def test_different_answers_compares_words_and_days():
    assert C.different_answers("Porto", "Lisbon")
    assert not C.different_answers("the autumn market", "the spring market")
    assert not C.different_answers("7 May 2023", "May 2023")
    assert C.different_answers("7 May 2023", "2 June 2023")


def test_states_reads_relative_dates_against_the_session_day(convs):
    conv = convs["mini-1"]
    turn = conv.turn("D1:7")
    assert turn is not None
    assert C.states(turn, "The week before 4 March 2023", conv)
    assert not C.states(turn, "2 June 2023", conv)


def test_candidates_are_other_questions_evidence_that_state_their_own_answer(convs):
    conv = convs["mini-1"]
    found = C.conversation_candidates(conv)
    assert found, "the fixture has neighbouring questions"
    qs = {q.index: q for q in C.questions(conv)}
    for c in found:
        target, source = qs[c.question], qs[c.source]
        assert c.same_form == (target.form == source.form)
        assert c.turn.dia_id not in {t.dia_id for t in target.evidence}
        assert C.states(c.turn, source.answer, conv)
        assert not C.states(c.turn, target.answer, conv)
        assert target.category in C.ANSWERABLE_CATEGORIES
    per_question = [sum(c.question == q for c in found) for q in qs]
    assert max(per_question) <= C.PER_QUESTION


def test_a_higher_threshold_proposes_a_subset(convs, monkeypatch):
    monkeypatch.setattr(C, "RETRIEVED", 0)  # the similarity route alone
    monkeypatch.setattr(C, "ANY_FORM_RETRIEVED", 0)
    conv = convs["mini-1"]
    loose = {(c.question, c.turn.dia_id) for c in C.conversation_candidates(conv)}
    tight = {(c.question, c.turn.dia_id) for c in C.conversation_candidates(conv, 0.5)}
    assert tight < loose


def test_wrong_person_questions_ask_one_speaker_what_the_other_said(convs):
    found = list(C.wrong_person(convs["mini-2"]))
    assert [w.asked for w in found] == ["Walter"]
    assert all(t.speaker != "Walter" for w in found for t in w.evidence)


def test_a_turn_bm25_retrieves_is_proposed_whatever_the_questions_similarity(convs, monkeypatch):
    conv = convs["mini-1"]
    monkeypatch.setattr(C, "ANY_FORM_RETRIEVED", 0)
    monkeypatch.setattr(C, "RETRIEVED", 0)
    similar = {(c.question, c.turn.dia_id) for c in C.conversation_candidates(conv, 0.99)}
    monkeypatch.setattr(C, "RETRIEVED", 1000)  # every turn is retrieved
    retrieved = {(c.question, c.turn.dia_id) for c in C.conversation_candidates(conv, 0.99)}
    assert not similar and retrieved
    assert retrieved <= {(c.question, c.turn.dia_id) for c in C.conversation_candidates(conv, 0.0)}


def test_a_turn_of_another_form_is_proposed_only_from_bm25s_top(convs, monkeypatch):
    conv = convs["mini-1"]
    monkeypatch.setattr(C, "ANY_FORM_RETRIEVED", 0)
    same = {(c.question, c.turn.dia_id) for c in C.conversation_candidates(conv)}
    monkeypatch.setattr(C, "ANY_FORM_RETRIEVED", 1000)  # every turn is retrieved
    found = C.conversation_candidates(conv)
    other = {(c.question, c.turn.dia_id) for c in found if not c.same_form}
    assert other, "the fixture has evidence of another form"
    assert {(c.question, c.turn.dia_id) for c in found if c.same_form} == same
    qs = {q.index: q for q in C.questions(conv)}
    assert all(qs[c.question].form != qs[c.source].form for c in found if not c.same_form)
