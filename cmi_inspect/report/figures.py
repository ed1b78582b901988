"""The report's figures: accuracy against robustness, accuracy against cost per sample, poison
adoption by kind of harmful memory, and CMI's utility by memory label."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from cmi_inspect.causal_locomo import reference
from cmi_inspect.extras import require
from cmi_inspect.report.runs import Run
from cmi_inspect.report.tables import paper_row, utility_by_label
from cmi_inspect.report.xl_tables import SWEEP_MEASURES, Estimate


def run_label(r: Run) -> str:
    """A run as a figure names it: strategy, model, settings and data set."""
    return f"{r.strategy} ({r.model}, {r.setting}, {r.data.name} {r.data.sha256[:8]})"


def _pyplot() -> Any:
    """matplotlib's pyplot on a file-only backend (no display needed)."""
    matplotlib = require("report", "The report's figures (cmi-inspect report --out)", "matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_accuracy_robustness(runs: list[Run], path: Path) -> None:
    """Score vs poison adoption: ours as dots, the paper's as crosses in the same colour
    (beside runs on the paper's settings only)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8, 5))
    colours = plt.get_cmap("tab10")
    for i, r in enumerate(runs):
        colour = colours(i % 10)
        x, y = r.metrics["poison_adoption"].mean, r.metrics["score"].mean
        ax.scatter(x, y, marker="o", s=50, color=colour, label=run_label(r))
        paper = paper_row(r, reference.TABLE1)
        if paper:
            ax.scatter(paper["poison_adoption"], paper["score"], marker="x", s=50, color=colour)
    ax.set_xlabel("poison adoption (lower is better)")
    ax.set_ylabel("task score")
    ax.set_title("Accuracy vs robustness (dots: this run; crosses: paper, GPT-4.1)")
    if runs:
        ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    ax.set_xlim(-0.05, 1.05)
    ax.set_ylim(0, 1)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_utility(runs: list[Run], path: Path) -> None:
    """One box plot of candidate utilities by label per CMI run that measured any (learned
    non_causal and non_causal measure none)."""
    plt = _pyplot()
    measured = [(r, utility_by_label(r)) for r in runs if r.candidates]
    measured = [(r, b) for r, b in measured if any(v["utility"] for v in b.values())]
    cmi_rows = [r for r, _ in measured]
    fig, axes = plt.subplots(
        1, max(len(cmi_rows), 1), figsize=(5 * max(len(cmi_rows), 1), 4), squeeze=False
    )
    for ax, (r, by_label) in zip(axes[0], measured, strict=False):
        names = [n for n in ("useful", "irrelevant", "harmful") if by_label[n]["utility"]]
        ax.boxplot([by_label[n]["utility"] for n in names], tick_labels=names)
        ax.axhline(0, color="grey", linewidth=0.5)
        ax.set_title(run_label(r), fontsize=9)
        ax.set_ylabel("utility = s_with - s_no")
    if not cmi_rows:
        axes[0][0].text(0.5, 0.5, "no CMI run with measured utilities here", ha="center")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _data_sets(runs: list[Run]) -> dict[str, list[Run]]:
    """The runs by the data they were scored on (a panel each), in the order of ``runs``."""
    out: dict[str, list[Run]] = {}
    for r in runs:
        out.setdefault(f"{r.data.name} {r.data.sha256[:8]}", []).append(r)
    return out


def plot_poison_by_kind(runs: list[Run], path: Path) -> None:
    """Each run's poison adoption by kind of harmful memory, as a grid of cells (a run a row, a
    kind a column) coloured from none adopted to all, each with its mean and standard error:
    one panel per data set, since each has kinds of its own."""
    plt = _pyplot()
    panels = {d: rs for d, rs in _data_sets(runs).items() if any(r.by_attack_kind for r in rs)}
    heights = [max(2.0, 0.45 * len(rs) + 1.2) for rs in panels.values()] or [2.0]
    fig, axes = plt.subplots(
        len(heights), 1, figsize=(10, sum(heights)), squeeze=False, height_ratios=heights
    )
    for ax, (data, group) in zip(axes[:, 0], panels.items(), strict=False):
        kinds = sorted({k for r in group for k in r.by_attack_kind})
        means = [[r.by_attack_kind[k].mean if k in r.by_attack_kind else math.nan for k in kinds]
                 for r in group]  # fmt: skip
        ax.imshow(means, cmap="RdYlGn_r", vmin=0, vmax=1, aspect="auto", alpha=0.6)
        for i, r in enumerate(group):
            for j, k in enumerate(kinds):
                m = r.by_attack_kind.get(k)
                text = "-" if m is None else f"{m.mean:.2f}"
                if m is not None and not math.isnan(m.stderr):
                    text += f" ± {m.stderr:.2f}"
                ax.text(j, i, text, ha="center", va="center", fontsize=8)
        counts = {
            k: max(r.by_attack_kind[k].n for r in group if k in r.by_attack_kind) for k in kinds
        }
        ax.set_xticks(range(len(kinds)), [f"{k} (n={counts[k]})" for k in kinds], fontsize=8)
        ax.set_yticks(range(len(group)), [f"{r.strategy} ({r.model}, {r.setting})" for r in group],
                      fontsize=8)  # fmt: skip
        ax.set_title(f"Poison adoption by kind of harmful memory (lower is better): {data}",
                     fontsize=10)  # fmt: skip
    if not panels:
        axes[0][0].text(0.5, 0.5, "no harmful memory of a recorded kind in these runs", ha="center")
        axes[0][0].set_axis_off()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


COSTS = (
    ("seconds_per_sample", "seconds / sample (working time)"),
    ("tokens_per_sample", "tokens / sample (input + output)"),
)
"""The cost axes of the accuracy-cost figure: a ``Run`` attribute and its label."""


def plot_accuracy_cost(runs: list[Run], path: Path) -> None:
    """Task score (with its standard error) against two costs per sample, seconds and model
    tokens, on a log scale when every run has some. A hollow marker is a run that read some
    calls from the model-call cache, whose seconds understate what the strategy costs; its
    tokens do not."""
    plt = _pyplot()
    fig, axes = plt.subplots(1, len(COSTS), figsize=(6 * len(COSTS), 5), squeeze=False)
    colours = plt.get_cmap("tab10")
    for ax, (attribute, label) in zip(axes[0], COSTS, strict=True):
        for i, r in enumerate(runs):
            score = r.metrics["score"]
            cached = r.cache_hits > 0
            ax.errorbar(
                getattr(r, attribute),
                score.mean,
                yerr=0.0 if math.isnan(score.stderr) else score.stderr,
                marker="o",
                markersize=7,
                color=colours(i % 10),
                markerfacecolor="none" if cached else colours(i % 10),
                label=run_label(r),
            )
        costs = [getattr(r, attribute) for r in runs]
        if costs and all(c > 0 for c in costs):  # costs span orders of magnitude
            ax.set_xscale("log")
        ax.set_xlabel(label)
        ax.set_ylabel("task score")
        ax.set_ylim(0, 1)
    fig.suptitle("Accuracy vs cost per sample (hollow: some calls read from the cache)")
    if runs:
        axes[0][-1].legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_bank_sweep(sweep: dict[str, dict[int | None, dict[str, Estimate]]], path: Path) -> None:
    """XL's bank-size sweep (``xl_tables.bank_sweep``): each measure against the bank's size,
    a line per strategy with its 95% interval over conversations; nothing without a sweep."""
    if not sweep:
        return
    plt = _pyplot()
    banks = sorted({b for by in sweep.values() for b in by}, key=lambda b: b or math.inf)
    fig, axes = plt.subplots(1, len(SWEEP_MEASURES), figsize=(10, 4))
    for ax, (name, stratum) in zip(axes, SWEEP_MEASURES, strict=True):
        for strategy, by in sweep.items():
            xs = [banks.index(b) for b in by]
            e = [by[b][name] for b in by]
            errors = [[x.mean - x.low for x in e], [x.high - x.mean for x in e]]
            errors = [[0.0 if math.isnan(d) else d for d in side] for side in errors]
            ax.errorbar(xs, [x.mean for x in e], yerr=errors, marker="o", capsize=3, label=strategy)
        ax.set_xticks(range(len(banks)), [str(b or "store") for b in banks])
        ax.set_xlabel("bank size (memories the strategy chooses from)")
        over = "every example" if stratum == "every" else f"the {stratum} examples"
        ax.set_title(f"{name} over {over}")
        ax.set_ylim(bottom=0)
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
