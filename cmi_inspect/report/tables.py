"""The paper's three tables as Markdown, with the paper's own rows beside ours."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from cmi_inspect.causal_locomo import reference
from cmi_inspect.causal_locomo.data import PAPER_FAMILIES
from cmi_inspect.report.runs import METRIC_KEYS, Run
from cmi_inspect.report.samples import F1_AT_KEYS
from cmi_inspect.report.stats import Mean, fmt, plus_minus

PAPER_CELLS = [f"↳ {reference.PAPER_LABEL}", "gpt-4.1", "paper"]
"""Strategy, model and protocol cells of a row of the paper's figures."""


def paper_row(run: Run, table: dict[str, dict[str, float]]) -> dict[str, float] | None:
    """The paper's figures for ``run``'s strategy in ``table``, when the run is one they
    may stand beside (``Run.paper_settings``)."""
    return table.get(run.strategy) if run.paper_settings else None


def identity(run: Run) -> dict[str, Any]:
    """What tells a row from another: its strategy, model, settings, judge and data."""
    return {
        "strategy": run.strategy,
        "model": run.model,
        "protocol": run.protocol,
        "scoring": run.scoring,
        "judge": run.judge,
        "dataset": run.data.name,
        "data_sha256": run.data.sha256,
        "task_families": list(run.data.task_families),
    }


def sample_count(run: Run) -> str:
    """Distinct samples, with the epochs each ran when there were several."""
    return str(run.samples) if run.epochs == 1 else f"{run.samples} × {run.epochs} epochs"


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def table1(runs: list[Run]) -> str:
    header = [
        "strategy", "model", "protocol", "n", "failed", "task score", "success", "useful F1",
        "recall", "precision", "bad rejection", "poison adoption", "n_selected", "F1@1", "F1@3",
        "calls / sample", "cached calls / sample", "input tok / sample", "output tok / sample",
        "s / sample", "judge", "judge errors",
    ]  # fmt: skip
    body = []
    for r in runs:
        body.append(
            [
                r.strategy,
                r.model,
                r.setting,
                sample_count(r),
                str(r.failed),
                *(plus_minus(r.metrics[k]) for k in METRIC_KEYS),
                *(plus_minus(r.f1_at[k]) if k in r.f1_at else "-" for k in F1_AT_KEYS),
                fmt(r.calls, 2),
                fmt(r.cache_hits, 2),
                fmt(r.input_tokens, 0),
                fmt(r.output_tokens, 0),
                fmt(r.seconds_per_sample, 2),
                r.judge,
                str(r.judge_errors),
            ]
        )
        paper = paper_row(r, reference.TABLE1)
        if paper:
            cells = (fmt(paper.get(k, math.nan)) for k in METRIC_KEYS)
            body.append([*PAPER_CELLS, "87", "", *cells, *[""] * 9])
    return markdown_table(header, body)


def extraction_note(runs: list[Run]) -> str:
    """Which runs had samples whose extraction failed ('' when none did)."""
    failed = [f"{r.strategy} ({r.model}, {r.setting}): {r.extraction_failures} of {r.samples}"
              for r in runs if r.extraction_failures]  # fmt: skip
    if not failed:
        return ""
    return (
        "Samples whose strategy's extraction failed (its details say `extraction_failed`; they "
        "are scored with the selection they got): " + "; ".join(failed) + "."
    )


NO_MEAN = Mean(math.nan, math.nan, 0)


def table2(runs: list[Run]) -> str:
    families: list[str] = list(PAPER_FAMILIES)
    families += sorted({f for r in runs for f in r.by_family} - set(families))
    body = []
    for r in runs:
        cells = (plus_minus(r.by_family.get(f, NO_MEAN)) for f in families)
        body.append([r.strategy, r.model, r.setting, *cells])
        paper = paper_row(r, reference.TABLE2)
        if paper:
            body.append([*PAPER_CELLS, *(fmt(paper.get(f, math.nan)) for f in families)])
    short = [f.removesuffix("_memory_qa") for f in families]
    return markdown_table(["strategy", "model", "protocol", *short], body)


def poison_table(runs: list[Run]) -> str:
    """Poison adoption by the kind of harmful memory, for runs whose data names kinds."""
    kinds = sorted({k for r in runs for k in r.by_attack_kind})
    body = []
    for r in runs:
        cells = []
        for k in kinds:
            m = r.by_attack_kind.get(k, NO_MEAN)
            cells.append(f"{plus_minus(m)} (n={m.n})" if m.n else "-")
        body.append([r.strategy, r.model, r.setting, *cells])
    return markdown_table(["strategy", "model", "protocol", *kinds], body)


def utility_by_label(run: Run) -> dict[str, dict[str, list[float]]]:
    """Utilities and stabilities of a CMI run's candidates, by memory label."""
    out: dict[str, dict[str, list[float]]] = defaultdict(lambda: {"utility": [], "stability": []})
    for c in run.candidates:
        for key in ("utility", "stability"):
            if c.get(key) is not None:
                out[c["label"]][key].append(float(c[key]))
    return out


def table3_rows(runs: list[Run]) -> list[dict[str, Any]]:
    out = []
    for r in runs:
        for label, values in sorted(utility_by_label(r).items()):
            out.append(
                {
                    **identity(r),
                    "setting": r.setting,
                    "paper_settings": r.paper_settings and r.strategy == "cmi",
                    "label": label,
                    "candidates": len(values["utility"]),
                    "utility": Mean.of(values["utility"]).mean,
                    "stability": Mean.of(values["stability"]).mean,
                }
            )
    return out


def table3(rows: list[dict[str, Any]]) -> str:
    """Table 3 of ``table3_rows``, with the paper's rows when one of them is the full CMI's
    on the paper's settings."""
    body = [
        [
            r["strategy"],
            r["model"],
            r["setting"],
            r["label"],
            str(r["candidates"]),
            f"{r['utility']:+.3f}",
            "-" if math.isnan(r["stability"]) else f"{r['stability']:+.3f}",
        ]
        for r in rows
    ]
    if any(r["paper_settings"] for r in rows):
        body += [
            [*PAPER_CELLS, label, "", f"{ref['utility']:+.3f}", f"{ref['stability']:+.3f}"]
            for label, ref in reference.TABLE3.items()
        ]
    header = ["strategy", "model", "protocol", "label", "candidates", "mean utility",
              "mean stability"]  # fmt: skip
    return markdown_table(header, body)
