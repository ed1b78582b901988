"""Turn a directory of Causal-LoCoMo logs into the paper's tables and figures.

``runs`` reads the logs, ``stats`` holds the mean and its standard error,
``tables`` and ``figures`` render them. Nothing but the logs is read.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict
from pathlib import Path
from typing import Any

from cmi_inspect import reference
from cmi_inspect.report.figures import plot_accuracy_robustness, plot_utility
from cmi_inspect.report.runs import read_runs
from cmi_inspect.report.tables import (
    extraction_note,
    poison_table,
    table1,
    table2,
    table3,
    table3_rows,
)


def _jsonable(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    return value


def build_report(log_dir: str, out: Path | None = None) -> str:
    """The report as Markdown; with ``out``, also report.md, report.json and two PNGs there."""
    runs, notes = read_runs(log_dir)
    rows3 = table3_rows(runs)
    parts = [
        f"# Causal-LoCoMo report: {log_dir}",
        "Rows marked ↳ are the paper's figures (response model GPT-4.1, judge GPT-5), not ours. "
        "± is the standard error over samples; failed counts samples that ended in an error "
        "and are left out of the means; s / sample is the working time each sample spent. "
        "Cached calls were answered from Inspect's model-call cache (no model time), so "
        "compare strategies' cost by calls and tokens, not by seconds, when a run used it.",
        "## Table 1: task score and memory selection",
        table1(runs) if runs else "No usable causal_locomo log.",
        *filter(None, [extraction_note(runs)]),
        "## Table 2: task score by task family",
        table2(runs) if runs else "-",
        "## Table 3: CMI mean utility and stability by memory label",
        table3(rows3) if rows3 else "No CMI run with candidates in this directory.",
    ]
    if any(r.by_attack_kind for r in runs):
        parts += [
            "## Poison adoption by kind of harmful memory",
            "Share of each sample's harmful memories of a kind that the strategy selected "
            "(n: samples with one); the kinds come from the data (`attack_kind`).",
            poison_table(runs),
        ]
    if notes:
        parts += ["## Skipped logs", "\n".join(f"- {n}" for n in notes)]
    markdown = "\n\n".join(parts) + "\n"
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / "report.md").write_text(markdown, encoding="utf-8")
        plot_accuracy_robustness(runs, out / "accuracy_robustness.png")
        plot_utility(runs, out / "utility_by_label.png")
        payload = {
            "log_dir": log_dir,
            "table1": [
                {
                    k: v
                    for k, v in asdict(r).items()
                    if k not in ("candidates", "by_family", "by_attack_kind")
                }
                for r in runs
            ],
            "table2": [
                {
                    "strategy": r.strategy,
                    "model": r.model,
                    "protocol": r.protocol,
                    **{f: asdict(m) for f, m in r.by_family.items()},
                }
                for r in runs
            ],
            "poison_by_kind": [
                {
                    "strategy": r.strategy,
                    "model": r.model,
                    "protocol": r.protocol,
                    **{k: asdict(m) for k, m in r.by_attack_kind.items()},
                }
                for r in runs
            ],
            "table3": rows3,
            "paper": {
                "table1": reference.TABLE1,
                "table2": reference.TABLE2,
                "table3": reference.TABLE3,
            },
            "skipped": notes,
        }
        (out / "report.json").write_text(json.dumps(_jsonable(payload), indent=2), encoding="utf-8")
    return markdown
