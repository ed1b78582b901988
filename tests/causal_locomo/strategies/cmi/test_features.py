"""The learned selector's features on hand-made candidates: bank-specific conflicts, gaps
relative to the other candidates, and what the intervention answers say."""

from __future__ import annotations

from dataclasses import replace

import pytest
from cmi_inspect.causal_locomo.strategies.cmi.diagnostics import Candidate
from cmi_inspect.causal_locomo.strategies.cmi.evidence import Support
from cmi_inspect.causal_locomo.strategies.cmi.features import (
    CAUSAL,
    FEATURES,
    NON_CAUSAL,
    FeatureInputs,
    common_words,
    feature_rows,
)

# one conversation's memories share its people and frames ("Priya", "told", "Marco")
BANK = {
    "m1": "Priya told Marco that she adopted a greyhound named Comet in June.",
    "m2": "Priya told Marco that she adopted a greyhound named Rocket in June.",
    "m3": "Priya told Marco that the bakery on Elm Street closed for good.",
    "m4": "Priya told Marco that her sister moved to Lisbon for work.",
    "m5": "Priya told Marco that she ran her first half marathon.",
    "m6": "Marco told Priya that he painted the kitchen yellow.",
}


def candidate(key: str, rank: int, support: float, answer: str | None = None, **kw) -> Candidate:
    return Candidate(
        key=key,
        rank=rank,
        proposal_score=1.0 - rank / 10,
        memory_support=Support(score=support),
        answer_with=answer,
        **kw,
    )


def inputs(candidates: list[Candidate], **kw) -> FeatureInputs:
    return FeatureInputs(
        request="What is the name of Priya's greyhound?",
        candidates=candidates,
        texts={c.key: BANK[c.key] for c in candidates},
        bank=list(BANK.values()),
        cosines={c.key: 0.9 - c.rank / 100 for c in candidates},
        **kw,
    )


def test_words_most_of_the_bank_shares_are_common():
    common = common_words(list(BANK.values()))
    assert {"priya", "told", "marco"} <= common
    assert not {"greyhound", "adopt", "comet"} & common  # two memories of six, or one


def test_a_word_of_one_memory_is_never_common():
    assert common_words(["Comet", "Rocket"]) == frozenset()


def test_versions_of_a_claim_conflict_and_the_shared_frame_does_not():
    x = inputs([candidate("m1", 1, 0.9), candidate("m2", 2, 0.4), candidate("m3", 3, 0.2)])
    first, second, third = feature_rows(x, NON_CAUSAL)
    assert first["versions"] == second["versions"] == 1.0
    assert third["versions"] == 0.0  # it shares "Priya told Marco" with both, nothing else
    assert first["version_support_gap"] == pytest.approx(0.5)
    assert second["version_support_gap"] == pytest.approx(-0.5)
    assert third["version_support_gap"] == 0.0


def test_gaps_are_measured_against_the_best_other_candidate():
    x = inputs([candidate("m1", 1, 0.9), candidate("m3", 2, 0.2), candidate("m4", 3, 0.5)])
    rows = feature_rows(x, NON_CAUSAL)
    assert [r["support_gap"] for r in rows] == pytest.approx([0.4, -0.7, -0.4])
    assert rows[0]["proposal_gap"] == 0.0 and rows[1]["proposal_gap"] < 0
    assert rows[0]["cosine_gap"] == 0.0 and rows[2]["cosine_gap"] == pytest.approx(-0.02)
    assert [r["rank"] for r in rows] == [1.0, 2.0, 3.0]


def test_request_coverage_is_the_share_of_the_requests_words_in_the_memory():
    x = inputs([candidate("m1", 1, 0.9), candidate("m4", 2, 0.5)])
    rows = feature_rows(x, ["request_coverage"])
    # "priya" and "greyhound" ("name" is a stop word): both in m1, only "priya" in m4
    assert rows[0]["request_coverage"] == pytest.approx(1.0)
    assert rows[1]["request_coverage"] == pytest.approx(0.5)


def test_causal_features_read_the_answers_and_their_support():
    candidates = [
        candidate(
            "m1",
            1,
            0.9,
            "His name is Comet.",
            answer_perturbed="His name is Comet.",
            support_with=Support(score=0.8),
            support_perturbed=Support(score=0.8),
        ),
        candidate(
            "m2",
            2,
            0.4,
            "His name is Rocket.",
            answer_perturbed="I do not know.",
            support_with=Support(score=0.1),
            support_perturbed=Support(score=0.0),
        ),
    ]
    x = inputs(candidates, answer_no_memory="I do not know.", support_no_memory=Support(score=0.0))
    first, second = feature_rows(x, CAUSAL)
    assert first["utility"] == pytest.approx(0.8) and second["utility"] == pytest.approx(0.1)
    assert first["utility_gap"] == 0.0 and second["utility_gap"] == pytest.approx(-0.7)
    assert first["stability"] == 0.0 and second["stability"] == pytest.approx(0.1)
    assert first["answer_changed"] == second["answer_changed"] == 1.0
    assert first["perturbed_changed"] == 0.0 and second["perturbed_changed"] == 1.0
    assert first["answer_from_memory"] == 1.0  # "comet" is the answer's own word, in m1
    assert first["answer_agreement"] == 0.0  # Comet and Rocket say different things
    assert first["answer_denies"] == second["answer_denies"] == 0.0


def test_an_answer_that_takes_something_back_denies():
    denial = candidate("m1", 1, 0.9, "His name was never Comet.")
    x = inputs([denial, candidate("m2", 2, 0.4, "Rocket.")])
    assert [r["answer_denies"] for r in feature_rows(x, ["answer_denies"])] == [1.0, 0.0]
    asked_negatively = replace(x, request="Which dog does Priya not own?")
    assert feature_rows(asked_negatively, ["answer_denies"])[0]["answer_denies"] == 0.0


def test_the_feature_sets_split_on_whether_they_read_answers():
    assert set(NON_CAUSAL) < set(CAUSAL) == set(FEATURES)
    assert all(not FEATURES[n].causal for n in NON_CAUSAL)
    # a non_causal row is computable with no intervention at all
    x = inputs([candidate("m1", 1, 0.9), candidate("m2", 2, 0.4)])
    assert all(len(r) == len(NON_CAUSAL) for r in feature_rows(x, NON_CAUSAL))
