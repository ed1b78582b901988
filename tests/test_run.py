"""run_all: every strategy into one log directory with eval_set, and a rerun that recomputes nothing."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from cmi_inspect.errors import UserError
from cmi_inspect.report.runs import read_runs
from cmi_inspect.run import run_all
from inspect_ai.log import list_eval_logs, read_eval_log

from conftest import SYNTHETIC


def test_runs_strategies_and_resumes_without_recomputing(tmp_path):
    args: dict[str, Any] = dict(
        strategies=["no_memory", "cmi"],
        ablations=True,
        model="fixed_latency/0",
        task_args={"data_file": str(SYNTHETIC)},
    )
    assert run_all(str(tmp_path), **args) == []
    logs = {info.name: read_eval_log(info.name, header_only=True) for info in list_eval_logs(str(tmp_path))}
    plans = sorted(
        (h.plan.steps[-1].solver.split("/")[-1], h.plan.steps[-1].params.get("ablation", "")) for h in logs.values()
    )
    assert plans == [
        ("cmi", "full"),
        ("cmi", "no_perturb"),
        ("cmi", "non_causal"),
        ("cmi", "oracle"),
        ("cmi", "stability_only"),
        ("cmi", "utility_only"),
        ("no_memory", ""),
    ]
    assert sorted(h.eval.task for h in logs.values())[0] == "causal_locomo: cmi (paper)"
    assert all(h.status == "success" and h.eval.model == "fixed_latency/0" for h in logs.values())
    assert sorted(tuple(h.eval.tags or []) for h in logs.values()) == [
        ("cmi", "protocol=paper", "data_file"),
        *(
            (("cmi", "protocol=paper", "data_file", f"ablation={a}"))
            for a in ("no_perturb", "non_causal", "oracle", "stability_only", "utility_only")
        ),
        ("no_memory", "protocol=paper", "data_file"),
    ]
    assert run_all(str(tmp_path), **args) == []
    assert {info.name for info in list_eval_logs(str(tmp_path))} == set(logs)


def test_ablations_under_blind_leave_out_the_oracle(tmp_path):
    args: dict[str, Any] = dict(
        strategies=["cmi"],
        ablations=True,
        model="fixed_latency/0",
        task_args={"data_file": str(SYNTHETIC), "protocol": "blind"},
    )
    assert run_all(str(tmp_path), **args) == []
    logs = [read_eval_log(info.name, header_only=True) for info in list_eval_logs(str(tmp_path))]
    ablations = sorted(h.plan.steps[-1].params.get("ablation", "full") for h in logs)
    assert ablations == ["full", "no_perturb", "non_causal", "stability_only", "utility_only"]
    assert all(h.status == "success" for h in logs)


def test_unknown_strategy(tmp_path):
    with pytest.raises(UserError, match="Unknown strategy .rag.; built in: cmi"):
        run_all(str(tmp_path), strategies=["rag"])


def test_ablations_after_a_run_read_the_model_call_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "cache"))
    args: dict[str, Any] = dict(model="fixed_latency/0", task_args={"data_file": str(SYNTHETIC)})
    assert run_all(str(tmp_path / "plain"), strategies=["cmi"], **args) == []
    assert run_all(str(tmp_path / "ablations"), strategies=["cmi"], ablations=True, **args) == []
    runs, _ = read_runs(str(tmp_path / "ablations"))
    hits = {r.strategy: (r.cache_hits, r.calls) for r in runs}
    assert hits["cmi"][0] == hits["cmi"][1] > 0  # every call of the rerun comes from the cache
    assert hits["cmi[no_perturb]"][0] == hits["cmi[no_perturb]"][1]  # its prompts are a subset of CMI's
    assert run_all(str(tmp_path / "uncached"), strategies=["cmi"], cache=False, **args) == []
    assert read_runs(str(tmp_path / "uncached"))[0][0].cache_hits == 0


@pytest.mark.slow  # a subprocess interrupted mid-run (about 30 s)
def test_ctrl_c_is_a_failure_that_names_the_runs_left_and_how_to_resume(tmp_path):
    command = [
        str(Path(sys.executable).parent / "cmi-inspect"),
        "run",
        str(tmp_path / "logs"),
        "--strategies",
        "no_memory,vector_memory,graph_memory",
        "--model",
        "fixed_latency/3",  # slow enough that the signal lands inside a run, even on a loaded machine
        "-T",
        f"data_file={SYNTHETIC}",
    ]
    run = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not list((tmp_path / "logs").glob("*.eval")) and time.monotonic() < deadline:
        time.sleep(0.5)
    time.sleep(2)  # inside the first run's samples
    run.send_signal(signal.SIGINT)
    _, err = run.communicate(timeout=120)
    assert run.returncode != 0
    assert "did not finish" in err or "interrupted" in err
    assert "again to resume" in err


def test_a_rerun_on_edited_data_stops_with_one_line_instead_of_mixing_answer_keys(tmp_path):
    data = tmp_path / "data.jsonl"
    data.write_text(SYNTHETIC.read_text(encoding="utf-8"), encoding="utf-8")
    args: dict[str, Any] = dict(
        strategies=["vector_memory"], model="fixed_latency/0", task_args={"data_file": str(data)}
    )
    logs = tmp_path / "logs"
    assert run_all(str(logs), **args) == []
    [before] = list_eval_logs(str(logs))
    data.write_text(data.read_text(encoding="utf-8").replace("3 March 2022", "4 April 2024"), encoding="utf-8")
    with pytest.raises(UserError, match=r"holds runs of data with sha256 \w{12}\.\.\., not the \w{12}\.\.\. given now"):
        run_all(str(logs), **args)
    assert [i.name for i in list_eval_logs(str(logs))] == [before.name]  # nothing ran, nothing lost
    assert run_all(str(tmp_path / "fresh"), **args) == []
    [after] = list_eval_logs(str(tmp_path / "fresh"))
    old, new = (read_eval_log(i.name, header_only=True).eval for i in (before, after))
    assert (old.metadata or {})["data_sha256"] != (new.metadata or {})["data_sha256"]
    assert old.task_version != new.task_version


def test_serve_refuses_a_model_it_cannot_serve_and_bad_arguments_in_one_line(tmp_path):
    with pytest.raises(UserError, match="--serve serves the embedded engine .* not openai/gpt-5"):
        run_all(str(tmp_path), strategies=["no_memory"], model="openai/gpt-5", serve=2)
    with pytest.raises(UserError, match="Unknown arguments for the gguf provider: .'n_gpu'."):
        run_all(str(tmp_path), strategies=["no_memory"], model_args={"n_gpu": 1}, serve=2)


def replies(log_dir: Path) -> dict[str, list[str]]:
    """Each sample's model replies in the order the solver asked for them."""
    [info] = list_eval_logs(str(log_dir))
    log = read_eval_log(info.name)
    assert log.status == "success"
    return {str(s.id): [e.output.completion for e in s.events if e.event == "model"] for s in log.samples or []}


