"""Print a seeded sample for an outside reader, blind to XL's labels: each item a question,
its gold answer, the useful turns it rests on and one turn to judge, shuffled so that a
harmful memory (a confirmed confuser) cannot be told from a useful turn or a turn no
question rests on by its place. ``--key FILE`` writes which item is which, for scoring the
reading afterwards (docs/xl.md, "Read by an outside reader"); ``--score READING --key
FILE`` scores a reading (one JSON object a line: ``item``, ``turn`` misleading, supports or
neither, ``gold`` yes, partly or no) against the key.

    python benchmarks/xl_confuser_sample.py --n 60 --seed 0 --key /tmp/key.json
    python benchmarks/xl_confuser_sample.py --score reading.jsonl --key /tmp/key.json
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from cmi_inspect.causal_locomo.data import ExampleRecord
from cmi_inspect.causal_locomo.data_files import load_records
from cmi_inspect.causal_locomo.dataset import dataset_path


def _said(record: ExampleRecord, memory_id: str) -> str:
    memory = next(m for m in record.memory_bank if m.memory_id == memory_id)
    return f'{memory.speaker}, {memory.said_on}: "{memory.content}"'


def sample(records: list[ExampleRecord], n: int, seed: int) -> list[dict[str, str]]:
    """``n`` harmful memories of answerable examples, with as many useful and never-labelled
    turns of the same examples mixed in (a third each), shuffled."""
    rng = random.Random(seed)
    answerable = [
        r for r in records if r.model_extra and r.model_extra["metadata"]["group"] == "confirmed"
    ]
    harmful = [(r, c) for r in answerable for c in r.model_extra["metadata"]["confusers"]]  # type: ignore[index]
    drawn = rng.sample(harmful, min(n, len(harmful)))
    items = [(r, c, "harmful") for r, c in drawn]
    for record, _ in drawn[: len(drawn) // 2]:
        meta = record.model_extra["metadata"]  # type: ignore[index]
        items.append((record, rng.choice(meta["useful"]), "useful"))
        labelled = set(meta["useful"]) | set(meta["confusers"]) | set(meta["neutral"])
        other = [m.memory_id for m in record.memory_bank if m.memory_id not in labelled]
        items.append((record, rng.choice(other), "unlabelled"))
    rng.shuffle(items)
    rows = []
    for i, (record, memory_id, kind) in enumerate(items, start=1):
        meta = record.model_extra["metadata"]  # type: ignore[index]
        evidence = [_said(record, m) for m in meta["evidence"]]
        rows.append({
            "item": str(i), "kind": kind, "example": record.example_id,
            "question": record.current_task.instruction,
            "gold": record.scoring_criteria.expected_answer,
            "evidence": "\n  ".join(evidence), "turn": _said(record, memory_id),
        })  # fmt: skip
    return rows


def score(key: dict[str, str], reading: dict[str, dict[str, str]]) -> dict[str, object]:
    """Per kind of turn, how the reader judged it; and the share of golds supported."""
    out: dict[str, object] = {}
    for kind in ("harmful", "useful", "unlabelled"):
        read = [reading[i]["turn"] for i, k in key.items() if k == kind and i in reading]
        out[kind] = {v: read.count(v) for v in ("misleading", "supports", "neither")}
        if kind == "harmful" and read:
            out["harmful_misleading_share"] = round(read.count("misleading") / len(read), 3)
            out["harmful_supports_share"] = round(read.count("supports") / len(read), 3)
    golds = [r["gold"] for r in reading.values()]
    out["gold_supported_share"] = round(sum(g != "no" for g in golds) / len(golds), 3)
    out["items_read"] = f"{len(reading)} of {len(key)}"
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=60, help="harmful memories drawn")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--key", type=Path, help="write item -> kind here (never to the reader)")
    parser.add_argument("--data-file", type=Path, help="an XL file (default: the shipped build)")
    parser.add_argument("--score", type=Path, help="a reader's JSONL, scored against --key")
    args = parser.parse_args(argv)
    if args.score:
        lines = args.score.read_text(encoding="utf-8").splitlines()
        reading = {str(r["item"]): r for r in map(json.loads, filter(str.strip, lines))}
        print(json.dumps(score(json.loads(args.key.read_text()), reading), indent=1))
        return 0
    records = load_records(args.data_file or dataset_path("xl"))
    rows = sample(records, args.n, args.seed)
    for row in rows:
        print(f"## item {row['item']}\nQuestion: {row['question']}\nGold answer: {row['gold']}")
        print(f"Turns the gold rests on:\n  {row['evidence']}\nTurn to judge: {row['turn']}\n")
    if args.key:
        args.key.write_text(json.dumps({r["item"]: r["kind"] for r in rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
