"""Turn a directory of Causal-LoCoMo logs into the paper's tables and figures.

Logs are read with Inspect's log API. Each successful ``causal_locomo`` log
becomes one row (strategy x model x protocol; the newest log wins when a
directory holds several); other tasks and unfinished runs are skipped with a
note. Memory labels for Table 3 are joined from the dataset here, after the
fact: solvers never see them in the blind protocol.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from inspect_ai.event import ModelEvent
from inspect_ai.log import EvalLog, list_eval_logs, read_eval_log

from cmi_inspect import reference
from cmi_inspect.data import causal_locomo_path, load_records
from cmi_inspect.memory import key_to_memory_id

TASK_NAME = "causal_locomo"
STRATEGY_ORDER = (
    "cmi",
    "reflection_memory",
    "vector_memory",
    "graph_memory",
    "summary_memory",
    "full_history",
    "no_memory",
)
PAPER_CELLS = [f"↳ {reference.PAPER_LABEL}", "gpt-4.1", "paper"]
"""Strategy, model and protocol cells of a row of the paper's figures."""
TABLE1_METRICS = ("score", "success", "useful_f1", "bad_rejection", "poison_adoption", "n_selected")


@dataclass
class Mean:
    mean: float
    stderr: float
    n: int

    @classmethod
    def of(cls, values: Sequence[float]) -> Mean:
        n = len(values)
        mean = sum(values) / n if n else math.nan
        if n < 2:
            return cls(mean, math.nan, n)
        var = sum((v - mean) ** 2 for v in values) / (n - 1)
        return cls(mean, math.sqrt(var / n), n)


@dataclass
class Row:
    """One strategy run, summarised over its samples."""

    strategy: str
    model: str
    protocol: str
    log: str
    samples: int
    errors: int
    metrics: dict[str, Mean]
    calls: float
    input_tokens: float
    output_tokens: float
    seconds_per_sample: float
    by_family: dict[str, float]
    candidates: list[dict[str, Any]] = field(default_factory=list)


def strategy_label(log: EvalLog) -> str:
    """The solver's name, with the CMI ablation when it is not the full method."""
    step = log.plan.steps[-1]
    if step.solver == "cmi" and step.params.get("ablation", "full") != "full":
        return f"cmi[{step.params['ablation']}]"
    return step.solver


def token_usage(sample: Any) -> tuple[int, int]:
    usage = sample.model_usage.values()
    return sum(u.input_tokens for u in usage), sum(u.output_tokens for u in usage)


def model_calls(sample: Any) -> int:
    """Calls the strategy made (the judge's are not counted)."""
    return sum(1 for e in sample.events if isinstance(e, ModelEvent) and e.role != "grader")


def summarise(log: EvalLog, path: str) -> Row:
    samples = [s for s in log.samples or [] if s.error is None and s.scores]
    values: dict[str, list[float]] = defaultdict(list)
    families: dict[str, list[float]] = defaultdict(list)
    calls, tokens_in, tokens_out = [], [], []
    candidates: list[dict[str, Any]] = []
    for s in samples:
        scores = s.scores or {}
        task = scores["task_score"].value
        selection = scores["memory_selection"].value
        assert isinstance(task, dict) and isinstance(selection, dict)
        values["score"].append(float(task["score"]))
        values["success"].append(float(task["success"]))
        for key in TABLE1_METRICS[2:]:
            values[key].append(float(selection[key]))
        families[s.metadata["task_family"]].append(float(task["score"]))
        calls.append(model_calls(s))
        i, o = token_usage(s)
        tokens_in.append(i)
        tokens_out.append(o)
        details = (scores["memory_selection"].metadata or {}).get("details", {})
        for c in details.get("candidates", []):
            candidates.append({"example_id": str(s.id), **c})
    stats = log.stats
    elapsed = math.nan
    if stats.started_at and stats.completed_at:
        elapsed = (
            datetime.fromisoformat(stats.completed_at) - datetime.fromisoformat(stats.started_at)
        ).total_seconds()
    n = len(samples)
    return Row(
        strategy=strategy_label(log),
        model=log.eval.model,
        protocol=str((log.eval.task_args or {}).get("protocol", "paper")),
        log=path,
        samples=n,
        errors=len(log.samples or []) - n,
        metrics={k: Mean.of(v) for k, v in values.items()},
        calls=sum(calls) / n if n else math.nan,
        input_tokens=sum(tokens_in) / n if n else math.nan,
        output_tokens=sum(tokens_out) / n if n else math.nan,
        seconds_per_sample=elapsed / n if n else math.nan,
        by_family={f: sum(v) / len(v) for f, v in sorted(families.items())},
        candidates=candidates,
    )


