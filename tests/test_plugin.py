"""The installed plugin: the wheel holds the task, solvers and scorers, and the exact
commands a user types work from a directory that is not the checkout."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from inspect_ai.log import EvalLog, read_eval_log

from conftest import REPO, SYNTHETIC, value_of

BIN = Path(sys.executable).parent


def outside_env() -> dict[str, str]:
    """The user's environment, minus the checkout's default model and log folder."""
    drop = ("INSPECT_EVAL_MODEL", "INSPECT_LOG_DIR", "PYTHONPATH")
    return {k: v for k, v in os.environ.items() if k not in drop}


def inspect_eval_log(cwd: Path, log_dir: Path, env: dict[str, str], *args: str) -> EvalLog:
    """``inspect eval ARGS`` as a user types it, in ``cwd``; the one log it writes."""
    subprocess.run(
        [str(BIN / "inspect"), "eval", *args, "--log-dir", str(log_dir), "--display", "none"],
        cwd=cwd,
        env=env,
        check=True,
        capture_output=True,
        text=True,
        timeout=600,
    )
    [path] = log_dir.glob("*.eval")
    return read_eval_log(str(path))


def cmi_inspect_cli(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """``cmi-inspect ARGS`` as a user types it, in ``cwd``."""
    return subprocess.run(
        [str(BIN / "cmi-inspect"), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )


def test_no_module_of_the_package_is_over_400_lines():
    long = {
        str(path.relative_to(REPO)): n
        for path in (REPO / "cmi_inspect").rglob("*.py")
        if (n := len(path.read_text().splitlines())) > 400
    }
    assert long == {}


@pytest.mark.slow  # builds a wheel (a subprocess, about 20 s)
def test_the_wheel_holds_the_task_solvers_scorers_and_entry_point(tmp_path):
    # built from a copy: a build writes cmi_inspect.egg-info beside the package, which, in the
    # checkout, would stand in for the installed package's metadata and so change how Inspect
    # names its solvers (bare, not cmi_inspect/NAME) for every later test of the session
    source = tmp_path / "source"
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        source.mkdir(exist_ok=True)
        shutil.copy(REPO / name, source / name)
    shutil.copytree(REPO / "cmi_inspect", source / "cmi_inspect", ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(source)],
        check=True,
        capture_output=True,
        timeout=600,
    )
    [wheel] = tmp_path.glob("cmi_inspect-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    modules = ("causal_locomo/causal_locomo", "causal_locomo/strategies/solvers", "causal_locomo/scorers", "_registry")
    for module in (*modules, "local_model/provider"):
        assert f"cmi_inspect/{module}.py" in names
    for card in ("README.md", "eval.yaml", "annotations/release_harmful_kinds.json"):
        assert f"cmi_inspect/causal_locomo/{card}" in names  # the eval's folder, whole
    assert "cmi_inspect/testing/synthetic.jsonl" in names  # check_strategy's examples
    for shipped in ("strategies/cmi/selectors/learned.json", "xl/verdicts.json", "xl/harm/gguf-smollm2.json"):
        assert f"cmi_inspect/causal_locomo/{shipped}" in names  # the learned selector, XL's readings
    [entry_points] = [n for n in names if n.endswith("entry_points.txt")]
    text = zipfile.ZipFile(wheel).read(entry_points).decode()
    assert "[inspect_ai]" in text and "cmi_inspect = cmi_inspect._registry" in text
    assert not any(n.startswith(("tasks/", "tests/", "benchmarks/")) for n in names)


@pytest.mark.slow  # inspect eval in a subprocess
def test_inspect_eval_by_registry_names_from_another_directory(tmp_path):
    log_dir = tmp_path / "logs"
    log = inspect_eval_log(
        tmp_path,
        log_dir,
        outside_env(),
        "cmi_inspect/causal_locomo",
        "--solver",
        "cmi_inspect/vector_memory",
        "-S",
        "embedder=hashing",
        "-T",
        f"data_file={SYNTHETIC}",
        "--model",
        "fixed_latency/0",
    )
    assert log.status == "success" and log.samples is not None and len(log.samples) == 3
    assert log.eval.task_registry_name == "cmi_inspect/causal_locomo"
    assert log.plan.steps[-1].solver == "cmi_inspect/vector_memory"
    assert log.eval.solver == "cmi_inspect/vector_memory"  # where inspect eval-retry reads it


@pytest.mark.slow  # the installed commands in subprocesses
def test_cmi_inspect_run_and_report_from_another_directory(tmp_path):
    env = outside_env()
    run = cmi_inspect_cli(
        tmp_path,
        env,
        "run",
        "logs",
        "--strategies",
        "no_memory,graph_memory",
        "--model",
        "fixed_latency/0",
        "-T",
        f"data_file={SYNTHETIC}",
    )
    assert run.returncode == 0, run.stderr[-2000:]
    report = cmi_inspect_cli(tmp_path, env, "report", "logs")
    assert report.returncode == 0, report.stderr[-2000:]
    assert "| graph_memory | fixed_latency/0 | paper |" in report.stdout


@pytest.mark.slow  # installs the example package (a wheel build) and runs it twice
def test_an_installed_external_strategy_runs_is_scored_and_reported_like_a_built_in(tmp_path):
    site = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-deps",
            "-q",
            "--target",
            str(site),
            str(REPO / "examples" / "keyword_memory"),
        ],
        check=True,
        capture_output=True,
        timeout=600,
    )
    env = {**outside_env(), "PYTHONPATH": str(site)}
    run = cmi_inspect_cli(
        tmp_path,
        env,
        "run",
        "logs",
        "--strategies",
        "keyword_memory,vector_memory",
        "--guard",
        "--model",
        "fixed_latency/0",
        "-T",
        f"data_file={SYNTHETIC}",
    )
    assert run.returncode == 0, run.stderr[-2000:]
    report = cmi_inspect_cli(tmp_path, env, "report", "logs")
    for row in ("keyword_memory", "keyword_memory + guard", "vector_memory", "vector_memory + guard"):
        assert f"| {row} | fixed_latency/0 | paper | 3 | 0 |" in report.stdout
    log_dir = tmp_path / "eval"
    log = inspect_eval_log(
        tmp_path,
        log_dir,
        env,
        "cmi_inspect/causal_locomo",
        "--solver",
        "cmi_inspect/memory_strategy",
        "-S",
        "strategy=keyword_memory",
        "-S",
        "fail=true",
        "-T",
        f"data_file={SYNTHETIC}",
        "--model",
        "fixed_latency/0",
        "--no-fail-on-error",
    )
    assert log.plan.steps[-1].params_passed == {"strategy": "keyword_memory", "fail": True}
    assert log.samples and all(s.error is not None for s in log.samples)
    assert all("strategy 'keyword_memory' failed" in (s.error.message if s.error else "") for s in log.samples)
    bad = subprocess.run(
        [str(BIN / "inspect"), "eval", "cmi_inspect/causal_locomo", "--solver", "cmi_inspect/memory_strategy",
         "-S", "strategy=keyword_memory", "-S", "topk=3", "-T", f"data_file={SYNTHETIC}",
         "--model", "fixed_latency/0", "--log-dir", str(tmp_path / "bad")],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    said = " ".join((bad.stdout + bad.stderr).split())  # as Rich wraps it
    assert bad.returncode != 0 and "Traceback" not in said
    assert "Strategy 'keyword_memory' takes no -S topk; it takes top_k: int = 2, fail: bool = False." in said
    assert not list((tmp_path / "bad").glob("*.eval"))  # refused before the run


def test_an_unknown_strategy_names_the_built_in_and_installed_ones():
    from cmi_inspect.errors import UserError
    from cmi_inspect.run import run_all
    from cmi_inspect.run_spec import RunSpec

    with pytest.raises(UserError, match=r"Unknown strategy 'mem9'; built in: cmi, reflection_memory, .*; installed:"):
        run_all(RunSpec(log_dir="unused", strategies=["mem9"]))


@pytest.mark.slow  # installs a package (a wheel build) and runs it twice
def test_an_installed_hostile_strategy_cannot_grade_itself(tmp_path):
    package = tmp_path / "hostile-memory"
    package.mkdir()
    shutil.copy(REPO / "tests" / "causal_locomo" / "strategies" / "hostile.py", package / "hostile.py")
    (package / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=77"]\nbuild-backend = "setuptools.build_meta"\n\n'
        '[project]\nname = "hostile-memory"\nversion = "0.1.0"\n\n'
        '[project.entry-points."cmi_inspect.strategies"]\n'
        'peek = "hostile:PeekSampleState"\nrewrite = "hostile:Rewrite"\n\n'
        '[tool.setuptools]\npy-modules = ["hostile"]\n'
    )
    site = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(site), str(package)],
        check=True,
        capture_output=True,
        timeout=600,
    )
    env = {**outside_env(), "PYTHONPATH": str(site)}

    def run(name: str, *more: str) -> EvalLog:
        return inspect_eval_log(tmp_path, tmp_path / name, env, "cmi_inspect/causal_locomo", "--solver",
                                "cmi_inspect/memory_strategy", "-S", f"strategy={name}", *more, "-T",
                                "protocol=blind", "-T", f"data_file={SYNTHETIC}", "--model", "fixed_latency/0",
                                "--no-fail-on-error")  # fmt: skip

    rewrite = run("rewrite")  # in the run's process: a change to its sample fails it
    assert rewrite.samples and not any(s.scores for s in rewrite.samples)
    assert all("strategy 'rewrite' changed the sample it runs in" in (s.error.message if s.error else "")
               for s in rewrite.samples)  # fmt: skip
    from cmi_inspect.causal_locomo.strategies.isolation import sandbox

    if sandbox() == "none":
        pytest.skip("neither bubblewrap nor unshare runs here: isolation cannot be shown")
    peek = run("peek", "-S", "isolate=true")  # sandboxed: no live sample to read labels from
    assert peek.status == "success" and peek.samples
    precision = [value_of(s, "memory_selection")["precision"] for s in peek.samples]
    assert precision and max(precision) < 1.0
