"""How a logged run was made: the inspect eval command that makes it again, read from its log."""

from __future__ import annotations

import shlex

import pytest
import tasks.causal_locomo as checkout
from cmi_inspect.report.provenance import command_of
from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log
from inspect_ai.util import registry_create

from conftest import SYNTHETIC, mock_model


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory):
    path = tmp_path_factory.mktemp("logs")
    # the checkout's task file and its bare names, as "--solver cmi" makes them
    cmi, vector = registry_create("solver", "cmi", k=4), registry_create("solver", "vector_memory", embedder="hashing")
    for solver in (cmi, vector):
        inspect_eval(
            checkout.causal_locomo(data_file=str(SYNTHETIC), protocol="blind"),
            solver=solver,
            model=mock_model(lambda p: "3 March 2022"),
            display="none",
            log_dir=str(path),
            limit=2,
        )
    return path


def test_each_runs_command_names_its_task_solver_arguments_model_and_limit(log_dir):
    commands = sorted(command_of(read_eval_log(str(p), header_only=True)) for p in log_dir.glob("*.eval"))
    data = shlex.quote(f"data_file={SYNTHETIC}")
    task = "tasks/causal_locomo.py"  # the checkout's task file, whose solvers are the bare names
    assert [c.split(" ", 3)[3] for c in commands] == [
        f"--solver cmi -S k=4 -T protocol=blind -T {data} --model mockllm/model --limit 2",
        f"--solver vector_memory -S embedder=hashing -T protocol=blind -T {data} --model mockllm/model --limit 2",
    ]
    assert all(c.startswith("inspect eval ") and c.split()[2].endswith(task) for c in commands)


@pytest.mark.slow  # cmi-inspect run, then inspect eval, in subprocesses (about 40 s)
def test_a_runs_command_makes_the_same_run_again_from_another_folder(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    from inspect_ai.log import list_eval_logs

    bin_dir = Path(sys.executable).parent
    run = ["run", str(tmp_path / "run"), "--strategies", "vector_memory", "--guard", "--model", "fixed_latency/0"]
    data = ["-T", "protocol=blind", "-T", f"data_file={SYNTHETIC}"]
    subprocess.run([str(bin_dir / "cmi-inspect"), *run, *data], check=True, capture_output=True, timeout=600)
    logs = [read_eval_log(i.name) for i in list_eval_logs(str(tmp_path / "run"))]
    [first] = [log for log in logs if "guard" in (log.eval.task_display_name or "")]
    command = shlex.split(command_of(first))
    assert command[:3] == ["inspect", "eval", "cmi_inspect/causal_locomo"] and "--solver" not in command
    assert "strategy=vector_memory" in command and 'strategy_args={"guard": "evidence"}' in command
    again = ["--log-dir", str(tmp_path / "again"), "--display", "none"]
    subprocess.run(
        [str(bin_dir / "inspect"), *command[1:], *again], check=True, capture_output=True, timeout=600, cwd=tmp_path
    )
    [log] = [read_eval_log(i.name) for i in list_eval_logs(str(tmp_path / "again"))]
    assert (
        log.status == "success"
        and log.eval.task_display_name == first.eval.task_display_name == "causal_locomo: vector_memory + guard (blind)"
    )
    assert log.plan.steps[-1].solver == first.plan.steps[-1].solver  # the task's own, from -T strategy
    assert log.plan.steps[-1].params_passed == first.plan.steps[-1].params_passed == {"guard": "evidence"}

    def picks(log):
        return {s.id: s.store.get("MemorySelection:selected") for s in log.samples or []}

    assert picks(log) == picks(first) and len(picks(first)) == 3