@pytest.mark.slow  # the embedded model, in process and then served (about 40 s)
def test_a_served_run_answers_as_the_in_process_engine(tmp_path):
    args: dict[str, Any] = dict(
        strategies=["vector_memory"], limit=3, cache=False, task_args={"data_file": str(SYNTHETIC)}
    )
    assert run_all(str(tmp_path / "in-process"), **args) == []
    # one slot: batched rows may change a completion (compare_completions.py counts them)
    assert run_all(str(tmp_path / "served"), serve=1, **args) == []
    [info] = list_eval_logs(str(tmp_path / "served"))
    assert read_eval_log(info.name, header_only=True).eval.model == "openai-api/cmi-served/smollm2"
    served = replies(tmp_path / "served")
    assert served == replies(tmp_path / "in-process") and all(served.values())


def test_a_hanging_strategy_stops_at_the_time_limit_and_the_run_goes_on(tmp_path, hostile):
    left = run_all(
        str(tmp_path),
        strategies=["hang", "no_memory"],
        model="fixed_latency/0",
        task_args={"data_file": str(SYNTHETIC)},
        time_limit=1,
    )
    assert left == []
    logs = {h.eval.task: h for h in (read_eval_log(i.name) for i in list_eval_logs(str(tmp_path)))}
    hung = logs["causal_locomo: hang (paper)"]
    assert hung.eval.config.time_limit == 1
    assert hung.samples and {s.limit.type if s.limit else None for s in hung.samples} == {"time"}
    assert all(s.scores and s.store.get("MemorySelection:selected", []) == [] for s in hung.samples)
    assert logs["causal_locomo: no_memory (paper)"].status == "success"
