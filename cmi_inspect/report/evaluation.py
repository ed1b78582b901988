"""The evaluation report of an Inspect register entry, from logs: each run beside the paper's
GPT-4.1 figure for its strategy (model, score, reference, difference, standard error, samples,
time), and how to make each run again (its command, dates, versions, tokens).

The paper's figure stands beside a run only where the report's tables would show it
(``Run.paper_settings``: one of the paper's strategies with its default arguments, on the
whole release, under the paper's protocol and scoring); elsewhere the reference is left empty
rather than compared across protocols or data.
"""

from __future__ import annotations

import math
from datetime import datetime

from cmi_inspect.causal_locomo import reference
from cmi_inspect.report.runs import Run
from cmi_inspect.report.stats import Mean, fmt
from cmi_inspect.report.tables import markdown_table, paper_row, sample_count

COMPARED = (
    ("score", "task score"),
    ("useful_f1", "useful F1"),
    ("poison_adoption", "poison adoption"),
)
"""The metrics the report sets beside the paper's: the headline first."""


def difference(ours: Mean, theirs: float | None) -> str:
    """Ours minus the reference, signed, to the reference's three decimals ('' without a
    reference; a difference that rounds to nothing is +0.000, never -0.000)."""
    if theirs is None or math.isnan(ours.mean):
        return ""
    return f"{round(ours.mean - theirs, 3) + 0.0:+.3f}"


def duration(seconds: float) -> str:
    """A run's wall-clock as people read it: ``12 min 15 s``, ``37 s``."""
    if math.isnan(seconds):
        return "-"
    minutes, rest = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    parts = [f"{hours} h"] * bool(hours) + [f"{minutes} min"] * bool(hours or minutes)
    return " ".join([*parts, f"{rest} s"])


def day(stamp: str) -> str:
    """An ISO time as its UTC date and minute (``2026-12-03 07:18 UTC``)."""
    if not stamp:
        return "-"
    moment = datetime.fromisoformat(stamp)
    return moment.strftime("%Y-%m-%d %H:%M") + (" UTC" if moment.utcoffset() is not None else "")


def score_table(runs: list[Run]) -> str:
    """The register's columns for the headline metric, the mean task score."""
    header = ["strategy", "model", "protocol", "data", "score", "reference", "Δ", "stderr",
              "samples", "time"]  # fmt: skip
    body = []
    for r in runs:
        ours, paper = r.metrics["score"], paper_row(r, reference.TABLE1) or {}
        body.append(
            [r.strategy, r.model, r.setting, r.data.name, fmt(ours.mean), fmt(paper.get("score")),
             difference(ours, paper.get("score")), fmt(ours.stderr), sample_count(r),
             duration(r.wall_clock)]
        )  # fmt: skip
    return markdown_table(header, body)


def selection_table(runs: list[Run]) -> str:
    """Useful F1 and poison adoption beside the paper's, each with its difference."""
    header = ["strategy", "model", "protocol", "data"]
    for _, name in COMPARED[1:]:
        header += [f"{name} (± stderr)", "reference", "Δ"]
    body = []
    for r in runs:
        paper = paper_row(r, reference.TABLE1) or {}
        cells = [r.strategy, r.model, r.setting, r.data.name]
        for key, _ in COMPARED[1:]:
            ours = r.metrics[key]
            cells += [
                fmt(ours.mean)
                if math.isnan(ours.stderr)
                else f"{ours.mean:.3f} ± {ours.stderr:.3f}",
                fmt(paper.get(key)),
                difference(ours, paper.get(key)),
            ]
        body.append(cells)
    return markdown_table(header, body)


def reproduction(run: Run) -> str:
    """How one run was made: its command, then its dates, versions, data and tokens."""
    made = run.provenance
    if made is None:
        return f"- **{run.strategy}** ({run.setting}): its log records no provenance."
    tokens = "; ".join(f"{m} {i:,} in, {o:,} out" for m, (i, o) in made.tokens.items())
    cost = "not reported by the provider" if made.cost is None else f"{made.cost:.4f}"
    commit = f" at commit `{made.revision}`" if made.revision else ""
    return (
        f"- **{run.strategy}** ({run.model}, {run.setting}, {run.data.title}), log `{run.log}`:\n\n"
        f"  ```\n  {made.command}\n  ```\n\n"
        f"  Ran {day(made.started)} to {day(made.completed)}; inspect_ai {made.inspect_ai}, "
        f"cmi-inspect {made.package}{commit}; task version {made.task_version}; "
        f"tokens: {tokens or 'none'}; cost: {cost}."
    )


def evaluation_report(runs: list[Run], log_dir: str) -> str:
    """The evaluation report of the runs in ``log_dir`` as Markdown, in the register's form."""
    parts = [
        "## Evaluation Report",
        f"From the logs in `{log_dir}` (`cmi-inspect report {log_dir} --evaluation-report`). "
        "The reference is the paper's figure (GPT-4.1 answering, GPT-5 judging; "
        f"<{reference.PAPER_URL}>), shown beside a run of one of its strategies with the "
        "strategy's default arguments on the whole release under the paper's protocol and "
        "scoring, and left empty elsewhere: the paper reports no other. Δ is ours minus the "
        "reference; stderr is the standard error over samples; time is the run's wall-clock "
        "(from a model-call cache it is not the strategy's cost: compare tokens).",
        "### Task score",
        score_table(runs) if runs else "No usable causal_locomo log.",
    ]
    if runs:
        parts += [
            "### Memory selection",
            selection_table(runs),
            "### Reproducibility",
            "\n".join(reproduction(r) for r in runs),
        ]
    return "\n\n".join(parts) + "\n"
