"""Reading XL v5's candidates: the sheets readers answer, the gold shown only afterwards, and
the verdict file the builder reads.

The rule (``confusers``) proposes; readers confirm. Every candidate is read by two readers
with different instructions, in shuffled batches that also hold decoys (an example's own
evidence turns, and random turns of the same topic that no question rests on), each item
named by an opaque id. A reader first answers the question from the turn alone, with its
speaker, session date and previous turn, without the gold (``sheet``); only once every
answer of the batch is written does ``reveal`` show the gold, the example's evidence turns
and the reader's own answer, to classify it (the gold, a wrong answer of the right type, an
answer of another type, none). The sheets hold LoCoMo's text and stay outside the
repository; the verdict file (``VERDICTS``) holds ids and verdicts only.

``python -m cmi_inspect.causal_locomo.xl.reading DIR
{sheets,calibration,reveal,adjudication,collect}`` runs each step.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from cmi_inspect.causal_locomo.bank_size import bm25_scores
from cmi_inspect.causal_locomo.data import Turn
from cmi_inspect.causal_locomo.xl.answers import stems
from cmi_inspect.causal_locomo.xl.confusers import (
    Question,
    asked_person,
    conversation_candidates,
    questions,
    wh_form,
    wrong_person,
)
from cmi_inspect.causal_locomo.xl.locomo import (
    Conversation,
    load_locomo,
    locomo_path,
    normalise_evidence,
)
from cmi_inspect.dates import format_day

VERDICTS = Path(__file__).with_name("verdicts.json")
"""The confirmed labels: ids and verdicts, no text (``collect`` writes it)."""
DECOY_SHARE = 0.15
"""Useful decoys, and random same-topic decoys, each this share of the candidates."""
UNANSWERABLE_READ = 90
"""Wrong-person questions read (drawn by hash), of which the build keeps what it needs."""
BATCHES = 16
"""The first wave's batches; a later wave's hold about ``ITEMS_PER_BATCH`` items each."""
ITEMS_PER_BATCH = 106
CALIBRATION = Path(__file__).with_name("calibration.json")
"""The team's own labels of about 100 pairs, made before any reader read: every reader's
precision on *misleading* is measured against them."""

Kind = Literal["candidate", "useful", "random", "unanswerable"]
Verdict = Literal["gold", "wrong", "off", "none"]


def _hash(*parts: object) -> str:
    return hashlib.sha256("/".join(map(str, ("xl-5-reading", *parts))).encode()).hexdigest()


@dataclass(frozen=True)
class Item:
    """One (question, turn) pair to read; ``kind`` is never shown to a reader."""

    item: str
    conversation: str
    question: int
    dia_id: str
    kind: Kind

    @classmethod
    def of(cls, conv: str, question: int, dia_id: str, kind: Kind) -> Item:
        return cls(_hash(conv, question, dia_id)[:10], conv, question, dia_id, kind)


def _random_turns(conv: Conversation, target: Question, labelled: set[str], n: int) -> list[str]:
    """``n`` turns sharing a topic word with the question that no question rests on."""
    turns = [
        t.dia_id
        for s in conv.sessions.values()
        for t in s.turns
        if t.dia_id not in labelled and stems(t.text) & target.topic
    ]
    return sorted(turns, key=lambda d: _hash("random", conv.sample_id, target.index, d))[:n]


def pool(conversations: Sequence[Conversation]) -> list[Item]:
    """Every item to read: the rule's candidates, the decoys and the wrong-person questions'
    turns, in a fixed order."""
    items: list[Item] = []
    unanswerable = []
    for conv in conversations:
        qs = {q.index: q for q in questions(conv)}
        labelled = {d for item in conv.qa for d in normalise_evidence(item.get("evidence", []))}
        found = conversation_candidates(conv)
        items += [Item.of(conv.sample_id, c.question, c.turn.dia_id, "candidate") for c in found]
        targets = sorted({c.question for c in found}, key=lambda i: _hash(conv.sample_id, i))
        share = round(len(found) * DECOY_SHARE)
        for index in targets[:share]:
            turn = qs[index].evidence[0]
            items.append(Item.of(conv.sample_id, index, turn.dia_id, "useful"))
        chosen = targets[-share:] if share else []
        for index in chosen:
            for dia_id in _random_turns(conv, qs[index], labelled, 1):
                items.append(Item.of(conv.sample_id, index, dia_id, "random"))
        unanswerable += [(conv, w) for w in wrong_person(conv)]
    unanswerable.sort(key=lambda cw: _hash("unanswerable", cw[0].sample_id, cw[1].index))
    for conv, w in unanswerable[:UNANSWERABLE_READ]:
        items += [Item.of(conv.sample_id, w.index, t.dia_id, "unanswerable") for t in w.evidence]
    return items + _calibration_items(conversations, {it.item for it in items})


def _calibration_items(conversations: Sequence[Conversation], taken: set[str]) -> list[Item]:
    """The calibration pairs a reader would not otherwise read (every pair is read)."""
    if not CALIBRATION.is_file():
        return []
    convs = {c.sample_id: c for c in conversations}
    found = []
    for pair in json.loads(CALIBRATION.read_text(encoding="utf-8"))["pairs"]:
        if pair["item"] in taken or pair["conversation"] not in convs:
            continue
        conv = convs[pair["conversation"]]
        evidence = normalise_evidence(conv.qa[pair["question"]].get("evidence", []))
        kind: Kind = "useful" if pair["dia_id"] in evidence else "random"
        found.append(Item.of(conv.sample_id, pair["question"], pair["dia_id"], kind))
    return found


def _previous(conv: Conversation, turn: Turn) -> Turn | None:
    turns = conv.sessions[turn.session].turns
    at = next(i for i, t in enumerate(turns) if t.dia_id == turn.dia_id)
    return turns[at - 1] if at else None


def _turn(conv: Conversation, dia_id: str) -> Turn:
    turn = conv.turn(dia_id)
    assert turn is not None, dia_id
    return turn


def _said(conv: Conversation, turn: Turn) -> str:
    day = format_day(conv.sessions[turn.session].day)
    return f'{turn.speaker}, in a conversation on {day}: "{turn.text}"'


def _question(conv: Conversation, index: int) -> str:
    return str(conv.qa[index]["question"]).strip()


def _gold(conv: Conversation, index: int) -> str:
    item = conv.qa[index]
    return str(item.get("answer", item.get("adversarial_answer", ""))).strip()


def sheet(items: Iterable[Item], convs: dict[str, Conversation]) -> str:
    """The step-one sheet: each item's question, turn and previous turn, no gold."""
    out = []
    for it in items:
        conv = convs[it.conversation]
        turn = _turn(conv, it.dia_id)
        before = _previous(conv, turn)
        out.append(
            f"## item {it.item}\nQuestion: {_question(conv, it.question)}\n"
            f"Turn: {_said(conv, turn)}\n"
            + (
                f'Previous turn: {before.speaker}: "{before.text}"\n'
                if before
                else "Previous turn: (the turn opens its conversation)\n"
            )  # fmt: skip
        )
    return "\n".join(out)


