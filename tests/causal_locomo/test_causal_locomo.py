"""End to end: the exact ``inspect eval tasks/causal_locomo.py --solver NAME`` commands users type,
on the embedded local model (no --model: the repo's .env selects it), read back from the log."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from cmi_inspect.causal_locomo.causal_locomo import TASK_VERSION, causal_locomo, register_entry
from cmi_inspect.causal_locomo.data import CAUSAL_LOCOMO_SHA256
from cmi_inspect.causal_locomo.dataset import scored_record
from cmi_inspect.causal_locomo.judge import JUDGE_PROMPT_VERSION
from cmi_inspect.causal_locomo.prompts import PROMPT_VERSION
from cmi_inspect.errors import UserError
from inspect_ai.log import EvalLog, read_eval_log

from conftest import LOCOMO_MINI, REPO, SYNTHETIC, require_data, samples_of, score_of, value_of

SLOW = pytest.mark.slow  # runs the embedded local model

INSPECT = str(Path(sys.executable).parent / "inspect")


def run_inspect_eval(
    tmp_path: Path, *args: str, check: bool = True, display: str = "none", task: str = "tasks/causal_locomo.py"
) -> subprocess.CompletedProcess[str]:
    """``inspect eval TASK ARGS`` from the repository root, as a user types it (TASK: the
    checkout's task file, or the installed package's registry name)."""
    require_data(*args)
    env = {k: v for k, v in os.environ.items() if k not in ("INSPECT_EVAL_MODEL", "INSPECT_LOG_DIR")}
    return subprocess.run(
        [INSPECT, "eval", task, "--log-dir", str(tmp_path), "--display", display, *args],
        cwd=REPO,
        env={**env, "PWD": str(REPO), "COLUMNS": "500"},  # Inspect's Rich output unwrapped, however long a path
        check=check,
        capture_output=True,
        text=True,
    )


def inspect_eval(tmp_path: Path, *args: str, task: str = "tasks/causal_locomo.py") -> EvalLog:
    before = set(tmp_path.glob("*.eval"))
    run_inspect_eval(tmp_path, *args, task=task)
    [path] = set(tmp_path.glob("*.eval")) - before
    log = read_eval_log(str(path))
    assert log.status == "success", log.error
    return log


def selections(log: EvalLog) -> dict[str, list[str]]:
    return {str(s.id): score_of(s, "memory_selection").metadata["selected"] for s in samples_of(log)}


@SLOW
def test_no_memory_on_the_default_local_model(tmp_path):
    log = inspect_eval(tmp_path, "--solver", "no_memory", "--limit", "2")
    assert log.eval.model == "gguf/smollm2"
    assert log.eval.solver == "no_memory"
    assert log.eval.metadata == {
        "answer_prompt": PROMPT_VERSION,
        "judge_prompt": JUDGE_PROMPT_VERSION,
        "data_sha256": CAUSAL_LOCOMO_SHA256,
        "scoring": "paper",  # the release under the paper protocol
    }
    assert log.eval.task_version == f"{TASK_VERSION}-{log.eval.metadata['data_sha256'][:12]}"
    assert [s.id for s in samples_of(log)] == ["conv-26_qa_0000", "conv-49_qa_0000"]  # two families
    for sample in samples_of(log):
        assert sample.output.completion
        assert value_of(sample, "memory_selection")["n_selected"] == 0
        assert 0.0 <= value_of(sample, "task_score")["score"] <= 1.0
        assert sample.model_usage["gguf/smollm2"].output_tokens > 0


@SLOW
@pytest.mark.heavy  # minutes on two cores: -m 'not heavy' leaves it out
def test_full_history_selects_the_memories_of_the_sessions_it_kept(tmp_path):
    log = inspect_eval(tmp_path, "--solver", "full_history", "--limit", "2")
    for sample in samples_of(log):
        record = scored_record(sample)
        kept = sample.store["MemorySelection:details"]["sessions_kept"]
        sessions = sorted(s.timestamp for s in record.past_sessions)
        seen = [m for m in record.memory_bank if m.timestamp >= sessions[-kept]]
        assert kept >= 1 and value_of(sample, "memory_selection")["n_selected"] == len(seen)
        assert "Earlier conversations:" in sample.messages[0].text


@SLOW
@pytest.mark.parametrize(
    ("solver", "args", "expected"),
    [
        pytest.param("summary_memory", [], "bank", marks=pytest.mark.heavy),  # minutes on two cores
        ("vector_memory", [], 3),
        ("vector_memory", ["-S", "top_k=2"], 2),
        ("graph_memory", [], 3),
        ("reflection_memory", ["-S", "top_k=1"], 1),
    ],
)
def test_bank_strategies(tmp_path, solver, args, expected):
    log = inspect_eval(tmp_path, "--solver", solver, "--limit", "2", *args)
    if args:
        assert log.eval.solver_args == {"top_k": int(args[1].split("=")[1])}
    for sample in samples_of(log):
        n = len(scored_record(sample).memory_bank) if expected == "bank" else expected
        assert value_of(sample, "memory_selection")["n_selected"] == n


@SLOW
@pytest.mark.heavy  # minutes on two cores: -m 'not heavy' leaves it out
def test_cmi_is_deterministic_and_logs_its_candidates(tmp_path):
    first = inspect_eval(tmp_path, "--solver", "cmi", "--limit", "2")
    second = inspect_eval(tmp_path, "--solver", "cmi", "--limit", "2")
    assert selections(first) == selections(second)
    for sample in samples_of(first):
        details = sample.store["MemorySelection:details"]
        assert len(details["candidates"]) == 3
        for c in details["candidates"]:
            assert c["answer_with"] is not None and c["s_with"] is not None and c["reason"]
        assert "| s_with | s_pert |" in score_of(sample, "memory_selection").explanation


@SLOW
@pytest.mark.heavy  # minutes on two cores: -m 'not heavy' leaves it out
@pytest.mark.parametrize("ablation", ["no_perturb", "utility_only", "stability_only", "oracle"])
def test_cmi_ablations(tmp_path, ablation):
    log = inspect_eval(tmp_path, "--solver", "cmi", "-S", f"ablation={ablation}", "--limit", "1")
    [sample] = samples_of(log)
    details = sample.store["MemorySelection:details"]
    assert details["config"]["ablation"] == ablation
    if ablation == "oracle":
        gold = set(scored_record(sample).gold_memory_ids)
        chosen = {c["key"] for c in details["candidates"] if c["selected"]}
        assert chosen == gold & {c["key"] for c in details["candidates"]}


@pytest.mark.slow  # inspect eval in a subprocess
def test_model_flag_swaps_the_response_model(tmp_path):
    log = inspect_eval(tmp_path, "--solver", "vector_memory", "--model", "fixed_latency/0", "--limit", "1")
    assert log.eval.model == "fixed_latency/0"
    [sample] = samples_of(log)
    assert list(sample.model_usage) == ["fixed_latency/0"]


@SLOW  # thirteen inspect eval processes
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-T", "protocol=open"], "Unknown protocol 'open'; choose from paper, blind."),
        (["-T", "dataset=big"], "Unknown dataset 'big'; choose from release, xl."),
        (["-T", "task_families=trivia"], "Unknown task families ['trivia']"),
        (["-T", "data_file=missing.jsonl"], "No such data file:"),
        (["--solver", "vector_memory", "-S", "top_k=-1"], "top_k must be an integer of at least 1, got -1."),
        (
            ["--solver", "graph_memory", "-S", "top_k=abc"],
            "Strategy 'graph_memory': -S top_k='abc' is not int; it takes top_k: int = 3.",
        ),
        (["--solver", "vector_memory", "-S", "embedder=bert"], "Unknown embedder 'bert'; choose from"),
        (["--solver", "summary_memory", "-S", "mode=poem"], "Unknown summary mode 'poem'; choose from llm, concat."),
        (["--solver", "cmi", "-S", "ablation=random"], "Unknown ablation 'random'; choose from full, no_perturb,"),
        (["--solver", "cmi", "-S", "prefer=recency"], "Unknown prefer 'recency'; choose from utility, proposal."),
        (["--solver", "cmi", "-S", "tau_u=nan"], "tau_u must be a finite number in [-inf, inf], got"),
        (["--solver", "cmi", "-S", "tau_s=-inf"], "tau_s must be a finite number in [-inf, inf], got"),
        (["--solver", "cmi", "-S", "tau_u=.nan"], "tau_u must be a finite number in [-inf, inf], got"),
        (
            ["--solver", "cmi", "-S", "budget=abc"],
            "Strategy 'cmi': -S budget='abc' is not int | None; it takes budget: int | None = None.",
        ),
        (["--solver", "cmi", "-S", "budget=0"], "budget must be an integer of at least 1, got 0."),
    ],
)
def test_user_errors_are_one_line_without_traceback(tmp_path, args, message):
    result = run_inspect_eval(
        tmp_path, "--model", "fixed_latency/0", "--limit", "1", *args, check=False, display="plain"
    )  # "none" would print nothing at all
    printed = result.stdout + result.stderr
    assert result.returncode != 0 and "Traceback" not in printed, printed
    # the message alone, perhaps wrapped by the terminal, and Inspect's monitor hint
    ours = " ".join(line for line in printed.splitlines() if not line.startswith("Monitor from"))
    # < 60 words: Inspect's banner naming our two hooks (about 30) and one line of ours
    assert message in " ".join(ours.split()) and len(ours.split()) < 60, printed


@SLOW
@pytest.mark.parametrize(
    ("args", "message"),
    [
        ("intervention: gold", "choose the label-free -S intervention=evidence"),
        ("risk_filter: label", "blind protocol hides; choose from evidence, none"),
    ],
)
def test_a_label_reading_cmi_under_blind_stops_before_the_run(tmp_path, args, message):
    result = run_inspect_eval(
        tmp_path,
        "--model",
        "fixed_latency/0",
        "--limit",
        "2",
        "-T",
        "protocol=blind",
        "-T",
        "strategy=cmi",
        "-T",
        f"strategy_args={{{args}}}",
        check=False,
        display="plain",
    )
    printed = result.stdout + result.stderr
    assert result.returncode != 0 and "Traceback" not in printed, printed
    assert message in " ".join(printed.split())
    assert list(tmp_path.glob("*.eval")) == []  # no run started, so no log and no sample failed


@SLOW
def test_a_label_reading_solver_given_apart_stops_before_the_run_with_the_same_line(tmp_path):
    result = run_inspect_eval(
        tmp_path,
        "--model",
        "fixed_latency/0",
        "--limit",
        "2",
        "-T",
        "protocol=blind",
        "--solver",
        "cmi_inspect/cmi",  # as an installed package's user types it
        "-S",
        "intervention=gold",
        check=False,
        display="plain",
    )
    printed = result.stdout + result.stderr
    assert result.returncode != 0 and "Traceback" not in printed, printed
    assert "choose the label-free -S intervention=evidence" in " ".join(printed.split())
    assert list(tmp_path.glob("*.eval")) == []  # no run started, so no log and no sample failed


@pytest.mark.slow  # inspect eval in a subprocess
def test_a_missing_gguf_file_is_one_line(tmp_path):
    result = run_inspect_eval(tmp_path, "--model", "gguf/missing.gguf", "--limit", "1", check=False, display="plain")
    printed = " ".join((result.stdout + result.stderr).split())
    assert result.returncode != 0 and "Traceback" not in printed
    assert "Unknown local model 'missing.gguf': use one of ['smollm2'] or the path of an existing" in printed


@pytest.mark.slow  # inspect eval in a subprocess
def test_a_file_that_is_not_gguf_is_one_line_and_a_failure(tmp_path):
    fake = tmp_path / "model.gguf"
    fake.write_text("not a model")
    result = run_inspect_eval(
        tmp_path,
        "--model",
        f"gguf/{fake}",
        "-T",
        f"data_file={SYNTHETIC}",
        "--limit",
        "1",
        check=False,
        display="plain",
    )
    printed = " ".join((result.stdout + result.stderr).split())
    assert result.returncode != 0 and "Traceback" not in printed
    assert f"{fake} is not a GGUF file" in printed


@pytest.mark.slow  # inspect eval in a subprocess
def test_a_relative_data_file_is_read_from_where_the_command_ran(tmp_path):
    relative = SYNTHETIC.relative_to(REPO)  # from the repository root, where the user stands
    log = inspect_eval(tmp_path, "--model", "fixed_latency/0", "-T", f"data_file={relative}")
    assert len(samples_of(log)) == 3


@pytest.mark.slow  # inspect eval in a subprocess
def test_the_log_names_its_strategy_protocol_and_arguments(tmp_path):
    log = inspect_eval(
        tmp_path,
        "-T",
        "strategy=graph_memory",
        "-T",
        "strategy_args={top_k: 2}",
        "-T",
        "protocol=blind",
        "--model",
        "fixed_latency/0",
        "--limit",
        "1",
    )
    assert log.eval.tags == ["graph_memory[top_k=2] (blind)"]  # View's log list shows tags
    assert log.eval.task_display_name == "causal_locomo: graph_memory[top_k=2] (blind)"


@pytest.mark.slow  # inspect eval in a subprocess
def test_a_solver_given_apart_tags_the_run_and_leaves_its_display_name(tmp_path):
    log = inspect_eval(
        tmp_path, "--solver", "graph_memory", "-T", "protocol=blind", "--model", "fixed_latency/0", "--limit", "1"
    )
    assert (log.eval.task_display_name, log.eval.tags) == ("causal_locomo", ["graph_memory (blind)"])
    assert log.plan.steps[-1].solver == "graph_memory"  # as typed: the checkout's bare name


@pytest.mark.slow  # inspect eval in a subprocess, twice
@pytest.mark.parametrize(
    ("task", "solver"),
    [("tasks/causal_locomo.py", "cmi"), ("cmi_inspect/causal_locomo", "cmi_inspect/cmi")],
)
def test_a_strategy_solver_runs_and_is_logged_by_the_name_typed(tmp_path, task, solver):
    log = inspect_eval(tmp_path, "--solver", solver, "--model", "fixed_latency/0", "--limit", "1", task=task)
    assert log.status == "success" and len(samples_of(log)) == 1
    assert log.plan.steps[-1].solver == log.eval.solver == solver  # eval-retry reads log.eval.solver


@pytest.mark.slow  # builds XL from LoCoMo, then inspect eval in a subprocess
def test_xl_end_to_end_on_a_few_samples(tmp_path):
    log = inspect_eval(
        tmp_path,
        "-T",
        "dataset=xl",
        "-T",
        "bank_size=8",  # a store's thousand memories would have CMI embed them all
        "-T",
        "strategy=cmi",
        "-T",
        "protocol=blind",
        "--model",
        "fixed_latency/0",
        "--limit",
        "3",
    )
    samples = samples_of(log)
    assert len(samples) == 3 and log.eval.tags == ["cmi (blind, xl, bank_size=8)"]
    assert len({s.metadata["task_family"] for s in samples}) > 1  # a prefix is stratified
    for sample in samples:
        record = scored_record(sample)
        kept = {m.memory_id for m in record.memory_bank}
        assert len(kept) == 8  # drawn label-blind: gold memories may be left out, and are counted
        drawn = score_of(sample, "memory_selection").metadata["bank"]
        assert (drawn["bank_size"], drawn["useful_lost"]) == (8, len(set(record.gold_memory_ids) - kept))
        assert (record.bank_size, record.useful_lost) == (8, drawn["useful_lost"])
        assert 0.0 <= value_of(sample, "memory_selection")["useful_f1"] <= 1.0


@pytest.mark.slow  # inspect eval in a subprocess
def test_the_log_header_leads_with_the_mean_task_score_and_names_the_strategy(tmp_path):
    from inspect_ai.analysis import evals_df

    run_inspect_eval(
        tmp_path,
        "-T",
        "strategy=cmi",
        "-T",
        "strategy_args={ablation: no_perturb}",
        "-T",
        "protocol=blind",
        "-T",
        f"data_file={SYNTHETIC}",
        "--model",
        "fixed_latency/0",
        "--limit",
        "3",
    )
    [path] = tmp_path.glob("*.eval")
    header = read_eval_log(str(path), header_only=True)
    assert header.status == "success" and header.results is not None and header.samples is None
    first = header.results.scores[0]  # what View's list, `inspect log list` and evals_df() read
    assert (first.scorer, first.name) == ("task_score", "score")
    assert list(first.metrics)[:2] == ["mean", "stderr"]
    assert all(score.metrics for score in header.results.scores)  # no empty parent entry
    names = [score.name for score in header.results.scores]
    assert names[:5] == ["score", "deterministic", "judge", "success", "judge_error"]
    assert {"useful_f1", "poison_adoption"} <= set(names)
    name = "causal_locomo: cmi[no_perturb] (blind)"  # what View's Task column shows
    assert (header.eval.task, header.eval.task_display_name) == ("causal_locomo", name)
    assert header.eval.task_registry_name == "causal_locomo"  # what eval-retry and the report read
    row = evals_df(str(path), quiet=True).iloc[0]
    assert (row["score_headline_name"], row["score_headline_score"]) == ("task_score", "score")
    assert row["score_headline_metric"] == "mean"
    assert row["score_headline_value"] == pytest.approx(first.metrics["mean"].value)


@pytest.mark.parametrize(
    ("argument", "message"),
    [
        ({"protocol": "bogus"}, "Unknown protocol 'bogus'"),
        ({"dataset": "bogus"}, "Unknown dataset 'bogus'"),
        ({"scoring": "bogus"}, "Unknown scoring 'bogus'"),
        ({"task_families": "bogus"}, "Unknown task families"),
        ({"split": "val"}, "Unknown split 'val'; choose from train, dev, test."),
    ],
)
def test_a_bad_task_argument_is_named_before_any_data_is_read(argument, message, tmp_path, monkeypatch):
    monkeypatch.setenv("CMI_DATA_DIR", str(tmp_path / "no-data"))  # reading data would fail
    with pytest.raises(UserError, match=message):
        causal_locomo(**argument)


def test_the_register_entry_agrees_with_the_tasks_their_files_and_the_pinned_data():
    import inspect

    import yaml
    from cmi_inspect.causal_locomo import reference
    from cmi_inspect.causal_locomo.data import CAUSAL_LOCOMO_URL
    from cmi_inspect.causal_locomo.judge_audit import judge_calibration
    from cmi_inspect.causal_locomo.xl.locomo import LOCOMO_SHA256, LOCOMO_URL

    here = REPO / "cmi_inspect/causal_locomo/eval.yaml"  # beside the eval, installed with it
    entry = yaml.safe_load(here.read_text(encoding="utf-8"))
    assert entry == register_entry() and not (REPO / "eval.yaml").exists()
    comparability, _, interface = entry["version"].partition("-")
    assert entry["version"] == TASK_VERSION and comparability.isdigit() and interface.isalpha()
    assert entry["contributors"] == []  # for whoever submits it to fill: nobody named who did not agree
    assert entry["tags"] and all(isinstance(t, str) for t in entry["tags"])
    readme = (REPO / "cmi_inspect/causal_locomo/README.md").read_text(encoding="utf-8")
    newest = next(line for line in readme.splitlines() if line.startswith("### ["))
    assert newest.startswith(f"### [{entry['version']}] - ")  # the eval's changelog names this version last
    assert entry["arxiv"] == reference.PAPER_URL
    tasks = {t["name"]: t for t in entry["tasks"]}
    for name, factory in (("causal_locomo", causal_locomo), ("judge_calibration", judge_calibration)):
        defined_in = Path(inspect.getfile(sys.modules[factory.__module__]))
        assert factory.__name__ == name and REPO / tasks[name]["task_path"] == defined_in
    assets = entry["external_assets"]  # each file's sha256 in its comment, as the register's examples
    assert [(a["source"], a["fetch_method"], a["comment"].split()[1].rstrip(","), a["state"]) for a in assets] == [
        (CAUSAL_LOCOMO_URL, "download", CAUSAL_LOCOMO_SHA256, "pinned"),
        (LOCOMO_URL, "download", LOCOMO_SHA256, "pinned"),
    ]
    import cmi_inspect.causal_locomo as package  # the eval's package exports both tasks

    assert package.__all__ == ["causal_locomo", "judge_calibration"]
    assert (package.causal_locomo, package.judge_calibration) == (causal_locomo, judge_calibration)
    require_data()
    assert tasks["causal_locomo"]["dataset_samples"] == len(causal_locomo().dataset)
    assert tasks["judge_calibration"]["dataset_samples"] == len(judge_calibration().dataset)


@pytest.mark.slow  # the linter in a subprocess
def test_inspect_evals_lint_fails_on_nothing_and_the_eval_readme_explains_what_it_reports():
    pytest.importorskip("inspect_evals_lint", reason="needs the dev extra: pip install -e '.[dev]'")
    lint = Path(sys.executable).parent / "inspect-evals-lint"  # beside this Python, in its venv
    done = subprocess.run(
        [str(lint), "causal_locomo", "--output-format", "json"], cwd=REPO, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    import json

    [package] = json.loads(done.stdout)["packages"]
    assert package["passed"] and package["summary"]["fail"] == 0
    reported = {d["rule"] for d in package["diagnostics"]}
    assert reported == {"registry", "custom_metric_tests", "get_model_location"}
    readme = (REPO / "cmi_inspect/causal_locomo/README.md").read_text(encoding="utf-8")
    lint_section = readme.split("## Lint", 1)[1].split("\n## ", 1)[0]
    assert all(f"`{rule}`" in lint_section for rule in reported)


def test_the_checkouts_task_file_takes_the_tasks_parameters():
    import inspect

    import tasks.causal_locomo as checkout

    assert inspect.signature(checkout.causal_locomo) == inspect.signature(causal_locomo)


def test_xl_scores_strictly_by_default_under_either_protocol(tmp_path, monkeypatch, mini_verdicts):
    from cmi_inspect.causal_locomo.xl import assemble

    monkeypatch.setenv("CMI_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(assemble, "locomo_path", lambda: LOCOMO_MINI)
    monkeypatch.setattr(assemble, "VERDICTS", mini_verdicts)
    xl = causal_locomo(dataset="xl", protocol="paper")
    assert (xl.metadata or {})["scoring"] == "strict"  # a guess beside a disclaimer is no success
    release = causal_locomo(data_file=str(SYNTHETIC), protocol="paper")
    assert (release.metadata or {})["scoring"] == "paper"  # the paper's figures reproduce
    chosen = causal_locomo(dataset="xl", protocol="paper", scoring="paper")
    assert (chosen.metadata or {})["scoring"] == "paper"
