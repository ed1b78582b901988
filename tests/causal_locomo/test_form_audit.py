"""The form audit: each surface feature on hand-made banks, its AUCs, and the regression
cross-validated by conversation."""

from __future__ import annotations

import numpy as np
from cmi_inspect.causal_locomo.data import ExampleRecord
from cmi_inspect.causal_locomo.form_audit import (
    FORM_FEATURES,
    FormItem,
    first_word_scores,
    form_audit,
    form_items,
    surface_scores,
)


def _record(example_id: str, bank: list[tuple[str, str, str]], history: str) -> ExampleRecord:
    return ExampleRecord.model_validate(
        {
            "example_id": example_id,
            "task_family": "factual_memory_qa",
            "current_task": {"instruction": "Which city did Ana visit?"},
            "memory_bank": [
                {"memory_id": i, "label": label, "content": text, "timestamp": 1} for i, label, text in bank
            ],
            "gold_memory_ids": [i for i, label, _ in bank if label == "useful"],
            "bad_memory_ids": [i for i, label, _ in bank if label != "useful"],
            "past_sessions": [{"session_id": "s1", "timestamp": 1, "content": history}],
            "scoring_criteria": {"expected_answer": "Porto"},
        }
    )


HISTORY = "Session date/time: 8 May 2023.\nD1:1 Ana: I visited Porto last week. It was lovely.\nD1:2 Ben: Nice!"


def test_each_feature_reads_the_memory_its_bank_and_its_history():
    record = _record(
        "conv-1_qa_0000",
        [
            ("m1", "useful", "Ana: I visited Porto last week [1 May 2023]. It was lovely."),
            ("m2", "harmful", "Ana: I did not visit Lisbon."),
            ("m3", "irrelevant", "Ben: Nice!"),
        ],
        HISTORY,
    )
    useful, harmful = form_items([record])
    assert (useful.label, harmful.label) == ("useful", "harmful")  # irrelevant: the bank only
    features = dict(zip(FORM_FEATURES, useful.features, strict=True))
    poison = dict(zip(FORM_FEATURES, harmful.features, strict=True))
    assert features["chars"] == len(record.memory_bank[0].content)
    assert features["words"] == 12 and features["sentences"] == 2 and features["brackets"] == 1
    assert features["negators"] == 0 and poison["negators"] == 1
    # 3-grams: "ana i visited", "i visited porto", "visited porto last", "porto last week" are
    # in the history; those with "1 may 2023" and "week 1 may" are not
    assert 0.4 < features["copy3"] < 0.8
    assert features["question_overlap"] == 0.5  # ana, visit; not city or did
    # m2 shares ana and visit with m1, of its four content words: ana, did, visit, lisbon
    assert poison["bank_overlap"] == 0.5
    assert useful.first_word == "ana" and useful.group == "conv-1"


def _items(separable: bool) -> list[FormItem]:
    """Two items a conversation for eight conversations; the first word marks harmful ones
    when ``separable``, and the numbers say nothing either way."""
    items = []
    for c in range(8):
        for label in ("useful", "harmful"):
            word = ("poison" if label == "harmful" else "plain") if separable else "same"
            features = tuple(float((c + k) % 3) for k in range(len(FORM_FEATURES)))
            items.append(FormItem(f"conv-{c}_qa_0", f"conv-{c}", f"m-{label}", label, None, features, word))
    return items


def test_a_first_word_that_marks_the_label_is_caught_out_of_fold():
    marked = first_word_scores(_items(separable=True))
    labels = np.array([i.label == "harmful" for i in _items(True)])
    assert (marked[labels] > marked[~labels]).all()
    result = form_audit(_items(separable=True))
    assert result["features"]["first_word"] == 1.0 and result["classifier"] == 1.0
    assert result["within_bounds"] is False
    assert all(result["features"][f] == 0.5 for f in FORM_FEATURES)


def test_form_that_says_nothing_scores_half_and_is_within_bounds():
    result = form_audit(_items(separable=False))
    assert result["within_bounds"] is True
    assert result["items"] == {"harmful": 8, "useful": 8} and result["groups"] == 8
    assert all(v == 0.5 for v in result["features"].values())


def test_surface_scores_fitted_on_some_items_score_all():
    items = _items(separable=True)
    train = np.array([i.group != "conv-0" for i in items])
    scores = surface_scores(items, "harmful", train_mask=train)
    assert scores[1] > scores[0]  # conv-0's harmful item, never trained on, scores higher