def _asked_turns(conv: Conversation, index: int, asked: str, n: int = 5) -> list[Turn]:
    """The asked person's ``n`` turns most like the question and its adversarial answer."""
    own = [t for s in conv.sessions.values() for t in s.turns if t.speaker == asked]
    query = f"{_question(conv, index)} {_gold(conv, index)}"
    scores = bm25_scores(query, [t.text for t in own])
    ranked = sorted(zip(scores, range(len(own)), own, strict=True), key=lambda x: (-x[0], x[1]))
    return [t for _, _, t in ranked[:n]]


def gold_sheet(
    items: Iterable[Item], convs: dict[str, Conversation], answers: dict[str, Any]
) -> str:
    """The step-two sheet: each item with the gold, the evidence turns and the reader's answer."""
    out = []
    for it in items:
        conv = convs[it.conversation]
        qa = conv.qa[it.question]
        lines = [f"## item {it.item}", f"Question: {_question(conv, it.question)}"]
        if it.kind == "unanswerable":
            asked = asked_person(conv, _question(conv, it.question)) or "?"
            lines.append(
                f"Gold: this question asks about {asked}; the conversation's answer "
                f"({_gold(conv, it.question)!r}) is about the other speaker, so asked of "
                f"{asked} it is unanswerable unless {asked}'s own turns say it."
            )
            lines.append(f"{asked}'s turns most like the question:")
            lines += [f"- {_said(conv, t)}" for t in _asked_turns(conv, it.question, asked)]
        else:
            lines.append(f"Gold answer: {_gold(conv, it.question)}")
            lines.append("Evidence turns the gold rests on:")
            for dia_id in normalise_evidence(qa.get("evidence", [])):
                turn = conv.turn(dia_id)
                if turn is not None:
                    lines.append(f"- {_said(conv, turn)}")
        lines.append(f"Turn read: {_said(conv, _turn(conv, it.dia_id))}")
        lines.append(f"Your answer from it: {json.dumps(answers[it.item])}")
        out.append("\n".join(lines) + "\n")
    return "\n".join(out)


