"""run_all: every strategy into one log directory with eval_set, and a rerun that recomputes nothing."""

from __future__ import annotations

import pytest
from cmi_inspect.errors import UserError
from cmi_inspect.run import run_all
from inspect_ai.log import list_eval_logs, read_eval_log

from conftest import REPO, SYNTHETIC


def test_runs_strategies_and_resumes_without_recomputing(tmp_path):
    args = dict(task_file=REPO / "tasks" / "causal_locomo.py", strategies=["no_memory", "cmi"],
                ablations=True, model="fixed_latency/0", task_args={"data_file": str(SYNTHETIC)})
    assert run_all(str(tmp_path), **args)
    logs = {info.name: read_eval_log(info.name, header_only=True) for info in list_eval_logs(str(tmp_path))}
    plans = sorted((h.plan.steps[-1].solver, h.plan.steps[-1].params.get("ablation", "")) for h in logs.values())
    assert plans == [("cmi", "full"), ("cmi", "no_perturb"), ("cmi", "oracle"), ("cmi", "stability_only"),
                     ("cmi", "utility_only"), ("no_memory", "")]
    assert all(h.status == "success" and h.eval.model == "fixed_latency/0" for h in logs.values())
    assert run_all(str(tmp_path), **args)
    assert {info.name for info in list_eval_logs(str(tmp_path))} == set(logs)


def test_unknown_strategy(tmp_path):
    with pytest.raises(UserError, match="Unknown strategies"):
        run_all(str(tmp_path), task_file=REPO / "tasks" / "causal_locomo.py", strategies=["rag"])
    with pytest.raises(UserError, match="No task file"):
        run_all(str(tmp_path), task_file=tmp_path / "missing.py")
