"""The reading sheets of XL v5 (``xl.reading``): the pool, the blind sheet, the gold revealed
only once every answer is in."""

import json
from pathlib import Path

import pytest
from cmi_inspect.causal_locomo.xl import reading
from cmi_inspect.causal_locomo.xl.locomo import load_locomo

from conftest import LOCOMO_MINI


@pytest.fixture
def mini(monkeypatch: pytest.MonkeyPatch):
    convs = {c.sample_id: c for c in load_locomo(Path(LOCOMO_MINI))}
    monkeypatch.setattr(reading, "_convs", lambda: convs)
    monkeypatch.setattr(reading, "BATCHES", 2)
    return convs


def test_the_pool_holds_candidates_decoys_and_wrong_person_turns(mini):
    items = reading.pool(list(mini.values()))
    kinds = {it.kind for it in items}
    assert {"candidate", "useful", "random", "unanswerable"} <= kinds
    assert len({it.item for it in items}) == len(items)
    for it in items:
        if it.kind == "useful":
            evidence = [str(e) for e in mini[it.conversation].qa[it.question]["evidence"]]
            assert it.dia_id in evidence


def test_a_sheet_shows_no_gold_and_no_kind(mini, tmp_path):
    reading.write_sheets(tmp_path)
    items = [json.loads(line) for line in (tmp_path / "items.jsonl").read_text().splitlines()]
    sheet = (tmp_path / "batch-00.md").read_text()
    for row in items:
        if row["batch"] != 0:
            continue
        qa = mini[row["conversation"]].qa[row["question"]]
        assert f"## item {row['item']}" in sheet
        assert str(qa["question"]) in sheet
    for word in ("Gold", "candidate", "decoy", "evidence"):
        assert word not in sheet


def test_the_gold_is_revealed_only_once_every_answer_is_in(mini, tmp_path):
    reading.write_sheets(tmp_path)
    items = [json.loads(line) for line in (tmp_path / "items.jsonl").read_text().splitlines()]
    mine = [r for r in items if r["batch"] == 0]
    answers = tmp_path / "batch-00.c.answers.jsonl"
    answers.write_text("".join(json.dumps({"item": r["item"], "answer": None}) + "\n" for r in mine[1:]))
    with pytest.raises(SystemExit, match="1 items have no answer"):
        reading.reveal(tmp_path, 0, "c")
    assert not (tmp_path / "batch-00.c.gold.md").exists()
    with answers.open("a") as f:
        f.write(json.dumps({"item": mine[0]["item"], "answer": "Porto"}) + "\n")
    reading.reveal(tmp_path, 0, "c")
    gold = (tmp_path / "batch-00.c.gold.md").read_text()
    assert gold.count("## item") == len(mine)
    assert 'Your answer from it: "Porto"' in gold
    assert "Gold" in gold


def test_a_second_wave_adds_batches_and_changes_none_already_read(mini, tmp_path, monkeypatch):
    reading.write_sheets(tmp_path)
    first = (tmp_path / "batch-00.md").read_text()
    rows = (tmp_path / "items.jsonl").read_text().splitlines()
    kept = [r for r in rows if json.loads(r)["kind"] != "candidate"]
    (tmp_path / "items.jsonl").write_text("\n".join(kept) + "\n")  # as if the rule had grown since
    reading.write_sheets(tmp_path)
    again = [json.loads(r) for r in (tmp_path / "items.jsonl").read_text().splitlines()]
    assert (tmp_path / "batch-00.md").read_text() == first
    assert {r["kind"] for r in again if r["batch"] >= 2} == {"candidate"}
    assert len({r["item"] for r in again}) == len(again)


def test_the_adjudication_sheet_holds_the_candidates_one_reader_called_misleading(mini, tmp_path):
    from cmi_inspect.causal_locomo.xl.verdicts import READERS

    reading.write_sheets(tmp_path)
    items = [json.loads(line) for line in (tmp_path / "items.jsonl").read_text().splitlines()]
    split = next(r for r in items if r["kind"] == "candidate")
    for reader in READERS:
        for batch in sorted({r["batch"] for r in items}):
            mine = [r for r in items if r["batch"] == batch]
            answers = [{"item": r["item"], "answer": "Porto" if reader == READERS[0] else None} for r in mine]
            verdicts = [
                {"item": r["item"], "verdict": "wrong" if r is split and reader == READERS[0] else "none",
                 "event": "another", "turn_supports_gold": False}
                for r in mine
            ]  # fmt: skip
            for name, rows in (("answers", answers), ("verdicts", verdicts)):
                path = tmp_path / f"batch-{batch:02d}.{reader}.{name}.jsonl"
                path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    reading.adjudication_sheet(tmp_path)
    sheet = (tmp_path / "adjudicate.md").read_text()
    assert sheet.count("## item") == 1 and f"## item {split['item']}" in sheet
    assert 'Readers\' answers from the turn alone: "Porto"; null' in sheet
    settled = {"item": split["item"], "verdict": "weak", "reason": "another slot"}
    (tmp_path / "adjudicated-1.jsonl").write_text(json.dumps(settled) + "\n")
    reading.adjudication_sheet(tmp_path)  # a later wave's sheet leaves out what is settled
    assert (tmp_path / "adjudicate.md").read_text().count("## item") == 0
