"""run_all: every strategy into one log directory with eval_set, and a rerun that recomputes nothing."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from cmi_inspect.errors import UserError
from cmi_inspect.report.runs import read_runs
from cmi_inspect.run import run_all, unfinished
from cmi_inspect.run_spec import RunSpec
from inspect_ai.log import list_eval_logs, read_eval_log
from inspect_ai.model import CachePolicy

from conftest import SYNTHETIC, installed


def run_rows(log_dir: str, strategies: list[str] | None = None, **options: Any) -> list[str]:
    """``run_all`` on the spec these options make, as ``cmi-inspect run`` builds it."""
    if strategies:
        options["strategies"] = strategies
    return run_all(RunSpec(log_dir=log_dir, **options))


@pytest.mark.slow  # three passes of eval_set, with CMI's ablations
def test_runs_strategies_and_resumes_without_recomputing(tmp_path):
    args: dict[str, Any] = dict(
        strategies=["no_memory", "cmi"],
        ablations=True,
        model="fixed_latency/0",
        task_args={"data_file": str(SYNTHETIC)},
    )
    assert run_rows(str(tmp_path), **args) == []
    logs = {info.name: read_eval_log(info.name, header_only=True) for info in list_eval_logs(str(tmp_path))}
    plans = sorted(
        (h.plan.steps[-1].solver.split("/")[-1], h.plan.steps[-1].params.get("ablation", "")) for h in logs.values()
    )
    assert plans == [
        ("cmi", "full"),
        ("cmi", "learned_non_causal"),
        ("cmi", "no_perturb"),
        ("cmi", "non_causal"),
        ("cmi", "oracle"),
        ("cmi", "stability_only"),
        ("cmi", "utility_only"),
        ("no_memory", ""),
    ]
    assert sorted(h.eval.task_display_name or "" for h in logs.values())[0] == "causal_locomo: cmi (paper)"
    assert all(h.status == "success" and h.eval.model == "fixed_latency/0" for h in logs.values())
    assert sorted(h.eval.tags or [] for h in logs.values()) == sorted(
        [
            ["cmi (paper)"],
            *(
                [f"cmi[{a}] (paper)"]
                for a in ("learned_non_causal", "no_perturb", "non_causal", "oracle", "stability_only", "utility_only")
            ),
            ["no_memory (paper)"],
        ]
    )
    assert run_rows(str(tmp_path), **args) == []
    assert {info.name for info in list_eval_logs(str(tmp_path))} == set(logs)  # each paired with its log
    assert all(PLAIN.fullmatch(Path(name).name) for name in logs)


PLAIN = re.compile(r"[\w.-]+\.eval")
"""A log file name that needs no quoting: no space, parenthesis, bracket or comma."""


def test_inspects_options_reach_the_runs_and_the_cache_is_the_one_inspect_eval_cache_reads(tmp_path, capsys):
    from cmi_inspect.causal_locomo.causal_locomo import causal_locomo
    from inspect_ai import eval as inspect_eval
    from inspect_ai.event import ModelEvent

    task_args: dict[str, Any] = {"data_file": str(SYNTHETIC)}
    options = {"sample_id": ["syn_0001"], "log_format": "json", "fail_on_error": False}
    run = str(tmp_path / "run")
    assert run_rows(run, ["no_memory"], model="fixed_latency/0", task_args=task_args, inspect_options=options) == []
    assert "answers there now" in capsys.readouterr().err  # what the cache holds, said
    [info] = list_eval_logs(run)
    log = read_eval_log(info.name)
    assert info.name.endswith(".json") and [s.id for s in log.samples or []] == ["syn_0001"]
    assert log.eval.config.fail_on_error is False
    # a plain inspect eval with --cache (a week, as Inspect's CLI makes it) reads that answer back
    [plain] = inspect_eval(
        causal_locomo(**task_args, strategy="no_memory"),
        model="fixed_latency/0",
        sample_id="syn_0001",
        cache=CachePolicy(expiry="7D"),
        display="none",
        log_dir=str(tmp_path / "plain"),
    )
    events = [e for s in plain.samples or [] for e in s.events if isinstance(e, ModelEvent)]
    assert events and all(e.cache == "read" for e in events)


def test_log_files_are_named_plainly_while_view_shows_each_runs_label(tmp_path):
    args: dict[str, Any] = dict(model="fixed_latency/0", task_args={"data_file": str(SYNTHETIC), "protocol": "blind"})
    assert run_rows(str(tmp_path), strategies=["no_memory"], guard=True, **args) == []
    infos = list_eval_logs(str(tmp_path))
    headers = {Path(i.name).name: read_eval_log(i.name, header_only=True).eval for i in infos}
    assert sorted(h.task_display_name or "" for h in headers.values()) == [
        "causal_locomo: no_memory (blind)",
        "causal_locomo: no_memory + guard (blind)",
    ]
    # the registry name (cmi_inspect/causal_locomo once the package is installed), never rewritten
    assert {h.task.split("/")[-1] for h in headers.values()} == {"causal_locomo"}
    assert all(PLAIN.fullmatch(name) and "_causal-locomo_" in name for name in headers)


@pytest.mark.slow  # eval_set with its retries, then eval-retry (about 30 s)
def test_eval_retry_continues_a_failed_run_through_a_link_to_its_log(tmp_path, monkeypatch):
    from inspect_ai import eval_retry

    def install(value: str) -> None:  # a third party's strategy "mine", as its entry point says
        stack.enter_context(installed({"mine": value}, tmp_path / "site", monkeypatch))

    stack = contextlib.ExitStack()
    install("hostile:Exit")  # every sample fails
    args: dict[str, Any] = dict(model="fixed_latency/0", task_args={"data_file": str(SYNTHETIC)})
    assert run_rows(str(tmp_path / "logs"), strategies=["mine"], **args) != []
    [failed] = (tmp_path / "logs").glob("*.eval")
    assert read_eval_log(str(failed), header_only=True).status == "error"
    (tmp_path / "picked").mkdir()
    link = tmp_path / "picked" / failed.name
    link.symlink_to(failed)
    install("cmi_inspect.causal_locomo.strategies.no_memory:NoMemory")  # the strategy mended
    with stack:
        [retried] = eval_retry(str(link), log_dir=str(tmp_path / "retried"), display="none")
    assert retried.status == "success" and len(retried.samples or []) == 3
    assert PLAIN.fullmatch(Path(retried.location).name)
    assert read_eval_log(retried.location, header_only=True).eval.task_display_name == "causal_locomo: mine (paper)"


@pytest.mark.slow  # five runs of eval_set
def test_ablations_under_blind_leave_out_the_oracle(tmp_path):
    args: dict[str, Any] = dict(
        strategies=["cmi"],
        ablations=True,
        model="fixed_latency/0",
        task_args={"data_file": str(SYNTHETIC), "protocol": "blind"},
    )
    assert run_rows(str(tmp_path), **args) == []
    logs = [read_eval_log(info.name, header_only=True) for info in list_eval_logs(str(tmp_path))]
    ablations = sorted(h.plan.steps[-1].params.get("ablation", "full") for h in logs)
    assert ablations == ["full", "learned_non_causal", "no_perturb", "non_causal", "stability_only", "utility_only"]
    assert all(h.status == "success" for h in logs)


def test_unknown_strategy(tmp_path):
    with pytest.raises(UserError, match="Unknown strategy .rag.; built in: cmi"):
        run_rows(str(tmp_path), strategies=["rag"])


@pytest.mark.slow  # eight runs of eval_set
def test_ablations_after_a_run_read_the_model_call_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "cache"))
    args: dict[str, Any] = dict(model="fixed_latency/0", task_args={"data_file": str(SYNTHETIC)})
    assert run_rows(str(tmp_path / "plain"), strategies=["cmi"], **args) == []
    assert run_rows(str(tmp_path / "ablations"), strategies=["cmi"], ablations=True, **args) == []
    runs, _ = read_runs(str(tmp_path / "ablations"))
    hits = {r.strategy: (r.cache_hits, r.calls) for r in runs}
    assert hits["cmi"][0] == hits["cmi"][1] > 0  # every call of the rerun comes from the cache
    assert hits["cmi[no_perturb]"][0] == hits["cmi[no_perturb]"][1]  # its prompts are a subset of CMI's
    assert run_rows(str(tmp_path / "uncached"), strategies=["cmi"], cache=False, **args) == []
    assert read_runs(str(tmp_path / "uncached"))[0][0].cache_hits == 0


@pytest.mark.slow  # a subprocess interrupted mid-run (about 30 s)
def test_ctrl_c_is_a_failure_that_names_the_runs_left_and_how_to_resume(tmp_path, hostile):
    command = [
        str(Path(sys.executable).parent / "cmi-inspect"),
        "run",
        str(tmp_path / "logs"),
        "--strategies",
        "no_memory,vector_memory,graph_memory,first_memory",  # the installed one runs last, apart
        "--model",
        "fixed_latency/3",  # slow enough that the signal lands inside a run, even on a loaded machine
        "-T",
        f"data_file={SYNTHETIC}",
    ]
    # A test runner started with `&` from a non-interactive shell (a CI script, a nohup job)
    # ignores SIGINT, and a child inherits that across exec: the command would never see the
    # Ctrl-C. Python resets a signal it handles to the default at exec, so handling SIGINT here
    # while the command starts gives it a terminal's Ctrl-C whatever launched the tests.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:  # its own process group, signalled whole, as a terminal's Ctrl-C is
        run = subprocess.Popen(
            command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
        )
    finally:
        signal.signal(signal.SIGINT, previous)
    deadline = time.monotonic() + 120
    while not list((tmp_path / "logs").glob("*.eval")) and time.monotonic() < deadline:
        time.sleep(0.5)
    time.sleep(2)  # inside the first run's samples
    os.killpg(run.pid, signal.SIGINT)
    out, err = run.communicate(timeout=120)
    assert run.returncode != 0, out + err
    assert "successfully" not in out + err  # eval_set's own verdict can say so after a Ctrl-C
    assert "again to resume" in err
    # each run left is named with what happened to it
    left = re.findall(r"causal_locomo: (\w+) \(paper\) \(([^)]*)\)", err)
    assert left and all(re.fullmatch(r"interrupted: \d of 3 samples kept|not started", what) for _, what in left)
    assert [name for name, _ in left] == ["no_memory", "vector_memory", "graph_memory", "first_memory"][-len(left) :]
    assert left[-1] == ("first_memory", "not started")  # a Ctrl-C starts no installed row after it
    # the interrupted run's log holds its strategy among the task's arguments, which inspect
    # eval-retry rebuilds the task from (no header rewritten to name a solver)
    headers = [read_eval_log(i.name, header_only=True) for i in list_eval_logs(str(tmp_path / "logs"))]
    assert headers and all(
        h.eval.task_args.get("strategy") in ("no_memory", "vector_memory", "graph_memory") for h in headers
    )  # and none of the installed strategy
    assert all(h.eval.solver is None for h in headers)


@pytest.mark.slow  # the embedded model on XL's store, interrupted inside summary's requests
@pytest.mark.heavy  # minutes on two cores: -m 'not heavy' leaves it out
def test_ctrl_c_ends_an_embedded_model_run_within_seconds_keeping_finished_samples(tmp_path, locomo_file):
    """Summary memory's first question on an XL store queues many long requests; a Ctrl-C
    stops them (each waiting request is dropped, the one being decoded ends at its next
    batch) instead of working through them, and the row that finished keeps its samples."""
    command = [str(Path(sys.executable).parent / "cmi-inspect"), "run", str(tmp_path / "logs"), "--no-cache",
               "--strategies", "no_memory,summary_memory", "-T", "dataset=xl", "--limit", "3"]  # fmt: skip
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # as in the test above
    try:
        run = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)  # fmt: skip
    finally:
        signal.signal(signal.SIGINT, previous)
    deadline = time.monotonic() + 300
    while len(list((tmp_path / "logs").glob("*.eval"))) < 2 and time.monotonic() < deadline:
        time.sleep(0.5)
    time.sleep(10)  # inside summary's requests
    os.killpg(run.pid, signal.SIGINT)
    signalled = time.monotonic()
    out, err = run.communicate(timeout=300)
    assert time.monotonic() - signalled < 10, err
    assert run.returncode != 0 and "summary_memory" in err and "interrupted" in err
    logs = {read_eval_log(i.name, header_only=True).eval.task_args["strategy"]: i.name
            for i in list_eval_logs(str(tmp_path / "logs"))}  # fmt: skip
    finished = read_eval_log(logs["no_memory"])
    assert finished.status == "success" and len(finished.samples or []) == 3


def test_a_run_is_described_by_its_newest_log_in_the_folder(tmp_path):
    names = ["causal_locomo: vector_memory (paper)", "causal_locomo: graph_memory (paper)"]
    assert (
        run_rows(
            str(tmp_path),
            strategies=["vector_memory"],
            model="fixed_latency/0",
            task_args={"data_file": str(SYNTHETIC)},
        )
        == []
    )
    # a run eval_set did not report (one run apart, in another process) is read from the folder
    assert unfinished(names, [], str(tmp_path)) == ["causal_locomo: graph_memory (paper) (not started)"]


@pytest.mark.slow  # three runs of eval_set
def test_a_rerun_on_edited_data_stops_with_one_line_instead_of_mixing_answer_keys(tmp_path):
    data = tmp_path / "data.jsonl"
    data.write_text(SYNTHETIC.read_text(encoding="utf-8"), encoding="utf-8")
    args: dict[str, Any] = dict(
        strategies=["vector_memory"], model="fixed_latency/0", task_args={"data_file": str(data)}
    )
    logs = tmp_path / "logs"
    assert run_rows(str(logs), **args) == []
    [before] = list_eval_logs(str(logs))
    data.write_text(data.read_text(encoding="utf-8").replace("3 March 2022", "4 April 2024"), encoding="utf-8")
    with pytest.raises(UserError, match=r"holds runs of data with sha256 \w{12}\.\.\., not the \w{12}\.\.\. given now"):
        run_rows(str(logs), **args)
    assert [i.name for i in list_eval_logs(str(logs))] == [before.name]  # nothing ran, nothing lost
    assert run_rows(str(tmp_path / "fresh"), **args) == []
    [after] = list_eval_logs(str(tmp_path / "fresh"))
    old, new = (read_eval_log(i.name, header_only=True).eval for i in (before, after))
    assert (old.metadata or {})["data_sha256"] != (new.metadata or {})["data_sha256"]
    assert old.task_version != new.task_version


def test_serve_refuses_a_model_it_cannot_serve_and_bad_arguments_in_one_line(tmp_path, monkeypatch):
    # before any data is read: a machine with no copy of the data and no download gets the
    # complaint about the arguments, not about the data
    monkeypatch.setenv("CMI_DATA_DIR", str(tmp_path / "no-data"))
    with pytest.raises(UserError, match="--serve serves the embedded engine .* not openai/gpt-5"):
        run_rows(str(tmp_path), strategies=["no_memory"], model="openai/gpt-5", serve=2)
    with pytest.raises(UserError, match="Unknown arguments for the gguf provider: .'n_gpu'."):
        run_rows(str(tmp_path), strategies=["no_memory"], model_args={"n_gpu": 1}, serve=2)


def replies(log_dir: Path) -> dict[str, list[str]]:
    """Each sample's model replies in the order the solver asked for them."""
    [info] = list_eval_logs(str(log_dir))
    log = read_eval_log(info.name)
    assert log.status == "success"
    return {str(s.id): [e.output.completion for e in s.events if e.event == "model"] for s in log.samples or []}