def collect(log_dir: str) -> tuple[list[Row], list[str]]:
    """Rows of the usable logs, and a note for each log skipped."""
    found: dict[tuple[str, str, str], list[tuple[str, str, Row]]] = defaultdict(list)
    notes: list[str] = []
    for info in list_eval_logs(log_dir):
        name = Path(info.name).name
        header = read_eval_log(info.name, header_only=True)
        if header.eval.task.split("/")[-1] != TASK_NAME:
            notes.append(f"{name}: task {header.eval.task!r} is not {TASK_NAME}; skipped")
            continue
        if header.status != "success":
            notes.append(f"{name}: status {header.status!r}; skipped")
            continue
        row = summarise(read_eval_log(info.name), name)
        found[(row.strategy, row.model, row.protocol)].append((header.eval.created, name, row))
    rows = []
    for logs in found.values():
        *older, (_, newest, row) = sorted(logs, key=lambda x: (x[0], x[1]))
        notes += [f"{name}: superseded by the newer {newest}; skipped" for _, name, _ in older]
        rows.append(row)
    order = {s: i for i, s in enumerate(STRATEGY_ORDER)}
    rows.sort(
        key=lambda r: (r.model, r.protocol, order.get(r.strategy.split("[")[0], 99), r.strategy)
    )
    return rows, notes


def labels_by_memory(data_file: str | None) -> dict[tuple[str, str], str]:
    """(example_id, key as the strategy saw it) -> label, for both protocols."""
    records = load_records(data_file or causal_locomo_path())
    labels: dict[tuple[str, str], str] = {}
    for r in records:
        bank = [m.model_dump() for m in r.memory_bank]
        by_id = {m["memory_id"]: m["label"] for m in bank}
        for protocol in ("paper", "blind"):
            for key, memory_id in key_to_memory_id(r.example_id, bank, protocol).items():
                labels[(r.example_id, key)] = by_id[memory_id]
    return labels


def utility_by_label(
    row: Row, labels: dict[tuple[str, str], str]
) -> dict[str, dict[str, list[float]]]:
    out: dict[str, dict[str, list[float]]] = defaultdict(lambda: {"utility": [], "stability": []})
    for c in row.candidates:
        label = labels.get((c["example_id"], c["key"]), "unknown")
        for key in ("utility", "stability"):
            if c.get(key) is not None:
                out[label][key].append(float(c[key]))
    return out


def _fmt(v: float, digits: int = 3) -> str:
    return "-" if v is None or math.isnan(v) else f"{v:.{digits}f}"


def _pm(m: Mean) -> str:
    return _fmt(m.mean) if math.isnan(m.stderr) else f"{m.mean:.3f} ± {m.stderr:.3f}"


def _table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def table1(rows: list[Row]) -> str:
    header = [
        "strategy",
        "model",
        "protocol",
        "n",
        "task score",
        "success",
        "useful F1",
        "bad rejection",
        "poison adoption",
        "avg memories",
        "calls / sample",
        "input tok / sample",
        "output tok / sample",
        "s / sample",
    ]
    body = []
    for r in rows:
        m = r.metrics
        body.append(
            [
                r.strategy,
                r.model,
                r.protocol,
                str(r.samples),
                *(_pm(m[k]) for k in TABLE1_METRICS),
                _fmt(r.calls, 2),
                _fmt(r.input_tokens, 0),
                _fmt(r.output_tokens, 0),
                _fmt(r.seconds_per_sample, 2),
            ]
        )
        paper = reference.TABLE1.get(r.strategy)
        if paper:
            body.append(
                [
                    *PAPER_CELLS,
                    "87",
                    *(_fmt(paper[k]) for k in TABLE1_METRICS),
                    "",
                    "",
                    "",
                    "",
                ]
            )
    return _table(header, body)


def table2(rows: list[Row]) -> str:
    families = list(reference.FAMILIES)
    extra = sorted({f for r in rows for f in r.by_family} - set(families))
    families += extra
    body = []
    for r in rows:
        body.append(
            [
                r.strategy,
                r.model,
                r.protocol,
                *(_fmt(r.by_family.get(f, math.nan)) for f in families),
            ]
        )
        paper = reference.TABLE2.get(r.strategy)
        if paper:
            body.append([*PAPER_CELLS, *(_fmt(paper.get(f, math.nan)) for f in families)])
    return _table(
        ["strategy", "model", "protocol", *(f.removesuffix("_memory_qa") for f in families)], body
    )


def table3_rows(rows: list[Row], labels: dict[tuple[str, str], str]) -> list[dict[str, Any]]:
    out = []
    for r in rows:
        if not r.candidates:
            continue
        for label, values in sorted(utility_by_label(r, labels).items()):
            out.append(
                {
                    "strategy": r.strategy,
                    "model": r.model,
                    "protocol": r.protocol,
                    "label": label,
                    "candidates": len(values["utility"]),
                    "utility": Mean.of(values["utility"]).mean,
                    "stability": Mean.of(values["stability"]).mean
                    if values["stability"]
                    else math.nan,
                }
            )
    return out


