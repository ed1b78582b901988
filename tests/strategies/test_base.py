"""strategy_solver around every strategy: what it records, and that it records the same thing twice."""

from __future__ import annotations

from functools import partial

import pytest
from cmi_inspect.solvers import graph_memory, reflection_memory, summary_memory, vector_memory
from cmi_inspect.task import causal_locomo
from inspect_ai import eval as inspect_eval

from conftest import mock_model, require_data, samples_of


def selections(solver, tmp_path, protocol="paper"):
    require_data()
    [log] = inspect_eval(
        causal_locomo(protocol=protocol),
        solver=solver,
        model=mock_model(lambda p: "?"),
        display="none",
        log_dir=str(tmp_path),
    )
    assert log.status == "success"
    return {s.id: (s.store["MemorySelection:selected"], s.store["MemorySelection:scores"]) for s in samples_of(log)}


@pytest.mark.slow  # two runs over all 87 examples each
@pytest.mark.parametrize(
    ("solver", "count"),
    [
        (partial(vector_memory, embedder="hashing"), 3),  # e5 would re-embed the release per run
        (graph_memory, 3),
        (reflection_memory, 3),
        (summary_memory, None),
    ],
)
@pytest.mark.parametrize("protocol", ["paper", "blind"])
def test_counts_and_repeatable_selections_on_the_release(solver, count, protocol, tmp_path, real_records):
    first = selections(solver(), tmp_path, protocol)
    second = selections(solver(), tmp_path, protocol)
    assert first == second
    sizes = [len(keys) for keys, _ in first.values()]
    if count is None:  # the whole bank: avg memories 5.644
        assert round(sum(sizes) / len(sizes), 3) == 5.644
    else:
        assert set(sizes) == {count}
        for _, scores in first.values():
            assert scores == sorted(scores, reverse=True)