@pytest.mark.slow  # the embedded model, in process and then served (about 40 s)
@pytest.mark.heavy  # minutes on two cores: -m 'not heavy' leaves it out
def test_a_served_run_answers_as_the_in_process_engine(tmp_path):
    args: dict[str, Any] = dict(
        strategies=["vector_memory"], limit=3, cache=False, task_args={"data_file": str(SYNTHETIC)}
    )
    assert run_rows(str(tmp_path / "in-process"), **args) == []
    # one slot: batched rows may change a completion (compare_completions.py counts them)
    assert run_rows(str(tmp_path / "served"), serve=1, **args) == []
    [info] = list_eval_logs(str(tmp_path / "served"))
    assert read_eval_log(info.name, header_only=True).eval.model == "openai-api/cmi-served/smollm2"
    served = replies(tmp_path / "served")
    assert served == replies(tmp_path / "in-process") and all(served.values())


def test_eval_sets_verdict_is_dropped_wrapped_or_coloured_and_nothing_else():
    import io

    from cmi_inspect.run import EVAL_SET_VERDICTS, WithoutLines

    out = io.StringIO()
    stream = WithoutLines(out, EVAL_SET_VERDICTS)
    stream.write("\x1b[1;34mCompleted all tasks in '/a/long/folder' \nsuccessfully\x1b[0m\n")
    stream.write("Did not successfully complete all tasks in 'logs'.\n")
    stream.write("Log: logs/run.eval\nCompleted all tasks in a sentence of its own\n")
    assert out.getvalue() == "Log: logs/run.eval\nCompleted all tasks in a sentence of its own\n"


