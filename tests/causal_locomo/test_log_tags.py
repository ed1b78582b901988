"""log_tags: how a run's strategy is named in View's list and in the report's rows."""

from __future__ import annotations

import os

import pytest
from cmi_inspect.causal_locomo.log_tags import VIEWER, run_name, solver_label, strategy_of


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


def test_one_tag_names_the_strategy_its_arguments_protocol_and_data():
    from cmi_inspect.causal_locomo.log_tags import run_tags

    assert run_tags("cmi", {"ablation": "non_causal", "k": 5}, {"protocol": "blind", "dataset": "xl"}) == [
        "cmi[non_causal, k=5] (blind, xl)"
    ]
    assert run_tags("no_memory", {}, {"data_file": "mine.jsonl"}) == ["no_memory (paper)"]


def test_a_run_on_drawn_banks_says_so_in_its_tags_and_name():
    from cmi_inspect.causal_locomo.log_tags import run_tags

    xl = {"protocol": "blind", "dataset": "xl", "bank_size": None}
    assert run_tags("cmi", {}, xl) == ["cmi (blind, xl)"]
    drawn = {**xl, "bank_size": "8"}  # -T values as the command line gives them
    assert run_tags("cmi", {}, drawn) == ["cmi (blind, xl, bank_size=8)"]
    assert run_name("cmi", {}, drawn) == "causal_locomo: cmi (blind, xl, bank_size=8)"
    assert run_name("cmi", {}, {"protocol": "paper", "data_file": "mine.jsonl", "bank_size": 8}) == (
        "causal_locomo: cmi (paper, bank_size=8)"
    )


def test_a_task_given_its_strategy_is_displayed_and_tagged_after_it_and_its_log_file_is_plain(tmp_path):
    from cmi_inspect.causal_locomo.causal_locomo import causal_locomo
    from inspect_ai import eval as inspect_eval

    from conftest import SYNTHETIC, mock_model

    task = causal_locomo(
        protocol="blind", data_file=str(SYNTHETIC), strategy="vector_memory", strategy_args={"embedder": "hashing"}
    )
    assert task.display_name == "causal_locomo: vector_memory[embedder=hashing] (blind)"
    [log] = inspect_eval(task, model=mock_model(lambda p: "?"), display="none", log_dir=str(tmp_path))
    assert log.status == "success"
    # the task's registered name: cmi_inspect/causal_locomo once the package is installed
    assert (log.eval.task.split("/")[-1], log.eval.task_display_name) == ("causal_locomo", task.display_name)
    assert log.eval.tags == ["vector_memory[embedder=hashing] (blind)"]
    assert "_causal-locomo_" in os.path.basename(log.location) and " " not in os.path.basename(log.location)
    # View's sample list: the target, the task score and the selection's figures, each a column the log has
    assert log.eval.viewer == VIEWER and log.samples
    columns = [c.id for c in VIEWER.task_samples_view.columns or []]  # type: ignore[union-attr]
    scored = {
        f"score__{scorer}__{key}"
        for s in log.samples
        for scorer, score in (s.scores or {}).items()
        for key in dict(score.value)  # type: ignore[arg-type]
    }
    assert "target" in columns and set(c for c in columns if c.startswith("score__")) <= scored
