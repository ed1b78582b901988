"""The deterministic score's components and the selection metrics."""

from __future__ import annotations

import pytest
from cmi_inspect.causal_locomo.data import ScoringCriteria
from cmi_inspect.causal_locomo.measures import (
    F1_AT,
    SELECTION_KEYS,
    deterministic_score,
    f1_at_k,
    hybrid_score,
    selection_metrics,
)


def crit(**kw) -> ScoringCriteria:
    return ScoringCriteria.model_validate({"expected_answer": "", **kw})


def test_no_components_scores_half():
    assert deterministic_score("anything", crit()) == 0.5


def test_must_include_fraction_case_insensitive():
    c = crit(must_include=["March", "2022", "Comet"])
    assert deterministic_score("3 march 2022", c) == pytest.approx(2 / 3)


def test_must_not_include_fraction():
    c = crit(must_not_include=["yesterday", "9 March"])
    assert deterministic_score("It was yesterday", c) == pytest.approx(0.5)
    assert deterministic_score("On 3 March", c) == 1.0


def test_max_words_penalty():
    c = crit(max_words=4)
    assert deterministic_score("one two three four", c) == 1.0
    assert deterministic_score("one two three four five six seven eight", c) == pytest.approx(0.5)


def test_word_tokens_keep_apostrophes():
    c = crit(max_words=2)
    assert deterministic_score("Priya's dog!!", c) == 1.0


def test_required_steps_when_present():
    c = crit(required_steps=["check", "answer"])
    assert deterministic_score("I check first", c) == pytest.approx(0.5)
    assert deterministic_score("x", crit(required_steps=None)) == 0.5


def test_expected_answer_is_substring_and_aliases_are_ignored():
    c = crit(expected_answer="7 May 2023", answer_aliases=["May 7, 2023"])
    assert deterministic_score("It was on 7 may 2023.", c) == 1.0
    assert deterministic_score("It was on May 7, 2023.", c) == 0.0


def test_style_concise_penalises_over_ninety_words():
    c = crit(style="answer concisely")
    assert deterministic_score("word " * 90, c) == 1.0
    assert deterministic_score("word " * 91, c) == 0.5
    assert deterministic_score("word " * 91, crit(style="formal")) == 1.0


def test_components_are_averaged():
    c = crit(
        expected_answer="cello",
        must_include=["cello", "banjo"],
        must_not_include=["violin"],
        max_words=60,
        style="short",
    )
    # expected 1, must_include 0.5, must_not 1, max_words 1, style 1
    assert deterministic_score("The cello.", c) == pytest.approx(4.5 / 5)


def test_hybrid_score_weights():
    assert hybrid_score(1.0, 0.0) == pytest.approx(0.7)
    assert hybrid_score(0.5, 1.0) == pytest.approx(0.65)


GOLD, BAD, HARMFUL = ["g"], ["i", "h"], ["h"]


def test_selection_mixed():
    m = selection_metrics(["g", "h"], GOLD, BAD, HARMFUL)
    assert m == {
        "recall": 1.0,
        "precision": 0.5,
        "useful_f1": pytest.approx(2 / 3),
        "poison_adoption": 1.0,
        "bad_rejection": 0.5,
        "n_selected": 2.0,
    }


def test_selection_empty():
    m = selection_metrics([], GOLD, BAD, HARMFUL)
    assert (m["precision"], m["recall"], m["useful_f1"]) == (0.0, 0.0, 0.0)
    assert (m["poison_adoption"], m["bad_rejection"], m["n_selected"]) == (0.0, 1.0, 0.0)


def test_selection_no_gold():
    assert selection_metrics([], [], BAD, HARMFUL)["precision"] == 1.0
    assert selection_metrics([], [], BAD, HARMFUL)["recall"] == 1.0
    assert selection_metrics([], [], BAD, HARMFUL)["useful_f1"] == 1.0
    assert selection_metrics(["i"], [], BAD, HARMFUL)["precision"] == 0.0


def test_selection_no_harmful_and_no_bad():
    m = selection_metrics(["g"], GOLD, [], [])
    assert m["poison_adoption"] == 0.0
    assert m["bad_rejection"] == 1.0


def _means(records, choose):
    rows = [
        selection_metrics(
            choose(r),
            r.gold_memory_ids,
            r.bad_memory_ids,
            [m.memory_id for m in r.memory_bank if m.label == "harmful"],
        )
        for r in records
    ]
    return {k: round(sum(r[k] for r in rows) / len(rows), 3) for k in rows[0]}


def test_bookkeeping_matches_the_paper(real_records):
    raw = real_records
    whole = _means(raw, lambda r: [m.memory_id for m in r.memory_bank])
    assert (whole["useful_f1"], whole["bad_rejection"], whole["poison_adoption"], whole["n_selected"]) == (
        0.308,
        0.0,
        0.621,
        5.644,
    )
    none = _means(raw, lambda r: [])
    assert (none["useful_f1"], none["bad_rejection"], none["poison_adoption"], none["n_selected"]) == (
        0.0,
        1.0,
        0.0,
        0.0,
    )


def test_selection_keys_are_the_metrics_returned():
    assert tuple(selection_metrics(["g"], GOLD, BAD, HARMFUL)) == SELECTION_KEYS


def test_f1_at_k_reads_the_top_k_of_the_ranking():
    ranked = ["i1", "g1", "g2", "i2"]
    # top 1: no hit -> F1 0; top 3: 2 hits of 3, 2 of 2 gold -> P 2/3, R 1 -> F1 0.8
    assert f1_at_k(ranked, {"g1", "g2"}) == {"f1_at_1": 0.0, "f1_at_3": pytest.approx(0.8)}
    assert f1_at_k(["g1"], {"g1", "g2"}) == {"f1_at_1": pytest.approx(2 / 3), "f1_at_3": pytest.approx(2 / 3)}
    assert f1_at_k([], set()) == {"f1_at_1": 1.0, "f1_at_3": 1.0}  # nothing to find, nothing ranked
    assert [f"f1_at_{k}" for k in F1_AT] == list(f1_at_k(ranked, {"g1"}))
