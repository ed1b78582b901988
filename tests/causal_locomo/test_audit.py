"""The label artefact audit: feature AUCs on hand-made items and on the release."""

from __future__ import annotations

import pytest
from cmi_inspect.causal_locomo.audit import (
    FORM_FEATURES,
    AuditItem,
    audit,
    audit_items,
    bank_overlap,
    bank_overlap_mean,
    bow_classifier_scores,
    history_match,
    turn_share,
    turn_span,
    turn_words,
)
from cmi_inspect.causal_locomo.data import ExampleRecord
from cmi_inspect.report.audits import artefact_table

COMPARISONS = ("harmful_vs_useful", "harmful_vs_irrelevant")


def _items() -> list[AuditItem]:
    """Two banks whose feature AUCs are worked out by hand in the test below."""
    return [
        AuditItem("e1", "harmful", "Jon never lost his job, he did not.", 9, 3),
        AuditItem("e1", "useful", "Jon lost his job. Resolved temporal answer: May 2023.", 2, 3),
        AuditItem("e1", "irrelevant", "Gina likes dance.", 1, 3),
        AuditItem("e2", "harmful", "Ana only owns a dog.", 1, 3),
        AuditItem("e2", "useful", "Ana adopted a cat.", 3, 3),
        AuditItem("e2", "irrelevant", "Ana bakes bread on weekends.", 2, 3),
    ]


def test_feature_aucs_match_hand_computed_values():
    features = audit(_items())["features"]
    expected = {
        "after_history": (0.75, 0.75),
        "timestamp_rank": (0.375, 0.625),
        "answer_suffix": (0.25, 0.5),
        "length": (0.5, 0.875),
        "denial_words": (1.0, 1.0),
    }
    for name, (vs_useful, vs_irrelevant) in expected.items():
        assert features[name]["harmful_vs_useful"] == pytest.approx(vs_useful), name
        assert features[name]["harmful_vs_irrelevant"] == pytest.approx(vs_irrelevant), name
    assert set(features) == {*expected, *FORM_FEATURES, "bow_classifier", "template_words"}


def test_a_comparison_without_harmful_items_is_null():
    items = [i for i in _items() if i.label != "harmful"]
    result = audit(items)
    assert all(v is None for aucs in result["features"].values() for v in aucs.values())
    assert "n/a" in artefact_table(result, "no harmful")


def test_classifier_is_out_of_fold_deterministic_and_finds_a_marker_word():
    items = []
    for bank in range(10):
        items.append(AuditItem(f"b{bank}", "harmful", f"poison claim {bank}", 1, 1))
        items.append(AuditItem(f"b{bank}", "useful", f"plain fact {bank}", 1, 1))
    scores = bow_classifier_scores(items)
    assert list(scores) == list(bow_classifier_scores(items))
    assert audit(items)["features"]["bow_classifier"]["harmful_vs_useful"] == 1.0


def test_banks_sharing_a_text_are_never_split_across_train_and_test():
    # Every harmful text reappears, labelled useful, in another bank: a classifier that
    # saw the copy in training would score it as useful, so only joined folds stay at 0.5.
    items = []
    for bank in range(6):
        items.append(AuditItem(f"b{bank}", "harmful", f"word{bank}", 1, 1))
        items.append(AuditItem(f"c{bank}", "useful", f"word{bank}", 1, 1))
        items.append(AuditItem(f"c{bank}", "useful", f"other{bank}", 1, 1))
    scores = bow_classifier_scores(items)
    by_bank: dict[str, set[float]] = {}
    for item, score in zip(items, scores, strict=True):
        if item.content.startswith("word"):
            by_bank.setdefault(item.content, set()).add(round(float(score), 9))
    assert all(len(values) == 1 for values in by_bank.values())


def test_format_marks_each_auc_inside_or_outside_the_band():
    text = artefact_table(audit(_items()), "hand-made")
    assert text.startswith("### hand-made")
    assert "| after_history | 0.750 | no | 0.750 | no |" in text
    assert "| answer_suffix | 0.250 | no | 0.500 | yes |" in text


