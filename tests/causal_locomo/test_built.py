"""built: a strategy named apart (--solver) is checked against, and tags, the eval's tasks."""

from __future__ import annotations

import pytest
from cmi_inspect.causal_locomo.built import built_tasks, note_built
from cmi_inspect.causal_locomo.causal_locomo import causal_locomo
from cmi_inspect.causal_locomo.protocol import PROTOCOLS
from inspect_ai import eval as inspect_eval
from inspect_ai.log import list_eval_logs, read_eval_log
from inspect_ai.solver import SolverSpec

from conftest import SYNTHETIC, mock_model


def test_a_task_built_outside_an_eval_is_not_recorded():
    task = causal_locomo(data_file=str(SYNTHETIC))
    note_built(task, PROTOCOLS["blind"], {})
    assert built_tasks() == ()


@pytest.mark.parametrize(
    ("task_args", "solver"),
    [
        ({"strategy": "vector_memory", "strategy_args": {"top_k": 2, "embedder": "hashing"}}, None),
        ({}, "vector_memory"),
        ({"strategy": "no_memory"}, "vector_memory"),
    ],
    ids=["-T strategy=", "--solver", "--solver over -T strategy="],
)
def test_each_way_of_naming_a_strategy_tags_the_run_with_it_and_its_arguments_set(tmp_path, task_args, solver):
    args = {"top_k": 2, "embedder": "hashing", "guard": "none"}  # guard at its default: no tag
    [log] = inspect_eval(
        causal_locomo,  # by its registry name, so that the eval builds it
        task_args={"protocol": "blind", "data_file": str(SYNTHETIC), **task_args},
        solver=SolverSpec(solver, args, args) if solver else None,  # as --solver NAME -S gives it
        model=mock_model(lambda p: "?"),
        limit=1,
        display="none",
        log_dir=str(tmp_path),
    )
    [info] = list_eval_logs(str(tmp_path))
    header = read_eval_log(info, header_only=True)
    assert log.status == "success"
    assert header.eval.tags == ["vector_memory[embedder=hashing, top_k=2] (blind)"]