def test_a_lock_that_cannot_be_opened_is_one_line_naming_it(tmp_path):
    from cmi_inspect.run import LOCK_FILE, only_run

    (tmp_path / "folder" / LOCK_FILE).mkdir(parents=True)
    with pytest.raises(UserError, match=f"Cannot open the run lock .*{LOCK_FILE}: Is a directory"):
        with only_run(tmp_path / "folder"):
            pytest.fail("ran without its lock")
    lock = tmp_path / LOCK_FILE
    lock.touch()
    if subprocess.run(["chattr", "+i", str(lock)], capture_output=True).returncode != 0:
        pytest.skip("chattr +i is not available here (needs root and a file system that has it)")
    try:
        with pytest.raises(UserError, match="Cannot open the run lock .*: Operation not permitted"):
            with only_run(tmp_path):
                pytest.fail("ran without its lock")
    finally:
        subprocess.run(["chattr", "-i", str(lock)], check=True)


def test_a_limit_is_checked_against_the_data_and_its_range_form_runs_those_samples(tmp_path):
    args: dict[str, Any] = dict(
        strategies=["no_memory"], model="fixed_latency/0", task_args={"data_file": str(SYNTHETIC)}
    )
    for limit, message in ((-1, "got '-1'"), (0, "got '0'"), ((3, 9), "--limit 4-9 selects nothing: there are only 3")):
        with pytest.raises(UserError, match=message):
            run_rows(str(tmp_path / "refused"), limit=limit, **args)
    assert not (tmp_path / "refused").exists()
    assert run_rows(str(tmp_path / "logs"), limit=(1, 3), **args) == []
    [info] = list_eval_logs(str(tmp_path / "logs"))
    assert [s.id for s in read_eval_log(info.name).samples or []] == ["syn_0001", "syn_0002"]


