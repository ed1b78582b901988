"""Conversation-clustered errors: Inspect's metrics against the report's interval, per run.

For each run of a log folder or an export, and each of task score, useful F1 and poison
adoption: Inspect's ``stderr(cluster=)`` and ``ci(method="bootstrap", cluster=)`` on the
run's samples (clustered by conversation), beside the report's 95% cluster-bootstrap
interval (``report.xl_tables.estimate``, what RESULTS prints), whose half-width over 1.96
is set against Inspect's standard error as a ratio. Inspect's bootstrap draws from NumPy's
global generator, seeded here so that a rerun prints the same table.

    python benchmarks/cluster_errors.py docs/results/xl5-runs.json.gz
    python benchmarks/cluster_errors.py logs/release
"""

from __future__ import annotations

import argparse
import math
import statistics
from typing import Any, cast

import numpy as np
from inspect_ai.scorer import SampleScore, Score, ci, stderr

from cmi_inspect.report.export import load_runs
from cmi_inspect.report.runs import Run
from cmi_inspect.report.xl_tables import estimate, row_name

MEASURES = ("score", "useful_f1", "poison_adoption")
Z95 = 1.959964


def compared(run: Run, measure: str) -> list[str] | None:
    """One table row: Inspect's clustered standard error and bootstrap interval, the
    report's interval, and the ratio of the report's implied standard error to Inspect's."""
    rows = [r for r in run.rows if r.conversation]
    if len({r.conversation for r in rows}) < 2:
        return None
    values = [float(getattr(r, measure)) for r in rows]
    scores = [
        SampleScore(score=Score(value=v), sample_id=r.sample, sample_metadata={"c": r.conversation})
        for r, v in zip(rows, values, strict=True)
    ]
    theirs = float(cast(Any, stderr(cluster="c"))(scores))
    np.random.seed(0)
    interval = cast(Any, ci(method="bootstrap", cluster="c"))(scores)
    assert isinstance(interval, dict)
    ours = estimate(values, [str(r.conversation) for r in rows])
    implied = (ours.high - ours.low) / (2 * Z95)
    ratio = implied / theirs if theirs > 1e-9 else math.nan  # no spread: nothing to compare
    return [
        row_name(run),
        measure,
        str(len(rows)),
        str(len({r.conversation for r in rows})),
        f"{statistics.fmean(values):.3f}",
        f"{theirs:.4f}",
        f"{implied:.4f}",
        f"{ratio:.2f}",
        f"[{interval['lower']:.3f}, {interval['upper']:.3f}]",
        f"[{ours.low:.3f}, {ours.high:.3f}]",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", help="a log folder or an export (.json.gz)")
    args = parser.parse_args()
    runs, _, _ = load_runs(args.source)
    header = ["run", "measure", "n", "conversations", "mean", "Inspect stderr(cluster)",
              "report's interval / 3.92", "ratio", "Inspect ci(bootstrap, cluster)",
              "report's interval"]  # fmt: skip
    print("| " + " | ".join(header) + " |")
    print("|" + " --- |" * len(header))
    ratios = []
    for run in sorted(runs, key=lambda r: r.strategy):
        for measure in MEASURES:
            row = compared(run, measure)
            if row is not None:
                print("| " + " | ".join(row) + " |")
                if row[7] != "nan":
                    ratios.append(float(row[7]))
    if ratios:
        print(f"\nratio over {len(ratios)} rows: median {statistics.median(ratios):.2f}, "
              f"range {min(ratios):.2f}-{max(ratios):.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
