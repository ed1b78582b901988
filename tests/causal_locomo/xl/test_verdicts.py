"""XL v5's verdicts (``xl.verdicts``): a reader's call, the label rule, agreement."""

import json

import pytest
from cmi_inspect.causal_locomo.xl import verdicts as V


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        ({"verdict": "wrong", "event": "another", "turn_supports_gold": False}, "misleading"),
        ({"verdict": "wrong", "event": "same", "turn_supports_gold": False}, "misleading"),
        ({"verdict": "wrong", "event": "another", "turn_supports_gold": True}, "gold"),
        ({"verdict": "gold", "event": "same", "turn_supports_gold": False}, "gold"),
        ({"verdict": "off", "event": "unrelated", "turn_supports_gold": False}, "other"),
        ({"verdict": "none", "event": "unrelated", "turn_supports_gold": False}, "other"),
    ],
)
def test_a_readers_call(row, expected):
    assert V.call(row) == expected


def test_a_wrong_date_from_the_same_occurrence_told_again_is_no_confusion():
    row = {"verdict": "wrong", "event": "same", "turn_supports_gold": False}
    assert V.call(row, temporal=True) == "other"
    assert V.call(row | {"event": "another"}, temporal=True) == "misleading"


def test_alpha_is_one_for_agreement_and_below_zero_for_systematic_disagreement():
    assert V.alpha([("a", "a"), ("b", "b"), ("a", "a")]) == 1.0
    assert V.alpha([("a", "b"), ("b", "a")]) < 0
    # Krippendorff's worked example shape: 4 units, one disagreement
    value = V.alpha([("x", "x"), ("x", "x"), ("y", "y"), ("x", "y")])
    assert 0.4 < value < 0.6


def _item(kind="candidate"):
    return {"item": "i", "kind": kind}


def test_the_label_rule():
    first, second = V.READERS
    both: dict[str, V.Call] = {first: "misleading", second: "misleading"}
    split: dict[str, V.Call] = {first: "misleading", second: "other"}
    gold: dict[str, V.Call] = {first: "gold", second: "gold"}
    other: dict[str, V.Call] = {first: "other", second: "other"}
    assert V._label(_item(), both, {}) == ("harmful", "both")
    assert V._label(_item(), split, {}) == ("neutral", "split")
    assert V._label(_item(), split, {"i": "misleading"}) == ("harmful", "adjudicated")
    assert V._label(_item(), split, {"i": "weak"}) == ("neutral", "adjudicated")
    assert V._label(_item(), gold, {}) == ("useful", "gold_check")
    assert V._label(_item(), {first: "misleading", second: "gold"}, {"i": "misleading"}) == ("neutral", "gold_check")
    assert V._label(_item(), other, {}) == ("neutral", "neither")
    assert V._label(_item("random"), both, {}) == (None, "decoy")
    assert V._label(_item("unanswerable"), split, {}) == ("harmful", "rule")


def test_the_verdict_file_holds_ids_and_figures_no_text(mini_verdicts):
    data = json.loads(mini_verdicts.read_text())
    file = V.VerdictFile.model_validate(data)
    assert {*V.READERS, "adjudicator", *V.REPLACED} <= set(file.readers)
    assert all(len(r["prompt_sha256"]) >= 1 for r in file.readers.values())
    assert file.agreement["items"] == len(file.items)
    assert any(v.label == "harmful" and v.path == "both" for v in file.items)
    assert any(v.label == "neutral" and v.path == "split" for v in file.items)
    text = mini_verdicts.read_text()
    assert "Porto" not in text and "Tomas" not in text


def test_the_adjudicator_settles_the_splits(mini_verdicts, tmp_path):
    import shutil

    from conftest import LOCOMO_MINI

    folder = tmp_path / "reading"
    shutil.copytree(mini_verdicts.parent, folder)
    split = [v.item for v in V.load_verdicts(mini_verdicts).items if v.path == "split"]
    assert split
    rows = [{"item": i, "verdict": "misleading" if n % 2 == 0 else "weak"} for n, i in enumerate(split)]
    (folder / "adjudicated-1.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    settled = {v.item: v for v in V.collect(folder, tmp_path / "v.json", LOCOMO_MINI).items}
    for n, item in enumerate(split):
        assert settled[item].path == "adjudicated"
        assert settled[item].label == ("harmful" if n % 2 == 0 else "neutral")


def test_the_reader_prompts_are_found_where_the_verdict_file_says():
    assert {"reader-a.md", "reader-b.md", "common.md", "adjudicator.md"} <= {p.name for p in V.INSTRUCTIONS.iterdir()}
