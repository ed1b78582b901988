"""Turn a directory of Causal-LoCoMo logs into the paper's tables and figures.

``runs`` reads the logs (``logs`` lists them, ``provenance`` says how each run was made),
``stats`` holds the mean and its standard error,
``tables`` and ``figures`` render them, ``evaluation`` writes the register's evaluation
report. Nothing but the logs is read.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from cmi_inspect.causal_locomo import reference
from cmi_inspect.errors import UserError
from cmi_inspect.report.breakdown import breakdown_json, breakdown_sections, by_kind, by_useful
from cmi_inspect.report.evaluation import evaluation_report
from cmi_inspect.report.export import load_runs
from cmi_inspect.report.figures import (
    plot_accuracy_cost,
    plot_accuracy_robustness,
    plot_bank_sweep,
    plot_poison_by_kind,
    plot_utility,
)
from cmi_inspect.report.runs import DataSet, Run
from cmi_inspect.report.stats import fmt, plus_minus
from cmi_inspect.report.tables import (
    extraction_note,
    identity,
    markdown_table,
    poison_table,
    table1,
    table2,
    table3,
    table3_rows,
)
from cmi_inspect.report.xl_tables import Estimate, bank_sweep, xl_tables
from cmi_inspect.report.xl_targets import targets_table


def _jsonable(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    return value


def data_sets(runs: list[Run]) -> dict[DataSet, list[Run]]:
    """The runs by the data they were scored on, in the order of ``runs``."""
    out: dict[DataSet, list[Run]] = {}
    for r in runs:
        out.setdefault(r.data, []).append(r)
    return out


def data_section(data: DataSet, runs: list[Run]) -> list[str]:
    """The tables of the runs on one data set, under a heading that names it."""
    rows3 = table3_rows(runs)
    parts = [
        f"## Data: {data.title}",
        "### Table 1: task score and memory selection",
        table1(runs),
        *filter(None, [extraction_note(runs)]),
        "### Table 2: task score by task family",
        table2(runs),
        "### Table 3: CMI mean utility and stability by memory label",
        table3(rows3) if rows3 else "No CMI run with candidates on this data.",
    ]
    if any(r.by_attack_kind for r in runs):
        parts += [
            "### Poison adoption by kind of harmful memory",
            "Share of each sample's harmful memories of a kind that the strategy selected "
            "(n: samples with one); the kinds come from the data (`attack_kind`).",
            poison_table(runs),
        ]
    return parts + breakdown_sections(runs)


def unverified_section(runs: list[Run]) -> list[str]:
    """The runs that did not re-score to their logged figures, apart from the ranked ones:
    what they logged beside what re-scoring found, and why."""
    if not runs:
        return []
    header = ["strategy", "model", "protocol", "log", "logged task score", "re-scored task score",
              "re-scored useful F1", "re-scored poison adoption", "problems"]  # fmt: skip
    body = []
    for r in runs:
        again = r.check.rescored if r.check else {}
        why = "; ".join(r.check.problems[:3]) if r.check else "not verified"
        body.append([
            r.strategy, r.model, r.setting, r.log, plus_minus(r.metrics["score"]),
            fmt(again.get("score", math.nan)), fmt(again.get("selection:useful_f1", math.nan)),
            fmt(again.get("selection:poison_adoption", math.nan)), why.replace("|", "/"),
        ])  # fmt: skip
    return [
        "## Unverified runs",
        "Re-scored from their logs in a clean process (`cmi-inspect verify`), these runs did "
        "not reproduce their logged figures, or could not be re-scored: they are not ranked "
        "above or beside the verified ones. The re-scored figures are what their logs "
        "support.",
        markdown_table(header, body),
    ]


def build_report(log_dir: str, out: Path | None = None, evaluation: bool = False) -> str:
    """The report as Markdown (with ``evaluation``, the register's evaluation report instead);
    with ``out``, also report.md, evaluation_report.md, report.json and four PNGs there. Only
    runs that verify (``verify``) are ranked; the others are shown apart, re-scored. An
    ``out`` that cannot be written is one line, before any log is read."""
    if out is not None:
        unwritable(out, lambda: out.mkdir(parents=True, exist_ok=True))
    every, notes, facts = load_runs(log_dir)
    runs = [r for r in every if r.verified]
    evaluated = evaluation_report(runs, log_dir)
    parts = [
        f"# Causal-LoCoMo report: {log_dir}",
        "Each data set (its name and the sha256 of its file) has tables of its own: runs on "
        "different data are never one row. Rows marked ↳ are the paper's figures (response "
        "model GPT-4.1, judge GPT-5), not ours, shown only beside a run of the whole release "
        "with the paper's protocol and scoring and the strategy's default arguments. "
        "n counts distinct samples (× epochs when each ran several times); ± is the standard "
        "error over samples; failed counts sample runs that ended in an error "
        "and are left out of the means; s / sample is the working time each sample spent. "
        "Cached calls were answered from Inspect's model-call cache (no model time), so "
        "compare strategies' cost by calls and tokens, not by seconds, when a run used it.",
    ]
    for data, group in data_sets(runs).items():
        parts += data_section(data, group)
    parts += xl_tables(runs, facts) + targets_table(runs, facts)
    parts += unverified_section([r for r in every if not r.verified])
    if not every:
        parts.append("No usable causal_locomo log.")
    if notes:
        parts += ["## Skipped logs", "\n".join(f"- {n}" for n in notes)]
    markdown = "\n\n".join(parts) + "\n"
    if out is not None:
        sweep = bank_sweep(runs, facts)
        unwritable(out, lambda: write_files(out, log_dir, markdown, evaluated, every, notes, sweep))
    return evaluated if evaluation else markdown


def unwritable(out: Path, write: Callable[[], object]) -> None:
    """Run ``write``; one line naming ``out`` if the system refuses it."""
    try:
        write()
    except OSError as ex:
        why = ex.strerror or ex
        raise UserError(f"--out {out}: cannot write the report there ({why}).") from None


def write_files(
    out: Path,
    log_dir: str,
    markdown: str,
    evaluated: str,
    every: list[Run],
    notes: list[str],
    sweep: dict[str, dict[int | None, dict[str, Estimate]]],
) -> None:
    """report.md, evaluation_report.md, report.json and the figures (XL's bank-size sweep
    where it has one), in ``out``."""
    runs = [r for r in every if r.verified]
    (out / "report.md").write_text(markdown, encoding="utf-8")
    (out / "evaluation_report.md").write_text(evaluated, encoding="utf-8")
    plot_accuracy_robustness(runs, out / "accuracy_robustness.png")
    plot_utility(runs, out / "utility_by_label.png")
    plot_poison_by_kind(runs, out / "poison_by_kind.png")
    plot_accuracy_cost(runs, out / "accuracy_cost.png")
    plot_bank_sweep(sweep, out / "xl_bank_size.png")
    payload = {
        "log_dir": log_dir,
        "table1": [
            {
                **identity(r),
                **{
                    k: v
                    for k, v in asdict(r).items()
                    if k
                    not in ("candidates", "by_family", "by_attack_kind", "data", "check", "rows")
                },
                "examples": r.data.examples,
                "paper_settings": r.paper_settings,
                "verified": r.verified,
                "rescored": r.check.rescored if r.check else {},
                "problems": r.check.problems if r.check else [],
            }
            for r in every
        ],
        "table2": [{**identity(r), **{f: asdict(m) for f, m in r.by_family.items()}} for r in runs],
        "poison_by_kind": [
            {**identity(r), **{k: asdict(m) for k, m in r.by_attack_kind.items()}} for r in runs
        ],
        "by_useful_memories": breakdown_json(runs, by_useful),
        "by_attack_kind": breakdown_json(runs, by_kind),
        "table3": table3_rows(runs),
        "paper": {
            "table1": reference.TABLE1,
            "table2": reference.TABLE2,
            "table3": reference.TABLE3,
        },
        "skipped": notes,
    }
    (out / "report.json").write_text(json.dumps(_jsonable(payload), indent=2), encoding="utf-8")
