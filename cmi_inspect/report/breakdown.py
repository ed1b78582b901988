"""Useful F1, poison adoption and task score by group of samples: by how many useful memories
a sample has (0, 1, 2+) and by the kind of its harmful memories (``attack_kind``).

Each mean comes with a 95% cluster-bootstrap interval over conversations
(``paired.conversation_means``: the conversations resampled with replacement, each with all
its samples), since the examples of one LoCoMo conversation are not independent draws.
An interval needs two conversations; one over fewer than ``MIN_CLUSTERS`` is marked, as it
rests on too few clusters to trust. By kind, poison adoption is the share of a sample's
harmful memories of that kind the strategy selected, over the samples that have one.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from cmi_inspect.report.paired import MIN_CLUSTERS, RESAMPLES, SEED, conversation_means
from cmi_inspect.report.runs import Run
from cmi_inspect.report.samples import USEFUL_GROUPS, SampleRow
from cmi_inspect.report.tables import identity, markdown_table

METRICS = ("useful_f1", "poison_adoption", "score")
HEADERS = ("useful F1", "poison adoption", "task score")


@dataclass(frozen=True)
class Cell:
    """A mean over a group's samples, with its conversation-bootstrap interval."""

    mean: float
    low: float | None
    high: float | None
    """None: fewer than two conversations, or samples whose ids name none."""

    def text(self) -> str:
        if math.isnan(self.mean):
            return "-"
        if self.low is None or self.high is None:
            return f"{self.mean:.3f}"
        return f"{self.mean:.3f} [{self.low:.3f}, {self.high:.3f}]"


@dataclass(frozen=True)
class Group:
    """One run's samples of one group, and their figures."""

    name: str
    samples: int
    conversations: int
    """Conversations the samples come from (0: some sample's id names none)."""
    cells: dict[str, Cell]

    def clusters(self) -> str:
        """The conversations, marked when too few for the interval to rest on."""
        if not self.conversations:
            return "n/a"
        few = " (fewer than five)" if self.conversations < MIN_CLUSTERS else ""
        return f"{self.conversations}{few}"


def cell(values: Sequence[float], conversations: Sequence[str | None]) -> Cell:
    """The mean of ``values`` and, over two conversations or more, its interval."""
    if not values:
        return Cell(math.nan, None, None)
    mean = float(np.mean(values))
    named = [c for c in conversations if c is not None]
    if len(named) < len(values) or len(set(named)) < 2:
        return Cell(mean, None, None)
    means = conversation_means(np.asarray(values, dtype=float), named, RESAMPLES, SEED)
    low, high = (float(v) for v in np.percentile(means, [2.5, 97.5]))
    return Cell(mean, low, high)


def group(name: str, rows: Sequence[SampleRow], poison: Callable[[SampleRow], float]) -> Group:
    conversations = [r.conversation for r in rows]
    values = {
        "useful_f1": [r.useful_f1 for r in rows],
        "poison_adoption": [poison(r) for r in rows],
        "score": [r.score for r in rows],
    }
    named = None if None in conversations else len(set(conversations))
    return Group(
        name,
        len(rows),
        named or 0,
        {metric: cell(values[metric], conversations) for metric in METRICS},
    )


def by_useful(run: Run) -> list[Group]:
    """The run's samples by how many useful memories they have (groups with none left out)."""
    out = []
    for name in USEFUL_GROUPS:
        rows = [r for r in run.rows if r.useful_group == name]
        if rows:
            out.append(group(name, rows, lambda r: r.poison_adoption))
    return out


def by_kind(run: Run) -> list[Group]:
    """The run's samples by kind of harmful memory, poison adoption that kind's."""
    kinds = sorted({k for r in run.rows for k in r.kinds})
    return [group(kind, [r for r in run.rows if kind in r.kinds], adoption(kind)) for kind in kinds]


def adoption(kind: str) -> Callable[[SampleRow], float]:
    """A sample's poison adoption of one kind of harmful memory."""
    return lambda row: row.kinds[kind]


def breakdown_table(runs: Sequence[Run], groups: Callable[[Run], list[Group]], what: str) -> str:
    header = ["strategy", "model", "protocol", what, "n", "conversations", *HEADERS]
    body = [
        [r.strategy, r.model, r.setting, g.name, str(g.samples), g.clusters(),
         *(g.cells[m].text() for m in METRICS)]
        for r in runs
        for g in groups(r)
    ]  # fmt: skip
    return markdown_table(header, body)


BREAKDOWN_NOTE = (
    "Mean [95% cluster-bootstrap interval over conversations: each resample draws as many "
    "conversations as there are, with replacement, each with all its samples]. An interval "
    "needs two conversations; over fewer than five it rests on too few clusters to trust, "
    "and the conversations column says so."
)


def breakdown_sections(runs: Sequence[Run]) -> list[str]:
    """The report's two breakdown tables (the kinds' only where the data names kinds)."""
    parts = [
        "### By number of useful memories",
        f"Samples by how many useful memories they have (0, 1, 2+). {BREAKDOWN_NOTE}",
        breakdown_table(runs, by_useful, "useful memories"),
    ]
    if any(r.kinds for run in runs for r in run.rows):
        parts += [
            "### By kind of harmful memory",
            "Samples whose bank holds a harmful memory of a kind (`attack_kind`); poison "
            f"adoption is the share of that kind's harmful memories selected. {BREAKDOWN_NOTE}",
            breakdown_table(runs, by_kind, "attack kind"),
        ]
    return parts


def breakdown_json(runs: Sequence[Run], groups: Callable[[Run], list[Group]]) -> list[Any]:
    """The groups of every run, for report.json."""
    return [
        {
            **identity(r),
            "group": g.name,
            "samples": g.samples,
            "conversations": g.conversations,
            **{m: {"mean": c.mean, "low": c.low, "high": c.high} for m, c in g.cells.items()},
        }
        for r in runs
        for g in groups(r)
    ]