def _read_jsonl(path: Path) -> dict[str, dict[str, Any]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return {str(r["item"]): r for r in map(json.loads, filter(str.strip, lines))}


def _convs() -> dict[str, Conversation]:
    return {c.sample_id: c for c in load_locomo(locomo_path())}


def write_sheets(folder: Path) -> None:
    """The pool's items not yet in ``items.jsonl`` (kinds included: never for readers),
    shuffled into new batches, ``batch-NN.md`` each: a pool that grows is read in waves,
    and no batch already read changes."""
    convs = _convs()
    folder.mkdir(parents=True, exist_ok=True)
    known = _items(folder) if (folder / "items.jsonl").is_file() else []
    seen = {it.item for it, _ in known}
    items = [it for it in pool(list(convs.values())) if it.item not in seen]
    first = max((b for _, b in known), default=-1) + 1
    batches = max(1, round(len(items) / ITEMS_PER_BATCH)) if known else BATCHES
    random.Random(f"xl-5-reading/shuffle/{first}").shuffle(items)
    with (folder / "items.jsonl").open("a", encoding="utf-8") as f:
        for n, it in enumerate(items):
            f.write(json.dumps({**asdict(it), "batch": first + n % batches}) + "\n")
    for b in range(batches):
        batch = [it for n, it in enumerate(items) if n % batches == b]
        path = folder / f"batch-{first + b:02d}.md"
        path.write_text(sheet(batch, convs), encoding="utf-8")
    print(Counter(it.kind for it in items), len(items), f"batches {first}-{first + batches - 1}")


def _items(folder: Path) -> list[tuple[Item, int]]:
    rows = [json.loads(line) for line in (folder / "items.jsonl").read_text().splitlines()]
    return [(Item(**{k: v for k, v in r.items() if k != "batch"}), r["batch"]) for r in rows]


def reveal(folder: Path, batch: int, reader: str) -> None:
    """Write a batch's gold sheet for a reader, once every item has its answer."""
    items = [it for it, b in _items(folder) if b == batch]
    answers_path = folder / f"batch-{batch:02d}.{reader}.answers.jsonl"
    answers = _read_jsonl(answers_path) if answers_path.is_file() else {}
    missing = [it.item for it in items if it.item not in answers]
    if missing:
        sys.exit(f"{answers_path}: {len(missing)} items have no answer yet (first {missing[0]}).")
    text = gold_sheet(items, _convs(), {k: v.get("answer") for k, v in answers.items()})
    (folder / f"batch-{batch:02d}.{reader}.gold.md").write_text(text, encoding="utf-8")
    print(folder / f"batch-{batch:02d}.{reader}.gold.md")


def calibration_sheet(folder: Path, n: int = 100) -> None:
    """The calibration pairs (candidates and decoys, spread over conversations), with the
    gold shown, for the team to label before any reader reads."""
    convs = _convs()
    chosen = sorted((it for it, _ in _items(folder) if it.kind != "unanswerable"),
                    key=lambda it: _hash("calibration", it.item))[:n]  # fmt: skip
    lines = []
    for it in chosen:
        lines.append(gold_sheet([it], convs, {it.item: "(not asked)"}).replace(
            "Your answer from it: \"(not asked)\"\n", ""))  # fmt: skip
    (folder / "calibration.md").write_text("\n".join(lines), encoding="utf-8")


def adjudication_sheet(folder: Path) -> None:
    """``adjudicate.md``: every candidate exactly one deciding reader called misleading and no
    ``adjudicated*.jsonl`` settles yet, with the gold, its evidence, the turn and both
    readers' blind answers."""
    from cmi_inspect.causal_locomo.xl.verdicts import READERS, call

    convs = _convs()
    rows: dict[str, dict[str, Any]] = {r: {} for r in READERS}
    answers: dict[str, dict[str, Any]] = {r: {} for r in READERS}
    for reader in READERS:
        for path in sorted(folder.glob(f"batch-*.{reader}.verdicts.jsonl")):
            rows[reader].update(_read_jsonl(path))
        for path in sorted(folder.glob(f"batch-*.{reader}.answers.jsonl")):
            answers[reader].update(_read_jsonl(path))
    settled = {i for path in folder.glob("adjudicated*.jsonl") for i in _read_jsonl(path)}
    out = []
    for it, _ in _items(folder):
        if it.kind != "candidate" or it.item in settled:
            continue
        if not all(it.item in rows[r] for r in READERS):
            continue
        temporal = wh_form(_question(convs[it.conversation], it.question)) == "when"
        calls = [call(rows[r][it.item], temporal) for r in READERS]
        if calls.count("misleading") != 1:
            continue
        text = gold_sheet([it], convs, {it.item: None}).split("Your answer from it:")[0]
        said = "; ".join(json.dumps(answers[r][it.item].get("answer")) for r in READERS)
        out.append(text + f"Readers' answers from the turn alone: {said}\n")
    (folder / "adjudicate.md").write_text("\n".join(out), encoding="utf-8")
    print(len(out), "items to adjudicate")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m cmi_inspect.causal_locomo.xl.reading")
    parser.add_argument("folder", type=Path)
    parser.add_argument(
        "step", choices=("sheets", "calibration", "reveal", "adjudication", "collect")
    )
    parser.add_argument("--batch", type=int)
    parser.add_argument("--reader")
    args = parser.parse_args(argv)
    if args.step == "sheets":
        write_sheets(args.folder)
    elif args.step == "calibration":
        calibration_sheet(args.folder)
    elif args.step == "reveal":
        reveal(args.folder, args.batch, args.reader)
    elif args.step == "adjudication":
        adjudication_sheet(args.folder)
    else:
        from cmi_inspect.causal_locomo.xl.verdicts import collect

        collect(args.folder)


if __name__ == "__main__":
    main()