@pytest.mark.slow  # waits out a time limit
def test_a_hanging_strategy_stops_at_the_time_limit_and_the_run_goes_on(tmp_path, hostile):
    left = run_rows(
        str(tmp_path),
        strategies=["hang", "no_memory"],
        model="fixed_latency/0",
        task_args={"data_file": str(SYNTHETIC)},
        time_limit=1,
    )
    assert left == []
    logs = {h.eval.task_display_name: h for h in (read_eval_log(i.name) for i in list_eval_logs(str(tmp_path)))}
    hung = logs["causal_locomo: hang (paper)"]
    assert hung.eval.config.time_limit == 1
    assert hung.samples and {s.limit.type if s.limit else None for s in hung.samples} == {"time"}
    assert all(s.scores and s.store.get("MemorySelection:selected", []) == [] for s in hung.samples)
    assert logs["causal_locomo: no_memory (paper)"].status == "success"


def test_a_run_leaves_no_cache_policy_behind_for_later_model_calls(tmp_path):
    import asyncio

    from conftest import mock_model

    assert (
        run_rows(
            str(tmp_path), strategies=["no_memory"], model="fixed_latency/0", task_args={"data_file": str(SYNTHETIC)}
        )
        == []
    )
    first = asyncio.run(mock_model(lambda p: "first").generate("the same prompt"))
    second = asyncio.run(mock_model(lambda p: "second").generate("the same prompt"))
    assert (first.completion, second.completion) == ("first", "second")  # not read from the cache


