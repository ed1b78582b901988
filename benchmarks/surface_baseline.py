"""How far form alone selects: a model-free surface selector, cross-fitted by conversation.

Every memory of every bank is described by the form audit's surface features (length,
sentences, the share of its word 3-grams found in the history, word overlap with the
request, negators, brackets, its largest word overlap with another memory of its bank, its
first word: ``causal_locomo.form_audit``). A logistic regression on them, fitted on the
other conversations' examples (useful against the rest; all labelled memories and a hashed
sample of the irrelevant ones), scores each memory of a conversation's examples; the
selector keeps the ``k`` most probable of each bank. Prints useful F1 and poison adoption
(``measures.selection_metrics``), over all examples and over the answerable ones, for each
``k``. No model is called.

    python benchmarks/surface_baseline.py [--dataset xl] [--xl-version 3] [--bank-size 8]
        [--k 1 3] [--limit N]
"""

from __future__ import annotations

import argparse
import hashlib
import statistics

import numpy as np

from cmi_inspect.causal_locomo.bank_size import smaller_bank
from cmi_inspect.causal_locomo.data_files import load_records
from cmi_inspect.causal_locomo.dataset import dataset_path
from cmi_inspect.causal_locomo.form_audit import form_items, surface_scores
from cmi_inspect.causal_locomo.measures import selection_metrics

IRRELEVANT_PER_EXAMPLE = 40
"""How many irrelevant memories of each training example the regression sees (a hash
draws them), beside every labelled one."""


def _drawn(example_id: str, memory_id: str, sizes: dict[str, int]) -> bool:
    """Whether an irrelevant memory is among the IRRELEVANT_PER_EXAMPLE its example's
    training rows hold, on average (a hash decides)."""
    digest = hashlib.sha256(f"{example_id}/{memory_id}".encode()).digest()
    return int.from_bytes(digest[:8]) / 2**64 < IRRELEVANT_PER_EXAMPLE / sizes[example_id]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", default="xl", help="xl (default) or release")
    parser.add_argument("--xl-version", type=int, default=3, choices=(3, 2))
    parser.add_argument("--bank-size", type=int, help="draw each bank down to N memories")
    parser.add_argument("--k", type=int, nargs="+", default=[1, 3], help="memories kept")
    parser.add_argument("--limit", type=int, help="the data set's first N examples")
    args = parser.parse_args()
    records = load_records(dataset_path(args.dataset, args.xl_version))[: args.limit]
    if args.bank_size:
        records = [smaller_bank(r, args.bank_size) for r in records]
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
    print("| k | examples | useful F1 | poison adoption |")
    print("|---|---|---|---|")
    for k in args.k:
        answerable = [r for r in records if r.gold_memory_ids]
        for name, chosen in (("all", records), ("answerable", answerable)):
            rows = []
            for record in chosen:
                ranked = sorted(by_example[record.example_id], key=lambda s: (-s[0], s[1]))
                picked = [memory_id for _, memory_id in ranked[:k]]
                harmful = [m.memory_id for m in record.memory_bank if m.label == "harmful"]
                rows.append(
                    selection_metrics(
                        picked, record.gold_memory_ids, record.bad_memory_ids, harmful
                    )
                )
            f1 = statistics.mean(r["useful_f1"] for r in rows)
            poison = statistics.mean(r["poison_adoption"] for r in rows)
            print(f"| {k} | {name} ({len(rows)}) | {f1:.3f} | {poison:.3f} |")


if __name__ == "__main__":
    main()
