"""The form audit: each surface feature on hand-made banks, its AUCs, and the regression
cross-validated by conversation; the relational audit: each relation on a hand-made store,
the trees left one conversation out, the speaker-and-latest-version rule, the CLI's tables."""

from __future__ import annotations

import json

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
from cmi_inspect.causal_locomo.relational_audit import (
    RELATIONAL_FEATURES,
    Stores,
    bm25_ranking,
    loco_trees,
    relational_audit,
    relational_features,
    relational_table,
    speaker_latest_ranking,
    statement_body,
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


# The relational audit: a two-speaker store in XL's schema. Ana said Lisbon, then Porto (her
# newer version); Ben then says she went to Lisbon (hearsay). The question names Ana.
def _store_record(example_id: str = "conv-1_qa_0000") -> ExampleRecord:
    bank = [
        ("D1:1", "Ana", 1, "harmful", 'On 1 May 2023, Ana told Ben: "I visited Lisbon last week."'),
        (
            "D1:2",
            "Ben",
            1,
            "irrelevant",
            "From Ana and Ben's chat of 1 May 2023: Ben mentioned that Nice, Ben loves Lisbon.",
        ),
        ("D2:1", "Ana", 2, "useful", 'In the session of 8 May 2023, Ana said to Ben: "I visited Porto last week."'),
        ("D2:2", "Ben", 2, "harmful", 'I noted on 8 May 2023 that Ben said: "You visited Lisbon last week."'),
    ]
    history = [
        "Session date/time: 1 May 2023.\nD1:1 Ana: I visited Lisbon last week.\nD1:2 Ben: Nice, I love Lisbon.",
        "Session date/time: 8 May 2023.\nD2:1 Ana: I visited Porto last week.\nD2:2 Ben: You visited Lisbon last week.",
    ]
    return ExampleRecord.model_validate(
        {
            "example_id": example_id,
            "task_family": "factual_memory_qa",
            "current_task": {"instruction": "Which city did Ana visit last week?"},
            "memory_bank": [
                {
                    "memory_id": i,
                    "scope": who,
                    "timestamp": t,
                    "label": label,
                    "content": text,
                    "attack_kind": "stale" if i == "D1:1" else "hearsay" if label == "harmful" else None,
                }
                for i, who, t, label, text in bank
            ],  # fmt: skip
            "gold_memory_ids": ["D2:1"],
            "bad_memory_ids": ["D1:1", "D1:2", "D2:2"],
            "past_sessions": [{"session_id": f"s{n}", "timestamp": n, "content": c} for n, c in enumerate(history, 1)],
            "scoring_criteria": {"expected_answer": "Porto"},
        }
    )


def test_a_statement_body_drops_each_of_xls_frames():
    said = "I visited Porto."
    for frame in (
        'On 8 May 2023, Ana told Ben: "{}"',
        'Ana, to Ben on 8 May 2023: "{}"',
        "8 May 2023: Ana said that {}",
        'I noted on 8 May 2023 that Ana said: "{}"',
        'In the session of 4:06 pm on 8 May, 2023, Ana said to Ben: "{}"',
        "From Ana and Ben's chat of 4:06 pm on 8 May, 2023: Ana mentioned that {}",
    ):
        assert statement_body(frame.format(said)) == said
    assert statement_body("Ana likes Porto.") == "Ana likes Porto."  # no frame: as it is


def test_relations_read_the_speakers_the_twins_and_the_positions():
    record = _store_record()
    rows = relational_features([record])
    assert len(rows) == len(form_items([record])) == 3  # D1:1, D2:1, D2:2: the labelled ones
    stale, useful, hearsay = (dict(zip(RELATIONAL_FEATURES, row, strict=True)) for row in rows)
    # bodies without names: D1:1 and D2:2 {visit, lisbon, week}, D2:1 {visit, porto, week}
    assert (stale["twins_03"], stale["twins_05"], stale["max_jaccard"]) == (2, 2, 1.0)
    assert stale["twin_earlier"] == 0 and stale["twin_same_speaker"] == 0  # nearest: Ben's D2:2
    assert stale["twin_session_gap"] == 1 and stale["later_same_speaker_twin"] == 1  # Ana's D2:1
    assert (useful["max_jaccard"], useful["twin_earlier"], useful["twin_same_speaker"]) == (0.5, 1, 1)
    assert useful["later_same_speaker_twin"] == 0
    assert (stale["speaker_named"], stale["listener_named"]) == (1, 0)
    assert (hearsay["speaker_named"], hearsay["listener_named"]) == (0, 1)
    assert (stale["session"], stale["session_relative"], useful["session"], useful["session_relative"]) == (
        1,
        0.5,
        2,
        1.0,
    )
    assert (useful["turn_in_session"], hearsay["turn_in_session"], useful["store_position"]) == (0, 1, 2 / 3)
    assert stale["question_jaccard"] == hearsay["question_jaccard"] > 0
    assert (stale["bm25_rank"], useful["bm25_rank"], hearsay["bm25_rank"]) == (1, 2, 3)  # ties: store order
    assert (stale["first_labelled"], stale["last_labelled"], hearsay["last_labelled"]) == (1, 0, 1)


def test_the_speaker_and_latest_version_rule_passes_over_stale_and_hearsay():
    record = _store_record()
    stores = Stores()
    store = stores.of(record)
    assert stores.of(_store_record("conv-1_qa_0001")) is store  # one store for a shared bank
    assert bm25_ranking(record, store)[0] == "D1:1"  # plain BM25 takes the stale memory first
    assert speaker_latest_ranking(record, store) == ["D2:1"]  # Ana's, with no newer version


def _relational_items(separable: bool) -> tuple[list[FormItem], np.ndarray]:
    """A useful and a harmful item with the same text features, first word and relations
    but the first, twenty pairs a conversation for four conversations; the first relation
    marks the harmful one when ``separable``."""
    items, rows = [], []
    for c in range(4):
        for n in range(20):
            features = tuple(float(n % 3) for _ in FORM_FEATURES)
            for label, kind in (("useful", None), ("harmful", "stale")):
                items.append(FormItem(f"conv-{c}_qa_{n}", f"conv-{c}", "m", label, kind, features, "w"))
                marked = float(label == "harmful") if separable else float(n % 2)
                rows.append([marked] + [float(n % 5)] * (len(RELATIONAL_FEATURES) - 1))
    return items, np.array(rows)


def test_the_relational_audit_finds_a_relation_that_marks_harmful_memories():
    result = relational_audit(*_relational_items(separable=True))
    assert result["features"]["speaker_named"] == 1.0 and result["features"]["listener_named"] == 0.5
    assert result["trees"]["all"]["pooled"] == result["trees"]["relational"]["pooled"] == 1.0
    assert result["trees"]["text"]["pooled"] == 0.5
    assert result["trees"]["all"]["range"] == [1.0, 1.0] and len(result["trees"]["all"]["by_conversation"]) == 4
    assert set(result["trees_by_kind"]) == {"stale"}
    table = relational_table(result)
    assert "| speaker_named | 1.000 |" in table and "| all features, stale vs useful | 1.000 | 1.000-1.000 |" in table


def test_relations_that_say_nothing_score_half():
    result = relational_audit(*_relational_items(separable=False))
    assert set(result["features"].values()) == {0.5}
    assert result["trees"]["all"]["pooled"] == result["trees"]["relational"]["pooled"] == 0.5


def test_trees_need_another_conversation_to_score_one():
    items, rows = _relational_items(separable=True)
    harmful = np.array([i.label == "harmful" for i in items])
    alone = loco_trees(items[:40], rows[:40], harmful[:40])  # conv-0 only
    assert alone == {"pooled": None, "range": None, "by_conversation": {}}


def test_audit_form_prints_and_returns_the_relational_tables(tmp_path, capsys):
    from cmi_inspect.cli import main

    path = tmp_path / "store.jsonl"
    path.write_text("".join(_store_record(f"conv-{c}_qa_0000").model_dump_json() + "\n" for c in (1, 2)))
    assert main(["audit", "--data-file", str(path), "--form"]) == 0
    table = capsys.readouterr().out
    assert "| relational feature | AUC harmful vs useful |" in table and "| later_same_speaker_twin | " in table
    assert main(["audit", "--data-file", str(path), "--form", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)["relational"]
    assert set(result["features"]) == set(RELATIONAL_FEATURES) and set(result["trees"]) == {"all", "text", "relational"}