@pytest.mark.slow  # rows run apart, in processes of their own, and a clean process to verify
def test_a_plugin_that_patches_the_scorers_bends_no_other_row_and_its_own_does_not_verify(tmp_path, hostile):
    from cmi_inspect.report import build_report

    args: dict[str, Any] = dict(model="fixed_latency/0", task_args={"data_file": str(SYNTHETIC), "protocol": "blind"})
    assert run_rows(str(tmp_path / "honest"), strategies=["no_memory", "first_memory"], **args) == []
    both = ["patch_scorers", "first_memory", "no_memory"]
    assert run_rows(str(tmp_path / "sabotaged"), strategies=both, **args) == []
    honest, _ = read_runs(str(tmp_path / "honest"))
    sabotaged, _ = read_runs(str(tmp_path / "sabotaged"))
    before = {r.strategy: {k: m.mean for k, m in r.metrics.items()} for r in honest}
    after = {r.strategy: {k: m.mean for k, m in r.metrics.items()} for r in sabotaged}
    assert after["first_memory"] == before["first_memory"]  # the victim's row is its own
    assert after["no_memory"] == before["no_memory"]
    assert after["patch_scorers"]["useful_f1"] == 1.0  # what the saboteur made its own log say
    verified = {r.strategy: r.verified for r in sabotaged}
    assert verified == {"no_memory": True, "first_memory": True, "patch_scorers": False}
    [bent] = [r for r in sabotaged if r.strategy == "patch_scorers"]
    assert bent.check is not None and bent.check.rescored["selection:useful_f1"] == 0.0
    report = build_report(str(tmp_path / "sabotaged"))
    ranked, unverified = report.split("## Unverified runs")
    assert "| patch_scorers |" not in ranked and "| patch_scorers |" in unverified


