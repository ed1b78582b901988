"""How far form alone selects: a model-free surface selector, cross-fitted by conversation.

Every memory of every bank is described by the form audit's surface features (length,
sentences, the share of its word 3-grams found in the history, word overlap with the
request, negators, brackets, its largest word overlap with another memory of its bank, its
first word: ``causal_locomo.form_audit``). A logistic regression on them, fitted on the
other conversations' examples (useful against the rest; all labelled memories and a hashed
sample of the irrelevant ones), scores each memory of a conversation's examples; the
selector keeps the ``k`` most probable of each bank. Prints useful F1 and poison adoption
(``measures.selection_metrics``), over all examples and over the answerable ones, for each
``k``. Beside it, two model-free rankings at the same ``k``: plain BM25 over each bank,
and the "speaker and latest version" rule (``relational_audit.speaker_latest_ranking``:
BM25 over the memories of the speaker the question names, less those a later near-twin
by the same speaker supersedes). No model is called.

    python benchmarks/surface_baseline.py [--dataset xl] [--bank-size 8]
        [--k 1 3] [--limit N]
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
from collections.abc import Sequence

import numpy as np

from cmi_inspect.causal_locomo.bank_size import smaller_bank
from cmi_inspect.causal_locomo.data import ExampleRecord
from cmi_inspect.causal_locomo.data_files import load_records
from cmi_inspect.causal_locomo.dataset import dataset_path
from cmi_inspect.causal_locomo.form_audit import form_items, surface_scores
from cmi_inspect.causal_locomo.measures import selection_metrics
from cmi_inspect.causal_locomo.relational_audit import (
    Stores,
    bm25_ranking,
    speaker_latest_ranking,
)

IRRELEVANT_PER_EXAMPLE = 40
"""How many irrelevant memories of each training example the regression sees (a hash
draws them), beside every labelled one."""


def _drawn(example_id: str, memory_id: str, sizes: dict[str, int]) -> bool:
    """Whether an irrelevant memory is among the IRRELEVANT_PER_EXAMPLE its example's
    training rows hold, on average (a hash decides)."""
    digest = hashlib.sha256(f"{example_id}/{memory_id}".encode()).digest()
    return int.from_bytes(digest[:8]) / 2**64 < IRRELEVANT_PER_EXAMPLE / sizes[example_id]


def _scored(
    records: Sequence[ExampleRecord], ranked: dict[str, list[str]], k: int
) -> tuple[float, float]:
    """Mean useful F1 and poison adoption of the top ``k`` of each record's ranking (memory
    ids, best first, by example id)."""
    rows = []
    for record in records:
        harmful = [m.memory_id for m in record.memory_bank if m.label == "harmful"]
        picked = ranked[record.example_id][:k]
        rows.append(
            selection_metrics(picked, record.gold_memory_ids, record.bad_memory_ids, harmful)
        )
    return (
        statistics.mean(r["useful_f1"] for r in rows),
        statistics.mean(r["poison_adoption"] for r in rows),
    )


def _surface_rankings(records: Sequence[ExampleRecord]) -> dict[str, list[str]]:
    """Each example's memory ids, most probably useful first by the surface regression
    fitted on the other conversations; prints how many memories it scored."""
    items = form_items(records, labels=("useful", "harmful", "irrelevant"))
    groups = np.array([i.group for i in items])
    sizes = {r.example_id: len(r.memory_bank) for r in records}
    drawn = np.array([i.label != "irrelevant" or _drawn(i.example_id, i.memory_id, sizes)
                      for i in items])  # fmt: skip
    scores = np.full(len(items), 0.5)
    for group in sorted(set(groups)):
        held = groups == group
        scores[held] = surface_scores(items, "useful", train_mask=drawn & ~held)[held]
    by_example: dict[str, list[tuple[float, str]]] = {}
    for item, score in zip(items, scores, strict=True):
        by_example.setdefault(item.example_id, []).append((score, item.memory_id))
    print(f"{len(records)} examples, {len(items)} memories, {len(set(groups))} conversations")
    return {
        e: [m for _, m in sorted(s, key=lambda p: (-p[0], p[1]))] for e, s in by_example.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", default="xl", help="xl (default) or release")
    parser.add_argument("--bank-size", type=int, help="draw each bank down to N memories")
    parser.add_argument("--k", type=int, nargs="+", default=[1, 3], help="memories kept")
    parser.add_argument("--limit", type=int, help="the data set's first N examples")
    args = parser.parse_args()
    records = load_records(dataset_path(args.dataset))[: args.limit]
    if args.bank_size:
        records = [smaller_bank(r, args.bank_size) for r in records]
    surface = _surface_rankings(records)
    answerable = [r for r in records if r.gold_memory_ids]
    print("| k | examples | useful F1 | poison adoption |")
    print("|---|---|---|---|")
    for k in args.k:
        for name, chosen in (("all", records), ("answerable", answerable)):
            f1, poison = _scored(chosen, surface, k)
            print(f"| {k} | {name} ({len(chosen)}) | {f1:.3f} | {poison:.3f} |")
    stores = Stores()
    rules = {"bm25": bm25_ranking, "speaker_latest": speaker_latest_ranking}
    ranked = {
        rule: {r.example_id: ranking(r, stores.of(r)) for r in records}
        for rule, ranking in rules.items()
    }
    print("\n| model-free rule | k | examples | useful F1 | poison adoption |")
    print("|---|---|---|---|---|")
    for k in args.k:
        for rule, by_example in ranked.items():
            for name, chosen in (("all", records), ("answerable", answerable)):
                f1, poison = _scored(chosen, by_example, k)
                print(f"| {rule} | {k} | {name} ({len(chosen)}) | {f1:.3f} | {poison:.3f} |")


if __name__ == "__main__":
    main()