def table3(rows3: list[dict[str, Any]]) -> str:
    body = [
        [
            r["strategy"],
            r["model"],
            r["protocol"],
            r["label"],
            str(r["candidates"]),
            f"{r['utility']:+.3f}",
            "-" if math.isnan(r["stability"]) else f"{r['stability']:+.3f}",
        ]
        for r in rows3
    ]
    for label, ref in reference.TABLE3.items():
        body.append(
            [
                *PAPER_CELLS,
                label,
                "",
                f"{ref['utility']:+.3f}",
                f"{ref['stability']:+.3f}",
            ]
        )
    return _table(
        ["strategy", "model", "protocol", "label", "candidates", "mean utility", "mean stability"],
        body,
    )


def _pyplot() -> Any:
    """matplotlib's pyplot on a file-only backend (no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_accuracy_robustness(rows: list[Row], path: Path) -> None:
    """Score vs poison adoption: ours as dots, the paper's as crosses in the same colour."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8, 5))
    colours = plt.get_cmap("tab10")
    for i, r in enumerate(rows):
        colour = colours(i % 10)
        x, y = r.metrics["poison_adoption"].mean, r.metrics["score"].mean
        ax.scatter(
            x, y, marker="o", s=50, color=colour, label=f"{r.strategy} ({r.model}, {r.protocol})"
        )
        paper = reference.TABLE1.get(r.strategy)
        if paper:
            ax.scatter(paper["poison_adoption"], paper["score"], marker="x", s=50, color=colour)
    ax.set_xlabel("poison adoption (lower is better)")
    ax.set_ylabel("task score")
    ax.set_title("Accuracy vs robustness (dots: this run; crosses: paper, GPT-4.1)")
    if rows:
        ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    ax.set_xlim(-0.05, 1.05)
    ax.set_ylim(0, 1)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_utility(rows: list[Row], labels: dict[tuple[str, str], str], path: Path) -> None:
    plt = _pyplot()
    cmi_rows = [r for r in rows if r.candidates]
    fig, axes = plt.subplots(
        1, max(len(cmi_rows), 1), figsize=(5 * max(len(cmi_rows), 1), 4), squeeze=False
    )
    for ax, r in zip(axes[0], cmi_rows, strict=False):
        by_label = utility_by_label(r, labels)
        names = [n for n in ("useful", "irrelevant", "harmful") if by_label[n]["utility"]]
        ax.boxplot([by_label[n]["utility"] for n in names], tick_labels=names)
        ax.axhline(0, color="grey", linewidth=0.5)
        ax.set_title(f"{r.strategy} ({r.model}, {r.protocol})", fontsize=9)
        ax.set_ylabel("utility = s_with - s_no")
    if not cmi_rows:
        axes[0][0].text(0.5, 0.5, "no CMI run in this directory", ha="center")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _jsonable(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    return value


def build_report(log_dir: str, out: Path | None = None, data_file: str | None = None) -> str:
    """The report as Markdown; with ``out``, also report.md, report.json and two PNGs there."""
    rows, notes = collect(log_dir)
    labels = labels_by_memory(data_file) if any(r.candidates for r in rows) else {}
    rows3 = table3_rows(rows, labels)
    parts = [
        f"# Causal-LoCoMo report: {log_dir}",
        "Rows marked ↳ are the paper's figures (response model GPT-4.1, judge GPT-5), not ours. "
        "± is the standard error over samples; s / sample is the task's wall-clock "
        "over its samples.",
        "## Table 1: task score and memory selection",
        table1(rows) if rows else "No usable causal_locomo log.",
        "## Table 2: task score by task family",
        table2(rows) if rows else "-",
        "## Table 3: CMI mean utility and stability by memory label",
        table3(rows3) if rows3 else "No CMI run with candidates in this directory.",
    ]
    if notes:
        parts += ["## Skipped logs", "\n".join(f"- {n}" for n in notes)]
    markdown = "\n\n".join(parts) + "\n"
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / "report.md").write_text(markdown, encoding="utf-8")
        plot_accuracy_robustness(rows, out / "accuracy_robustness.png")
        plot_utility(rows, labels, out / "utility_by_label.png")
        payload = {
            "log_dir": log_dir,
            "table1": [
                {k: v for k, v in asdict(r).items() if k not in ("candidates", "by_family")}
                for r in rows
            ],
            "table2": [
                {"strategy": r.strategy, "model": r.model, "protocol": r.protocol, **r.by_family}
                for r in rows
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
