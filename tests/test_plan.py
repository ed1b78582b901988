"""A run plan (``plan``): read with one-line errors, its rows run each into its own folder on
its examples, a row waiting for a fitted file, and ``cmi-inspect run --plan``'s refusals."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cmi_inspect.cli import main as cli
from cmi_inspect.errors import UserError
from cmi_inspect.plan import load_plan, run_plan
from inspect_ai.log import list_eval_logs, read_eval_log

from conftest import SYNTHETIC

IDS = ["syn_0001", "syn_0002"]


def write_plan(folder: Path, rows: list[dict[str, Any]], **extra: Any) -> Path:
    (folder / "ids.txt").write_text("\n".join(IDS) + "\n")
    plan = {"title": "t", "task": {"data_file": str(SYNTHETIC)}, "examples": "ids.txt", "rows": rows}
    path = folder / "plan.json"
    path.write_text(json.dumps({**plan, **extra}))
    return path


def test_each_row_runs_into_its_folder_on_the_plans_examples_and_a_row_waits_for_its_file(tmp_path):
    rows: list[dict[str, Any]] = [
        {"name": "none", "strategy": "no_memory"},
        {"name": "vector-bank2", "strategy": "vector_memory", "args": {"top_k": 1}, "task": {"bank_size": 2}},
        {"name": "fitted", "strategy": "cmi", "args": {"selector": "LOG_DIR/fit.json"}, "needs": "fit.json"},
    ]
    plan = write_plan(tmp_path, rows)
    logs = tmp_path / "logs"
    left = run_plan(str(logs), plan, model="fixed_latency/0")
    assert left == ["fitted (waits for fit.json)"]
    for name, bank in (("none", None), ("vector-bank2", 2)):
        [info] = list_eval_logs(str(logs / name))
        log = read_eval_log(info.name)
        assert log.status == "success"
        assert sorted(s.id for s in log.samples or []) == IDS
        assert log.eval.task_args.get("bank_size") == bank
    assert run_plan(str(logs), plan, model="fixed_latency/0") == left  # resumed: nothing new
    assert len(list_eval_logs(str(logs))) == 2


def _plan(rows: list[dict[str, Any]], examples: str = "ids.txt") -> str:
    return json.dumps({"title": "t", "task": {}, "examples": examples, "rows": rows})


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("{", "line 1: not JSON"),
        (_plan([{"name": "a", "strategy": "x", "arg": 1}]), "rows.0.arg: Extra inputs are not permitted"),
        (_plan([{"name": "a", "strategy": "x"}] * 2), "two rows are named 'a'"),
        (_plan([{"name": "A b", "strategy": "x"}]), "rows.0.name"),
        (_plan([], "missing.txt"), "examples"),
    ],
)
def test_a_bad_plan_is_one_line_naming_what_is_wrong(tmp_path, text, said):
    (tmp_path / "ids.txt").write_text("a\n")
    (tmp_path / "plan.json").write_text(text)
    with pytest.raises(UserError, match=said):
        load_plan(tmp_path / "plan.json")


def test_a_bad_row_argument_stops_the_plan_before_any_row_runs(tmp_path):
    plan = write_plan(tmp_path, [{"name": "ok", "strategy": "no_memory"},
                                 {"name": "bad", "strategy": "vector_memory", "args": {"top_kk": 1}}])  # fmt: skip
    with pytest.raises(UserError, match="top_kk"):
        run_plan(str(tmp_path / "logs"), plan, model="fixed_latency/0")
    assert not (tmp_path / "logs").exists() or not list_eval_logs(str(tmp_path / "logs"))


def test_run_refuses_options_the_plan_fixes(tmp_path, capsys):
    plan = write_plan(tmp_path, [{"name": "ok", "strategy": "no_memory"}])
    assert cli(["run", str(tmp_path / "logs"), "--plan", str(plan), "--strategies", "cmi"]) != 0
    assert "--strategies cannot go with --plan" in capsys.readouterr().err


def test_a_plan_on_other_data_than_it_was_planned_on_is_one_line_before_any_row_runs(tmp_path):
    plan = write_plan(tmp_path, [{"name": "ok", "strategy": "no_memory"}], data_sha256="0" * 64)
    with pytest.raises(UserError, match=r"row ok reads data with sha256 \w{12}\.\.\., not the 000000000000"):
        run_plan(str(tmp_path / "logs"), plan, model="fixed_latency/0")
    assert not (tmp_path / "logs").exists() or not list_eval_logs(str(tmp_path / "logs"))
