"""The report's two figures: accuracy against robustness, and CMI's utility by memory label."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cmi_inspect.causal_locomo import reference
from cmi_inspect.report.runs import Run
from cmi_inspect.report.tables import paper_row, utility_by_label


def run_label(r: Run) -> str:
    """A run as a figure names it: strategy, model, settings and data set."""
    return f"{r.strategy} ({r.model}, {r.setting}, {r.data.name} {r.data.sha256[:8]})"


def _pyplot() -> Any:
    """matplotlib's pyplot on a file-only backend (no display needed)."""
    import matplotlib

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
    """One box plot of candidate utilities by label per CMI run."""
    plt = _pyplot()
    cmi_rows = [r for r in runs if r.candidates]
    fig, axes = plt.subplots(
        1, max(len(cmi_rows), 1), figsize=(5 * max(len(cmi_rows), 1), 4), squeeze=False
    )
    for ax, r in zip(axes[0], cmi_rows, strict=False):
        by_label = utility_by_label(r)
        names = [n for n in ("useful", "irrelevant", "harmful") if by_label[n]["utility"]]
        ax.boxplot([by_label[n]["utility"] for n in names], tick_labels=names)
        ax.axhline(0, color="grey", linewidth=0.5)
        ax.set_title(run_label(r), fontsize=9)
        ax.set_ylabel("utility = s_with - s_no")
    if not cmi_rows:
        axes[0][0].text(0.5, 0.5, "no CMI run in this directory", ha="center")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
