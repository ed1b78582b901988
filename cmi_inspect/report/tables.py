"""The paper's three tables as Markdown, with the paper's own rows beside ours."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from cmi_inspect import reference
from cmi_inspect.data import TASK_FAMILIES
from cmi_inspect.report.runs import METRIC_KEYS, Run
from cmi_inspect.report.stats import Mean, fmt, plus_minus

PAPER_CELLS = [f"↳ {reference.PAPER_LABEL}", "gpt-4.1", "paper"]
"""Strategy, model and protocol cells of a row of the paper's figures."""


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def table1(runs: list[Run]) -> str:
    header = [
        "strategy", "model", "protocol", "n", "failed", "task score", "success", "useful F1",
        "bad rejection", "poison adoption", "avg memories", "calls / sample",
        "cached calls / sample", "input tok / sample", "output tok / sample", "s / sample",
        "judge", "judge errors",
    ]  # fmt: skip
    body = []
    for r in runs:
        body.append(
            [
                r.strategy,
                r.model,
                r.protocol,
                str(r.samples),
                str(r.failed),
                *(plus_minus(r.metrics[k]) for k in METRIC_KEYS),
                fmt(r.calls, 2),
                fmt(r.cache_hits, 2),
                fmt(r.input_tokens, 0),
                fmt(r.output_tokens, 0),
                fmt(r.seconds_per_sample, 2),
                r.judge,
                str(r.judge_errors),
            ]
        )
        paper = reference.TABLE1.get(r.strategy)
        if paper:
            body.append([*PAPER_CELLS, "87", "", *(fmt(paper[k]) for k in METRIC_KEYS), *[""] * 7])
    return markdown_table(header, body)


def extraction_note(runs: list[Run]) -> str:
    """Which runs had samples whose extraction failed ('' when none did)."""
    failed = [f"{r.strategy} ({r.model}, {r.protocol}): {r.extraction_failures} of {r.samples}"
              for r in runs if r.extraction_failures]  # fmt: skip
    if not failed:
        return ""
    return (
        "Samples whose strategy's extraction failed (its details say `extraction_failed`; they "
        "are scored with the selection they got): " + "; ".join(failed) + "."
    )


NO_MEAN = Mean(math.nan, math.nan, 0)


def table2(runs: list[Run]) -> str:
    families: list[str] = list(TASK_FAMILIES)
    families += sorted({f for r in runs for f in r.by_family} - set(families))
    body = []
    for r in runs:
        cells = (plus_minus(r.by_family.get(f, NO_MEAN)) for f in families)
        body.append([r.strategy, r.model, r.protocol, *cells])
        paper = reference.TABLE2.get(r.strategy)
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
        body.append([r.strategy, r.model, r.protocol, *cells])
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
                    "strategy": r.strategy,
                    "model": r.model,
                    "protocol": r.protocol,
                    "label": label,
                    "candidates": len(values["utility"]),
                    "utility": Mean.of(values["utility"]).mean,
                    "stability": Mean.of(values["stability"]).mean,
                }
            )
    return out


def table3(rows: list[dict[str, Any]]) -> str:
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
        for r in rows
    ]
    for label, ref in reference.TABLE3.items():
        body.append([*PAPER_CELLS, label, "", f"{ref['utility']:+.3f}", f"{ref['stability']:+.3f}"])
    header = ["strategy", "model", "protocol", "label", "candidates", "mean utility",
              "mean stability"]  # fmt: skip
    return markdown_table(header, body)