@pytest.mark.slow  # every artefact over the whole release, both views
def test_release_paper_view_leaks_and_blind_view_controls_the_leaks(real_records):
    paper = audit(audit_items(real_records, "paper"))["features"]
    assert (paper["after_history"]["harmful_vs_useful"] or 0.0) >= 0.9
    assert (paper["answer_suffix"]["harmful_vs_useful"] or 1.0) <= 0.3
    blind = audit(audit_items(real_records, "blind"))["features"]
    for name in ("after_history", "timestamp_rank", "answer_suffix"):
        for comparison in COMPARISONS:
            value = blind[name][comparison]
            assert value is not None and 0.40 <= value <= 0.60, (name, comparison)


def _record() -> ExampleRecord:
    """A bank in the real schema: a whole-turn memory, a part-turn one, and a false version."""
    session = (
        "Session date/time: 1:56 pm on 8 May, 2023.\n"
        "D1:1 Ana: Wow! I adopted a grey cat named Biscuit from the shelter.\n"
        "D1:2 Ben: We grow tomatoes and beans in the garden."
    )
    bank = [
        {
            "memory_id": "m1",
            "label": "useful",
            "timestamp": 1,
            "content": 'Ana said: "I adopted a grey cat named Biscuit from the shelter."',
        },
        {
            "memory_id": "m2",
            "label": "irrelevant",
            "timestamp": 1,
            "content": 'Ben said: "We grow tomatoes and beans in the garden."',
        },
        {
            "memory_id": "m3",
            "label": "harmful",
            "timestamp": 1,
            "content": 'Ana said: "I adopted a grey cat named Pepper from the shelter."',
        },
    ]
    return ExampleRecord.model_validate(
        {
            "example_id": "e1",
            "task_family": "factual_memory_qa",
            "current_task": {"instruction": "What is Ana's cat called?"},
            "memory_bank": bank,
            "past_sessions": [{"session_id": "s1", "timestamp": 1, "content": session}],
            "gold_memory_ids": ["m1"],
            "bad_memory_ids": ["m2", "m3"],
            "scoring_criteria": {"expected_answer": "Biscuit"},
        }
    )


def test_turn_words_are_the_history_turns_content_words():
    words = turn_words(_record())
    assert len(words) == 2 and "biscuit" in words[0].words and words[1].order[0] == "grow"


def test_form_features_read_how_much_of_a_turn_a_memory_quotes():
    items = audit_items([_record()], "paper")
    shares = dict(zip([i.label for i in items], turn_share(items), strict=True))
    assert shares["irrelevant"] == 1.0  # the whole turn
    assert 0.5 < shares["useful"] < 1.0  # "Wow" left out
    assert shares["harmful"] < shares["useful"]  # and its true name too
    spans = dict(zip([i.label for i in items], turn_span(items), strict=True))
    assert spans["irrelevant"] == 1.0 and spans["harmful"] == spans["useful"] < 1.0  # same extent
    matches = dict(zip([i.label for i in items], history_match(items), strict=True))
    assert matches["harmful"] < matches["useful"]  # "Pepper" is in no turn


def test_bank_overlap_is_the_conflict_relations_word_overlap():
    items = audit_items([_record()], "paper")
    largest = dict(zip([i.label for i in items], bank_overlap(items), strict=True))
    mean = dict(zip([i.label for i in items], bank_overlap_mean(items), strict=True))
    assert largest["useful"] == largest["harmful"] > 0.8 > largest["irrelevant"]
    assert mean["useful"] < largest["useful"]


def test_the_template_classifier_reads_only_frequent_words():
    items = []
    for bank in range(10):
        items.append(AuditItem(f"b{bank}", "harmful", f"noted that claim{bank}", 1, 1))
        items.append(AuditItem(f"b{bank}", "useful", f"said that fact{bank}", 1, 1))
    assert audit(items)["features"]["template_words"]["harmful_vs_useful"] == 1.0  # "noted"
    marked = [AuditItem(i.example_id, i.label, i.content.split()[-1], 1, 1) for i in items]
    assert audit(marked)["features"]["template_words"]["harmful_vs_useful"] == 0.5  # no frequent word
