"""The report's breakdowns: by number of useful memories and by kind of harmful memory, each
mean with its conversation-bootstrap interval, marked when it rests on fewer than five."""

from __future__ import annotations

import math

import numpy as np
import pytest
from cmi_inspect.report.breakdown import breakdown_json, breakdown_sections, by_kind, by_useful, cell
from cmi_inspect.report.paired import RESAMPLES, SEED, conversation_means
from cmi_inspect.report.runs import Run
from cmi_inspect.report.samples import SampleRow


def row(conversation: str | None, useful: int, f1: float, poison: float = 0.0, **kinds: float) -> SampleRow:
    return SampleRow(
        sample=f"{conversation}_qa_{useful}{f1}",
        conversation=conversation,
        useful=useful,
        useful_f1=f1,
        poison_adoption=poison,
        score=f1 / 2,
        kinds=kinds,
    )


def run_of(rows: list[SampleRow]) -> Run:
    return Run(
        "vector_memory",
        "mockllm/model",
        "blind",
        "alias match",
        "a.eval",
        len(rows),
        0,
        {},
        0,
        0,
        0,
        0,
        0,
        {},
        {},
        rows=rows,
    )


def test_the_interval_is_the_conversation_bootstrap_of_the_values():
    values, conversations = [1.0, 1.0, 0.0, 0.0, 0.5, 0.5], ["a", "a", "b", "b", "c", "c"]
    found = cell(values, conversations)
    means = conversation_means(np.array(values), conversations, RESAMPLES, SEED)
    assert found.mean == pytest.approx(0.5)
    assert (found.low, found.high) == tuple(pytest.approx(v) for v in np.percentile(means, [2.5, 97.5]))
    assert found.low is not None and found.high is not None and found.low <= 0.5 <= found.high
    assert found.text() == f"0.500 [{found.low:.3f}, {found.high:.3f}]"
    # one conversation, or an id that names none: the mean alone
    assert (cell([1.0, 0.0], ["a", "a"]).low, cell([1.0, 0.0], ["a", None]).low) == (None, None)
    assert cell([1.0, 0.0], ["a", "a"]).text() == "0.500"
    assert math.isnan(cell([], []).mean) and cell([], []).text() == "-"


def test_samples_are_grouped_by_useful_memories_and_few_conversations_are_marked():
    rows = [row("c1", 0, 1.0), row("c2", 0, 0.0), row("c1", 1, 1.0), *(row(f"c{i}", 3, 0.5) for i in range(6))]
    groups = {g.name: g for g in by_useful(run_of(rows))}
    assert list(groups) == ["0", "1", "2+"]
    assert (groups["0"].samples, groups["0"].conversations, groups["0"].clusters()) == (2, 2, "2 (fewer than five)")
    assert groups["2+"].clusters() == "6" and groups["2+"].cells["useful_f1"].mean == 0.5
    assert groups["1"].cells["useful_f1"].low is None  # one conversation: no interval
    assert groups["0"].cells["score"].mean == pytest.approx(0.25)


def test_by_kind_reads_that_kinds_adoption_over_the_samples_that_have_it():
    rows = [
        row("c1", 1, 1.0, 0.5, stale=1.0, hearsay=0.0),
        row("c2", 1, 0.0, 0.0, stale=0.0),
        row("c3", 1, 1.0, 0.0),  # no harmful memory: in no kind's group
    ]
    groups = {g.name: g for g in by_kind(run_of(rows))}
    assert list(groups) == ["hearsay", "stale"]
    assert (groups["stale"].samples, groups["stale"].cells["poison_adoption"].mean) == (2, 0.5)
    assert (groups["hearsay"].samples, groups["hearsay"].cells["poison_adoption"].mean) == (1, 0.0)
    assert groups["hearsay"].clusters() == "1 (fewer than five)"


def test_the_sections_and_their_json():
    rows = [row(None, 1, 1.0), row(None, 2, 0.5, 1.0, stale=1.0)]
    markdown = "\n".join(breakdown_sections([run_of(rows)]))
    assert "### By number of useful memories" in markdown and "### By kind of harmful memory" in markdown
    assert "| vector_memory | mockllm/model | blind, paper | 2+ | 1 | n/a | 0.500 | 1.000 | 0.250 |" in markdown
    [first, _] = breakdown_json([run_of(rows)], by_useful)
    assert first["group"] == "1" and first["useful_f1"] == {"mean": 1.0, "low": None, "high": None}
    assert "### By kind" not in "\n".join(breakdown_sections([run_of([row(None, 1, 1.0)])]))
