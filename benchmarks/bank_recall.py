"""What a drawn bank keeps of the labels, and whether it still gives them away.

For each bank size N (``--sizes``, then the whole store), every example's bank is drawn as
``-T bank_size=N`` draws it (``bank_size.draw_bank``). Prints the share of useful memories
kept, their mean share per answerable example (the recall ceiling against the whole store's
labels), the share of answerable examples that keep a useful memory, the share of harmful
memories kept, and the useful F1 and poison adoption (``measures.selection_metrics``,
against the drawn bank's labels, as the task's scorer reads them; mean over all examples)
of two label-free pickers of one memory: the least question-like memory of the bank (the
fewest content words shared with the question, ties at random) and a random memory of the
bank, both seeded per example. A draw that leaks nothing leaves the first no better than
the second. No model is called.

    python benchmarks/bank_recall.py [--limit N] [--sizes 8 32 128]
        [--seed 0] [--dataset xl|release] [--data-file FILE]
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from cmi_inspect.causal_locomo.bank_size import DrawnBank, draw_bank
from cmi_inspect.causal_locomo.data import ExampleRecord
from cmi_inspect.causal_locomo.data_files import load_records
from cmi_inspect.causal_locomo.dataset import dataset_path
from cmi_inspect.causal_locomo.measures import selection_metrics
from cmi_inspect.text import content_words

SIZES = (8, 32, 128)
Picker = Callable[[ExampleRecord, random.Random], str]
"""A label-free picker: the id of the one memory of a record's bank it picks."""


@lru_cache(maxsize=1 << 16)
def _words(text: str) -> frozenset[str]:
    return frozenset(content_words(text))


def least_question_like(record: ExampleRecord, rng: random.Random) -> str:
    """The memory that shares the fewest content words with the question (ties at random)."""
    question = _words(record.current_task.instruction)
    return min(
        record.memory_bank, key=lambda m: (len(question & _words(m.content)), rng.random())
    ).memory_id


def random_memory(record: ExampleRecord, rng: random.Random) -> str:
    return rng.choice(record.memory_bank).memory_id


PICKERS: dict[str, Picker] = {
    "least question-like": least_question_like,
    "random": random_memory,
}


@dataclass(frozen=True)
class Drawn:
    """One example's whole record and its drawn bank."""

    whole: ExampleRecord
    bank: DrawnBank


def drawn(records: Sequence[ExampleRecord], size: int | None) -> list[Drawn]:
    """Each record with its bank drawn down to ``size`` (None: the whole store)."""
    if size is None:
        return [
            Drawn(r, DrawnBank(r, len(r.memory_bank), useful_lost=0, harmful_lost=0))
            for r in records
        ]
    return [Drawn(r, draw_bank(r, size)) for r in records]


def _harmful(record: ExampleRecord) -> set[str]:
    return {m.memory_id for m in record.memory_bank if m.label == "harmful"}


def _ratio(part: float, whole: float) -> float:
    return part / whole if whole else math.nan


def _mean(values: Sequence[float]) -> float:
    return statistics.fmean(values) if values else math.nan


def picked_metrics(draws: Sequence[Drawn], picker: Picker, seed: int) -> tuple[float, float]:
    """Mean useful F1 and poison adoption of a picker's one memory, against each drawn
    bank's labels."""
    rows = []
    for d in draws:
        record = d.bank.record
        pick = picker(record, random.Random(f"{seed}/{record.example_id}"))
        rows.append(
            selection_metrics(
                [pick], record.gold_memory_ids, record.bad_memory_ids, _harmful(record)
            )
        )
    return _mean([r["useful_f1"] for r in rows]), _mean([r["poison_adoption"] for r in rows])


def kept_shares(draws: Sequence[Drawn]) -> list[float]:
    """Of the whole stores' labels: the share of useful memories kept, its mean per
    answerable example (the recall ceiling), the share of answerable examples keeping one,
    and the share of harmful memories kept (nan: none to keep)."""
    answerable = [d for d in draws if d.whole.gold_memory_ids]
    useful = [len(d.whole.gold_memory_ids) for d in answerable]
    lost = [d.bank.useful_lost for d in answerable]
    harmful = sum(len(_harmful(d.whole)) for d in draws)
    return [
        1 - _ratio(sum(lost), sum(useful)),
        _mean([1 - n / of for n, of in zip(lost, useful, strict=True)]),
        _mean([float(n < of) for n, of in zip(lost, useful, strict=True)]),
        1 - _ratio(sum(d.bank.harmful_lost for d in draws), harmful),
    ]


def row(records: Sequence[ExampleRecord], size: int | None, seed: int) -> str:
    """The table's line for one bank size (None: the whole store)."""
    draws = drawn(records, size)
    figures = kept_shares(draws)
    for picker in PICKERS.values():
        figures.extend(picked_metrics(draws, picker, seed))
    return f"| {size or 'whole store'} | " + " | ".join(f"{f:.3f}" for f in figures) + " |"


HEADER = (
    "| bank | useful kept | recall ceiling | answerable with a useful kept | harmful kept | "
    + " | ".join(f"{name}: useful F1 | poison adoption" for name in PICKERS)
    + " |"
)


def report(records: Sequence[ExampleRecord], sizes: Sequence[int], seed: int) -> str:
    """The table, a line a bank size and one for the whole store."""
    lines = [HEADER, "|" + "---|" * HEADER.count(" | ") + "---|"]
    lines += [row(records, size, seed) for size in (*sizes, None)]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--dataset", default="xl", help="xl (default) or release")
    parser.add_argument("--data-file", type=Path, help="a file in the release's schema instead")
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES), help="bank sizes")
    parser.add_argument("--seed", type=int, default=0, help="the pickers' seed")
    parser.add_argument("--limit", type=int, help="the data set's first N examples")
    args = parser.parse_args(argv)
    path = args.data_file or dataset_path(args.dataset)
    records = load_records(path)[: args.limit]
    answerable = sum(1 for r in records if r.gold_memory_ids)
    source = args.data_file or ("XL" if args.dataset == "xl" else path.name)
    print(f"{source}: {len(records)} examples, {answerable} answerable, seed {args.seed}")
    print(report(records, args.sizes, args.seed))


if __name__ == "__main__":
    main()