@pytest.mark.slow  # a row run apart, a sandboxed process per sample
def test_run_isolate_sandboxes_installed_strategies_so_the_key_on_disk_is_out_of_reach(tmp_path, hostile, monkeypatch):
    from cmi_inspect.causal_locomo.strategies.isolation import sandbox

    if sandbox() == "none":
        pytest.skip("neither bubblewrap nor unshare runs here: isolation cannot be shown")
    monkeypatch.setenv("HOSTILE_DATA_FILES", str(SYNTHETIC))
    args: dict[str, Any] = dict(model="fixed_latency/0", task_args={"data_file": str(SYNTHETIC), "protocol": "blind"})
    assert run_rows(str(tmp_path / "plain"), strategies=["read_the_key"], **args) == []
    assert run_rows(str(tmp_path / "isolated"), strategies=["read_the_key", "no_memory"], isolate=True, **args) == []
    plain = {r.strategy: r for r in read_runs(str(tmp_path / "plain"))[0]}
    isolated = {r.strategy: r for r in read_runs(str(tmp_path / "isolated"))[0]}
    assert plain["read_the_key"].metrics["useful_f1"].mean == 1.0  # the key read from disk
    assert set(isolated) == {"read_the_key + isolated", "no_memory"}  # built-ins are not sandboxed
    scores = {k: m.mean for k, m in isolated["read_the_key + isolated"].metrics.items()}
    assert scores == {k: m.mean for k, m in isolated["no_memory"].metrics.items()}


@pytest.mark.slow  # five processes of Inspect
def test_two_workers_of_a_captured_eval_set_write_into_one_folder_what_one_run_writes(tmp_path):
    """A runner lists the rows (Inspect's eval-set capture), two workers each run one into the
    same folder at once (selection), and the folder reports as a one-process run's does."""
    import json

    from cmi_inspect.report.export import make_export

    command = [str(Path(sys.executable).parent / "cmi-inspect"), "run", str(tmp_path / "shared")]
    options = ["--strategies", "no_memory,vector_memory", "--model", "fixed_latency/0", "--no-cache"]
    options += ["-T", f"data_file={SYNTHETIC}"]  # no cache: each run's calls are its own, tokens and all
    manifest = tmp_path / "capture.json"
    listed = subprocess.run(
        [*command, *options],
        env={**os.environ, "INSPECT_EVAL_SET_CAPTURE": str(manifest)},
        capture_output=True,
        text=True,
    )
    assert listed.returncode == 0, listed.stderr
    assert not list((tmp_path / "shared").glob("*.eval"))  # listed, not run
    tasks = json.loads(manifest.read_text())["tasks"]
    assert [t["args"]["strategy"] for t in tasks] == ["no_memory", "vector_memory"]
    workers = []
    for i, task in enumerate(tasks):
        selection = tmp_path / f"selection-{i}.json"
        selection.write_text(
            json.dumps({"version": 3, "eval_set_id": "shared", "tasks": [{"identifier": task["identifier"]}]})
        )
        env = {**os.environ, "INSPECT_EVAL_SET_SELECTION": str(selection)}
        workers.append(
            subprocess.Popen([*command, *options], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        )
    for worker in workers:  # both at once: the folder's lock is Inspect's to keep in worker mode
        out, err = worker.communicate(timeout=300)
        assert worker.returncode == 0 and "every run finished" in out + err, out + err
    alone = subprocess.run([*command[:2], str(tmp_path / "alone"), *options], capture_output=True, text=True)
    assert alone.returncode == 0, alone.stderr  # the same rows, one process, its own folder

    def figures(folder: Path) -> list[tuple[Any, ...]]:
        export = make_export(str(folder))
        assert export.runs and all(r.verified for r in export.runs)
        return sorted(
            (
                r.strategy,
                r.samples,
                tuple((x.sample, x.score, x.useful_f1, x.selected, x.calls, x.input_tokens) for x in r.rows),
            )
            for r in export.runs
        )

    assert figures(tmp_path / "shared") == figures(tmp_path / "alone")
