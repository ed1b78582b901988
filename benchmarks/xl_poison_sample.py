"""Print a seeded sample of XL's harmful memories with the turns they come from, for a
person to read: does the false value fit its sentence, or does the memory read as
nonsense? (docs/xl.md keeps the sample read and the count.)

    python benchmarks/xl_poison_sample.py --n 50 --seed 0
"""

from __future__ import annotations

import argparse
import random

from cmi_inspect.causal_locomo.data import Turn, session_turns
from cmi_inspect.causal_locomo.data_files import load_records
from cmi_inspect.causal_locomo.dataset import XL_VERSIONS, dataset_path


def sample(xl_version: int, n: int, seed: int) -> list[dict[str, str]]:
    """``n`` harmful memories drawn with ``seed``: the question, its answer, the evidence
    turn, the harmful turn and its memory."""
    records = load_records(dataset_path("xl", xl_version))
    harmful = [(r, m) for r in records for m in r.memory_bank if m.label == "harmful"]
    drawn = random.Random(seed).sample(harmful, min(n, len(harmful)))
    rows = []
    for record, memory in drawn:
        turns = {t.dia_id: t for s in record.past_sessions for t in session_turns(s.content)}
        meta = record.model_extra["metadata"] if record.model_extra else {}
        claims = {c["dia_id"]: c for c in meta.get("claims", [])}
        evidence = claims.get(memory.memory_id, {}).get("slot") or ""
        rows.append({
            "example": record.example_id,
            "question": record.current_task.instruction,
            "answer": record.scoring_criteria.expected_answer,
            "evidence": _said(turns, evidence),
            "harmful turn": _said(turns, memory.memory_id),
            "memory": memory.content,
        })  # fmt: skip
    return rows


def _said(turns: dict[str, Turn], dia_id: str) -> str:
    turn = turns.get(dia_id)
    return f"{dia_id} {turn.speaker}: {turn.text}" if turn else ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--xl-version", type=int, choices=XL_VERSIONS, default=XL_VERSIONS[0])
    parser.add_argument("--n", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    for i, row in enumerate(sample(args.xl_version, args.n, args.seed), start=1):
        print(f"## {i}. {row['example']}: {row['question']} (answer: {row['answer']})")
        for key in ("evidence", "harmful turn", "memory"):
            print(f"- {key}: {row[key]}")
        print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
