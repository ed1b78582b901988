"""The register's evaluation report: the paper's figure beside runs on its settings only, the
difference, and each run's command, dates and versions from its log."""

from __future__ import annotations

import dataclasses
import math
import shlex

import pytest
from cmi_inspect.causal_locomo import reference
from cmi_inspect.causal_locomo.data import CAUSAL_LOCOMO_SHA256
from cmi_inspect.causal_locomo.task import causal_locomo
from cmi_inspect.report import build_report
from cmi_inspect.report.evaluation import difference, duration, evaluation_report, score_table
from cmi_inspect.report.runs import DataSet, Run, command_of, read_runs
from cmi_inspect.report.stats import Mean
from cmi_inspect.strategies.solvers import cmi, vector_memory
from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log

from conftest import SYNTHETIC, mock_model


def release_run(strategy: str, score: float, **changes) -> Run:
    """A run of the whole release on the paper's settings, as the report reads one."""
    metrics = {k: Mean(math.nan, math.nan, 87) for k in ("success", "useful_f1", "bad_rejection", "n_selected")}
    metrics |= {"score": Mean(score, 0.03, 87), "poison_adoption": Mean(0.5, 0.05, 87)}
    run = Run(
        strategy=strategy, model="gguf/smollm2", protocol="paper", judge="alias match", log="x.eval",
        samples=87, failed=0, metrics=metrics, calls=1.0, cache_hits=0.0, input_tokens=200.0,
        output_tokens=20.0, seconds_per_sample=1.0, by_family={}, by_attack_kind={},
        data=DataSet("release", CAUSAL_LOCOMO_SHA256, (), 87), wall_clock=735.0,
    )  # fmt: skip
    return dataclasses.replace(run, **changes)


def rows(table: str) -> list[list[str]]:
    return [[c.strip() for c in line.strip("|").split("|")] for line in table.splitlines()[2:]]


def test_the_papers_figure_and_the_difference_stand_beside_runs_on_its_settings_only():
    paper = reference.TABLE1["cmi"]["score"]
    runs = [
        release_run("cmi", 0.737),
        release_run("cmi", 0.616, protocol="blind", scoring="strict"),
        release_run("cmi[k=4]", 0.7),  # not the strategy's default arguments
        release_run("vector_memory", 0.6, whole_dataset=False),  # a --limit run
    ]
    table = rows(score_table(runs))
    assert table[0][3:] == ["release", "0.737", f"{paper:.3f}", f"{0.737 - paper:+.3f}", "0.030", "87", "12 min 15 s"]
    assert [r[5:7] for r in table[1:]] == [["-", ""]] * 3


def test_a_difference_is_signed_and_never_negative_zero():
    assert [difference(Mean(m, 0.0, 1), 0.469) for m in (0.4689, 0.5, 0.4)] == ["+0.000", "+0.031", "-0.069"]
    assert difference(Mean(0.5, 0.0, 1), None) == ""


def test_durations_read_as_people_say_them():
    assert [duration(s) for s in (37, 735, 4243.4, math.nan)] == ["37 s", "12 min 15 s", "1 h 10 min 43 s", "-"]


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory):
    path = tmp_path_factory.mktemp("logs")
    for solver in (cmi(k=4), vector_memory(embedder="hashing")):
        inspect_eval(
            causal_locomo(data_file=str(SYNTHETIC), protocol="blind"),
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
    task = "cmi_inspect/causal_locomo/task.py"  # as the test imported it: the package's task file
    assert [c.split(" ", 3)[3] for c in commands] == [
        f"--solver cmi -S k=4 -T protocol=blind -T {data} --model mockllm/model --limit 2",
        f"--solver vector_memory -S embedder=hashing -T protocol=blind -T {data} --model mockllm/model --limit 2",
    ]
    assert all(c.startswith("inspect eval ") and c.split()[2].endswith(task) for c in commands)


def test_the_report_reads_dates_versions_and_tokens_from_the_logs(log_dir, tmp_path):
    runs, _ = read_runs(str(log_dir))
    text = evaluation_report(runs, str(log_dir))
    for heading in ("## Evaluation Report", "### Task score", "### Memory selection", "### Reproducibility"):
        assert heading in text
    assert reference.PAPER_URL in text
    made = runs[0].provenance
    assert made is not None and made.inspect_ai and made.started <= made.completed
    assert made.tokens["mockllm/model"][0] > 0 and made.cost is None
    assert f"  {made.command}\n" in text and f"task version {made.task_version}" in text
    assert build_report(str(log_dir), out=tmp_path, evaluation=True) == text
    assert (tmp_path / "evaluation_report.md").read_text() == text


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
    [first] = [log for log in logs if "guard" in log.eval.task]
    command = shlex.split(command_of(first))
    assert command[:4] == ["inspect", "eval", "cmi_inspect/causal_locomo", "--solver"]
    again = ["--log-dir", str(tmp_path / "again"), "--display", "none"]
    subprocess.run(
        [str(bin_dir / "inspect"), *command[1:], *again], check=True, capture_output=True, timeout=600, cwd=tmp_path
    )
    [log] = [read_eval_log(i.name) for i in list_eval_logs(str(tmp_path / "again"))]
    assert (
        log.status == "success" and log.eval.task == first.eval.task == "causal_locomo: vector_memory + guard (blind)"
    )
    assert log.plan.steps[-1].solver == first.plan.steps[-1].solver == "cmi_inspect/vector_memory"
    assert log.plan.steps[-1].params_passed == first.plan.steps[-1].params_passed == {"guard": "evidence"}

    def picks(log):
        return {s.id: s.store.get("MemorySelection:selected") for s in log.samples or []}

    assert picks(log) == picks(first) and len(picks(first)) == 3
