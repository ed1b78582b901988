"""log_tags: how a run's strategy is named in View's list and in the report's rows."""

from __future__ import annotations

import os

import pytest
from cmi_inspect.causal_locomo.log_tags import run_name, solver_label, strategy_of


@pytest.mark.parametrize(
    ("solver", "passed", "label"),
    [
        ("cmi_inspect/cmi", {}, "cmi"),
        ("cmi", {"ablation": "non_causal", "budget": 1}, "cmi[non_causal, budget=1]"),
        ("cmi_inspect/vector_memory", {"guard": "evidence"}, "vector_memory + guard"),
        ("vector_memory", {"guard": "none", "top_k": 5}, "vector_memory[top_k=5]"),
        ("cmi", {"ablation": "non_causal", "guard": "evidence"}, "cmi[non_causal] + guard"),
        ("memory_strategy", {"strategy": "keyword_memory", "guard": "evidence"}, "keyword_memory + guard"),
    ],
)
def test_a_label_names_the_strategy_its_arguments_and_its_guard(solver, passed, label):
    assert solver_label(solver, passed) == label
    assert strategy_of(label) == (passed.get("strategy") or solver.split("/")[-1])


def test_a_guarded_run_is_named_apart_from_the_unguarded_one():
    args = {"protocol": "blind", "dataset": "xl"}
    assert run_name("vector_memory", {}, args) == "causal_locomo: vector_memory (blind, xl)"
    assert run_name("vector_memory", {"guard": "evidence"}, args) == "causal_locomo: vector_memory + guard (blind, xl)"


def test_plain_file_names_fill_inspects_pattern_and_restore_it(monkeypatch):
    from cmi_inspect.causal_locomo.log_tags import FILE_PATTERN_ENV, plain_file_names
    from inspect_ai._util.log_layout import eval_log_name

    def name() -> str:  # as Inspect names a run's log file, its task being the run's label
        label = run_name("cmi", {"ablation": "non_causal", "budget": 1, "guard": "evidence"}, {"protocol": "blind"})
        return eval_log_name(task=label, task_id="ID", created="2026-12-03T07:00:00+00:00", model="m")

    monkeypatch.delenv(FILE_PATTERN_ENV, raising=False)
    assert " (blind)" in name()
    with plain_file_names():
        assert name() == "2026-12-03T07-00-00-00-00_causal-locomo_ID"
    assert FILE_PATTERN_ENV not in os.environ
    monkeypatch.setenv(FILE_PATTERN_ENV, "{task}_{model}_{id}")  # the user's own, kept
    with plain_file_names():
        assert name() == "2026-12-03T07-00-00-00-00_causal-locomo_m_ID"
    assert os.environ[FILE_PATTERN_ENV] == "{task}_{model}_{id}"
