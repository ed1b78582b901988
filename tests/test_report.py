"""The report over small mockllm logs, checked against values computed by hand."""

from __future__ import annotations

import json

import pytest
from cmi_inspect.causal_locomo.causal_locomo import causal_locomo
from cmi_inspect.causal_locomo.data import CAUSAL_LOCOMO_SHA256, sha256_of
from cmi_inspect.causal_locomo.strategies.solvers import (
    cmi,
    full_history,
    graph_memory,
    no_memory,
    summary_memory,
    vector_memory,
)
from cmi_inspect.report import build_report
from cmi_inspect.report.runs import ALIAS_JUDGE, read_runs
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.log import read_eval_log
from inspect_ai.solver import generate
from PIL import Image

from conftest import SYNTHETIC, mock_model

CMI, VECTOR, GRAPH, SUMMARY = (
    "cmi[k=4]",
    "vector_memory[embedder=hashing]",
    "graph_memory[top_k=1]",
    "summary_memory[mode=concat]",
)
"""The fixture's runs as the report names them: each with the solver arguments it was given."""


def answer_3_march(prompt: str) -> str:
    return "3 March 2022" if "Comet on 3 March 2022" in prompt and "not true" not in prompt else "I do not know."


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory):
    path = tmp_path_factory.mktemp("logs")

    def run(solver, respond, task=None, roles=None, **task_args):
        inspect_eval(
            task or causal_locomo(data_file=str(SYNTHETIC), **task_args),
            solver=solver,
            model=mock_model(respond),
            model_roles=roles,
            display="none",
            log_dir=str(path),
            fail_on_error=False,
        )

    def fail_on(question: str):
        def respond(prompt: str) -> str:
            if question in prompt:
                raise RuntimeError("the model is down")
            return "I do not know."

        return respond

    run(no_memory(), lambda p: "superseded")  # an older no_memory log
    run(no_memory(), lambda p: "I do not know.")
    run(graph_memory(top_k=1), lambda p: "3 March 2022")
    run(graph_memory(), lambda p: "3 March 2022")  # a second graph run, with other arguments
    run(cmi(k=4), answer_3_march)
    run(cmi(k=4), answer_3_march, roles={"grader": mock_model(lambda p: "no verdict here", role="grader")})
    run(generate(), lambda p: "x", task=Task(dataset=[Sample(input="hi")], name="other_task"))
    run(vector_memory(embedder="hashing"), fail_on("Which two"))  # one sample of three fails
    run(summary_memory(mode="concat"), fail_on(""))  # every sample fails
    (path / "2026-01-01T00-00-00-00-00_causal-locomo_damaged.eval").write_bytes(b"not a zip file")
    return path


@pytest.fixture(scope="module")
def runs(log_dir):
    """The folder's runs and notes, read once (each read re-scores in a clean process)."""
    return read_runs(str(log_dir))


@pytest.fixture(scope="module")
def report(log_dir, tmp_path_factory):
    """The folder's report, built once: its Markdown and the folder of its files."""
    out = tmp_path_factory.mktemp("report")
    return build_report(str(log_dir), out=out), out


@pytest.fixture(scope="module")
def by_strategy(runs):
    """Rows scored by the offline alias judge, by strategy, and the notes."""
    rows, notes = runs
    return {r.strategy: r for r in rows if r.judge == ALIAS_JUDGE}, notes


def test_runs_with_another_judge_are_their_own_row_naming_it_and_its_errors(runs, report):
    rows, _ = runs
    [graded] = [r for r in rows if r.judge != ALIAS_JUDGE]
    assert (graded.strategy, graded.judge, graded.judge_errors) == (CMI, "mockllm/model", 3)
    alias = next(r for r in rows if r.strategy == CMI and r.judge == ALIAS_JUDGE)
    assert alias.judge_errors == 0
    markdown, _ = report
    assert "| judge | judge errors |" in markdown
    assert "| mockllm/model | 3 |" in markdown and f"| {ALIAS_JUDGE} | 0 |" in markdown


def test_rows_match_hand_computed_values(by_strategy):
    rows, _ = by_strategy
    assert list(rows) == [CMI, VECTOR, "graph_memory", GRAPH, SUMMARY, "no_memory"]
    # "I do not know.": 3/5, 3/5 and 2/4 deterministic, judge 0 -> 0.42, 0.42, 0.35
    none = rows["no_memory"]
    assert none.metrics["score"].mean == pytest.approx((0.42 + 0.42 + 0.35) / 3)
    assert none.metrics["success"].mean == 0.0
    assert (none.metrics["useful_f1"].mean, none.metrics["bad_rejection"].mean) == (0.0, 1.0)
    assert none.calls == 1.0 and none.samples == 3
    assert {f: m.mean for f, m in none.by_family.items()} == {
        "factual_memory_qa": pytest.approx(0.35),
        "multi_evidence_memory_qa": pytest.approx(0.42),
        "temporal_memory_qa": pytest.approx(0.42),
    }
    # graph top-1 picks a gold memory in each example; syn_0001 has two gold -> F1 2/3
    graph = rows[GRAPH]
    assert graph.metrics["useful_f1"].mean == pytest.approx((1 + 2 / 3 + 1) / 3)
    assert graph.metrics["n_selected"].mean == 1.0
    assert graph.metrics["poison_adoption"].mean == 0.0
    assert graph.metrics["score"].mean == pytest.approx((1.0 + 0.42 + 0.35) / 3)
    assert graph.metrics["success"].mean == pytest.approx(1 / 3)
    # success (1, 0, 0): sample variance 1/3, standard error sqrt(1/3 / 3) = 1/3
    assert graph.metrics["success"].stderr == pytest.approx(1 / 3)
    # CMI, every memory a candidate: 1 + 2 x bank calls (final answers reused): 9, 7, 5
    assert rows[CMI].calls == 7.0
    assert rows[CMI].metrics["score"].mean == pytest.approx((1.0 + 0.42 + 0.35) / 3)
    assert rows[CMI].metrics["useful_f1"].mean == pytest.approx(1 / 3)  # syn_0000 only


def test_runs_with_different_solver_arguments_are_separate_rows(by_strategy):
    rows, _ = by_strategy
    assert rows[GRAPH].metrics["n_selected"].mean == 1.0
    assert rows["graph_memory"].metrics["n_selected"].mean > 2.0  # the default top_k=3


def test_poison_adoption_by_attack_kind(by_strategy, report):
    rows, _ = by_strategy
    # the one harmful memory (a temporal shift, in syn_0000) is a CMI candidate but not kept;
    # every other example has none of that kind
    assert {k: (m.mean, m.n) for k, m in rows[CMI].by_attack_kind.items()} == {"temporal_shift": (0.0, 1)}
    markdown, _ = report
    assert "## Poison adoption by kind of harmful memory" in markdown
    assert f"| {CMI} | mockllm/model | paper | 0.000 (n=1) |" in markdown


def test_f1_at_k_stands_in_the_rows_of_strategies_that_rank_and_the_breakdowns_follow(by_strategy, report):
    rows, _ = by_strategy
    # graph top-1's ranking starts with a gold memory in each example; syn_0001 has two gold
    graph = rows[GRAPH]
    assert graph.f1_at["f1_at_1"].mean == pytest.approx((1 + 2 / 3 + 1) / 3)
    assert graph.f1_at["f1_at_1"].n == 3 and rows["no_memory"].f1_at == {}
    assert set(rows[CMI].f1_at) == {"f1_at_1", "f1_at_3"}  # its proposal ranks
    markdown, out = report
    assert "| useful F1 | recall | precision | bad rejection | poison adoption | n_selected | F1@1 | F1@3 |" in markdown
    none_row = next(line for line in markdown.splitlines() if line.startswith("| no_memory | mockllm/model"))
    assert none_row.split(" | ")[13:15] == ["-", "-"]  # no ranking, no F1@k
    # syn_0000 and syn_0002 have one useful memory, syn_0001 two; syn_0000 a temporal shift
    assert "### By number of useful memories" in markdown and "### By kind of harmful memory" in markdown
    assert f"| {GRAPH} | mockllm/model | paper | 2+ | 1 | n/a | 0.667 | 0.000 |" in markdown
    assert f"| {GRAPH} | mockllm/model | paper | temporal_shift | 1 | n/a | 1.000 | 0.000 |" in markdown
    written = json.loads((out / "report.json").read_text())
    groups = {(r["strategy"], r["group"]): r for r in written["by_useful_memories"]}
    assert groups[GRAPH, "1"]["samples"] == 2 and groups[GRAPH, "1"]["useful_f1"]["mean"] == 1.0
    assert {r["group"] for r in written["by_attack_kind"]} == {"temporal_shift"}
    table1 = {r["strategy"]: r for r in written["table1"]}
    assert table1[GRAPH]["f1_at"]["f1_at_1"]["n"] == 3 and "rows" not in table1[GRAPH]


def test_skipped_logs_are_noted(by_strategy):
    _, notes = by_strategy
    assert any(n.startswith("2026-01-01T00-00-00-00-00_causal-locomo_damaged.eval: unreadable") for n in notes)
    assert any("task 'other_task' is not causal_locomo" in n for n in notes)
    assert sum("superseded" in n for n in notes) == 1


def test_a_folder_of_links_to_logs_reports_as_the_folder_of_the_logs(log_dir, report, tmp_path):
    links = tmp_path / "links"
    links.mkdir()
    for path in log_dir.glob("*.eval"):
        (links / path.name).symlink_to(path)
    (links / "again").symlink_to(log_dir, target_is_directory=True)  # the same logs by another path
    assert build_report(str(links)).replace(str(links), str(log_dir)) == report[0]


def test_failed_samples_are_counted_not_hidden(by_strategy, report):
    rows, _ = by_strategy
    assert (rows[VECTOR].samples, rows[VECTOR].failed) == (2, 1)
    assert (rows[SUMMARY].samples, rows[SUMMARY].failed) == (0, 3)
    markdown, _ = report
    assert f"| {VECTOR} | mockllm/model | paper | 2 | 1 |" in markdown
    assert f"| {SUMMARY} | mockllm/model | paper | 0 | 3 | - |" in markdown


def test_seconds_per_sample_is_what_the_samples_spent(log_dir, by_strategy):
    rows, _ = by_strategy
    [log] = [read_eval_log(str(p)) for p in log_dir.glob("*.eval") if rows[GRAPH].log == p.name]
    spent = [s.working_time or 0.0 for s in log.samples or []]
    assert rows[GRAPH].seconds_per_sample == pytest.approx(sum(spent) / len(spent))


def test_markdown_json_and_figures(report):
    markdown, out = report
    for title in ("Table 1", "Table 2", "Table 3", "Skipped logs"):
        assert f"## {title}" in markdown
    # the paper's figures stand beside runs on the release only: none beside the fixture's
    assert "## Data: " + str(SYNTHETIC) in markdown and "| ↳ paper" not in markdown
    written = json.loads((out / "report.json").read_text())
    rows = {r["strategy"]: r for r in written["table1"]}
    assert {(r["dataset"], r["data_sha256"], r["paper_settings"]) for r in written["table1"]} == {
        (str(SYNTHETIC), sha256_of(SYNTHETIC), False)
    }
    assert all(r["dataset"] == str(SYNTHETIC) for part in ("table2", "poison_by_kind", "table3") for r in written[part])
    assert rows["no_memory"]["metrics"]["score"]["mean"] == pytest.approx(0.396667, abs=1e-6)
    assert rows[GRAPH]["metrics"]["useful_f1"]["mean"] == pytest.approx(0.888889, abs=1e-6)
    # Table 3: the gold memory of syn_0000 has utility +0.4 and stability +0.4; all else 0
    table3 = {r["label"]: r for r in written["table3"]}
    assert table3["useful"]["candidates"] == 4
    assert table3["useful"]["utility"] == pytest.approx(0.1)
    assert table3["useful"]["stability"] == pytest.approx(0.1)
    assert (table3["irrelevant"]["candidates"], table3["irrelevant"]["utility"]) == (4, 0.0)
    assert (table3["harmful"]["candidates"], table3["harmful"]["utility"]) == (1, 0.0)
    assert rows[GRAPH]["wall_clock"] is not None and rows[GRAPH]["provenance"]["command"].startswith("inspect eval ")
    for png in ("accuracy_robustness.png", "utility_by_label.png", "poison_by_kind.png", "accuracy_cost.png"):
        with Image.open(out / png) as image:
            image.verify()
            assert image.format == "PNG" and image.size[0] > 300


PAPER_ROW = "| ↳ paper (GPT-4.1, judge GPT-5) | gpt-4.1 | paper | 87 |"


def run_into(path, solver, respond="I do not know.", **options):
    """One mockllm eval into ``path``: the task's arguments and Inspect's options apart."""
    task_args = {k: options.pop(k) for k in ("data_file", "protocol", "bank_size") if k in options}
    [log] = inspect_eval(
        causal_locomo(**task_args),
        solver=solver,
        model=mock_model(lambda p: respond),
        display="none",
        log_dir=str(path),
        **options,
    )
    assert log.status == "success"
    return log


@pytest.fixture(scope="module")
def two_data_dir(tmp_path_factory):
    """One folder, as plain ``inspect eval --log-dir`` writes it: no_memory on a data file,
    then on the same file edited (another answer key), and full_history over two epochs."""
    path = tmp_path_factory.mktemp("two-data")
    data = path / "data.jsonl"
    data.write_text(SYNTHETIC.read_text(encoding="utf-8"), encoding="utf-8")
    first = run_into(path / "logs", no_memory(), data_file=str(data))
    data.write_text(data.read_text(encoding="utf-8").replace("3 March 2022", "4 April 2024"), encoding="utf-8")
    second = run_into(path / "logs", no_memory(), data_file=str(data))
    run_into(path / "logs", full_history(), "3 March 2022", data_file=str(SYNTHETIC), epochs=2)
    digests = [(log.eval.metadata or {})["data_sha256"] for log in (first, second)]
    assert digests[0] != digests[1]
    return path / "logs", str(data), digests


@pytest.fixture(scope="module")
def two_data_read(two_data_dir):
    """That folder's runs and notes, and its report's Markdown and files, each made once."""
    logs, _, _ = two_data_dir
    runs, notes = read_runs(str(logs))
    return runs, notes, build_report(str(logs), out=logs.parent / "report"), logs.parent / "report"


def test_a_run_on_other_data_is_its_own_row_never_superseding_one(two_data_dir, two_data_read):
    _, data, (old, new) = two_data_dir
    runs, notes, markdown, _ = two_data_read
    assert not any("superseded" in n for n in notes)
    assert sorted((r.data.name, r.data.sha256) for r in runs if r.strategy == "no_memory") == sorted(
        [(data, old), (data, new)]
    )
    assert f"## Data: {data} (sha256 {new[:12]}..., 3 examples)" in markdown
    # the first run's data is gone (the file was edited): it cannot be re-scored, so it is not ranked
    unverified = markdown.split("## Unverified runs", 1)[1]
    assert f"its data file {data} now has sha256 {new[:12]}..., not the {old[:12]}... it was scored on" in unverified
    assert f"## Data: {data} (sha256 {old[:12]}" not in markdown
    assert f"## Data: {SYNTHETIC} (sha256 {sha256_of(SYNTHETIC)[:12]}..., 3 examples)" in markdown


def test_a_log_another_task_version_scored_is_not_verified_by_this_one(tmp_path):
    import asyncio

    from cmi_inspect.causal_locomo.causal_locomo import TASK_VERSION
    from cmi_inspect.report.verify import verify_log
    from inspect_ai.log import write_eval_log

    log = run_into(tmp_path / "logs", no_memory(), data_file=str(SYNTHETIC))
    assert asyncio.run(verify_log(log.location)).verified
    n, interface = TASK_VERSION.split("-")
    log.eval.task_version = f"{int(n) + 1}-{interface}-{sha256_of(SYNTHETIC)[:12]}"  # what N bumps
    older = str(tmp_path / "older.eval")
    write_eval_log(log, older)
    check = asyncio.run(verify_log(older))
    assert not check.verified and check.problems == [
        f"it was scored by task version {int(n) + 1}-{interface}, and this cmi-inspect scores version "
        f"{TASK_VERSION}: run it again, or verify it with the version that made it"
    ]
    log.eval.task_version = f"{n}-Z-{sha256_of(SYNTHETIC)[:12]}"  # another interface scores alike
    write_eval_log(log, older)
    assert asyncio.run(verify_log(older)).verified


def test_a_run_of_several_epochs_counts_its_samples_once(two_data_read):
    runs, _, markdown, out = two_data_read
    [full] = [r for r in runs if r.strategy == "full_history"]
    assert (full.samples, full.epochs, full.failed) == (3, 2, 0)
    # one sample per family and one harmful memory of the kind: each mean is over 1 sample
    assert {m.n for m in full.by_family.values()} == {1}
    assert full.by_attack_kind["temporal_shift"].n == 1
    assert full.metrics["score"].n == 3
    assert "| full_history | mockllm/model | paper | 3 × 2 epochs | 0 |" in markdown
    [row] = [r for r in json.loads((out / "report.json").read_text())["table1"] if r["strategy"] == "full_history"]
    assert (row["samples"], row["epochs"]) == (3, 2)


@pytest.mark.slow  # five runs on the whole release
def test_the_papers_rows_stand_beside_whole_release_runs_on_its_settings_only(release_file, tmp_path):
    run_into(tmp_path, no_memory())
    run_into(tmp_path, summary_memory(mode="concat"), limit=3)  # not the paper's arguments
    run_into(tmp_path, full_history(), limit=3)  # the paper's arguments, 3 of 87 examples
    run_into(tmp_path, no_memory(), protocol="blind")
    run_into(tmp_path, no_memory(), data_file=str(SYNTHETIC))
    runs, notes = read_runs(str(tmp_path))
    assert not any("superseded" in n for n in notes)
    assert [r.strategy for r in runs if r.paper_settings] == ["no_memory"]
    [release] = [r for r in runs if r.paper_settings]
    assert (release.data.name, release.data.sha256, release.samples) == ("release", CAUSAL_LOCOMO_SHA256, 87)
    markdown = build_report(str(tmp_path))
    assert f"## Data: release (sha256 {CAUSAL_LOCOMO_SHA256[:12]}..., 87 examples)" in markdown
    # Table 1 and Table 2 each: one paper row, right under the release's no_memory
    assert markdown.count(PAPER_ROW) == 1 and markdown.count("| ↳ paper") == 2
    lines = markdown.splitlines()
    at = lines.index(next(line for line in lines if line.startswith(PAPER_ROW)))
    assert lines[at - 1].startswith("| no_memory | mockllm/model | paper | 87 | 0 |")
    assert "| full_history | mockllm/model | paper | 3 | 0 |" in markdown
    assert "| no_memory | mockllm/model | blind | 87 | 0 |" in markdown


def test_a_run_that_asked_for_a_sandbox_none_ran_in_is_marked_not_isolated(hostile, tmp_path, monkeypatch):
    from cmi_inspect.causal_locomo.strategies import isolation
    from cmi_inspect.causal_locomo.strategies.solvers import memory_strategy

    monkeypatch.setattr(isolation, "sandbox", lambda: "none")
    run_into(tmp_path, memory_strategy(strategy="first_memory", isolate=True), data_file=str(SYNTHETIC))
    [run] = read_runs(str(tmp_path))[0]
    assert run.strategy == "first_memory + isolated (not isolated: no sandbox ran)"


def test_runs_on_banks_drawn_down_and_on_whole_banks_are_separate_rows(tmp_path):
    run_into(tmp_path, no_memory(), data_file=str(SYNTHETIC))
    run_into(tmp_path, no_memory(), data_file=str(SYNTHETIC), bank_size=2)
    runs, notes = read_runs(str(tmp_path))
    assert not any("superseded" in n for n in notes)
    assert sorted(r.data.bank_size or 0 for r in runs) == [0, 2]
    markdown = build_report(str(tmp_path))
    assert "3 examples, banks of 2)" in markdown and "3 examples)" in markdown


def test_a_forced_decoding_counts_as_a_call_and_its_tokens_as_input():
    from cmi_inspect.local_model.capability import FORCED_DECODING
    from cmi_inspect.report.sample_cost import forced_decodings, model_calls, token_usage
    from inspect_ai.event import Event, InfoEvent
    from inspect_ai.log import EvalSample
    from pydantic import JsonValue

    record: dict[str, JsonValue] = {"prompt_tokens": 10, "continuation_tokens": 3}
    events: list[Event] = [InfoEvent(source=FORCED_DECODING, data={FORCED_DECODING: record}), InfoEvent(data="a note")]
    sample = EvalSample(id=1, epoch=1, input="q", target="t", events=events)
    assert forced_decodings(sample) == [record]
    assert model_calls(sample) == 1 and token_usage(sample) == (13, 0)


def test_the_verifying_process_runs_no_hook_of_the_environment_and_refuses_to_start_otherwise(tmp_path, monkeypatch):
    import subprocess
    import sys

    from cmi_inspect.report import verify

    log = run_into(tmp_path / "logs", no_memory(), data_file=str(SYNTHETIC))
    hooks, ran = tmp_path / "hooks", tmp_path / "ran"
    hooks.mkdir()
    ran.mkdir()
    for hook in ("evil.pth", "sitecustomize.py"):  # each would mark the process it ran in
        (hooks / hook).write_text(f"import pathlib; pathlib.Path({str(ran / hook)!r}).write_text('ran')\n")
    subprocess.run([sys.executable, "-c", f"import site; site.addsitedir({str(hooks)!r})"], check=True)
    assert (ran / "evil.pth").exists()  # a folder's .pth runs when site reads it: the hook is real
    (ran / "evil.pth").unlink()
    paths = verify.clean_paths()
    monkeypatch.setattr(verify, "clean_paths", lambda: [*paths, str(hooks)])  # a site folder with hooks
    monkeypatch.setenv("PYTHONPATH", str(hooks))
    [check] = verify.verify_clean([log.location]).values()
    assert check.verified and list(ran.iterdir()) == []
    done = subprocess.run(
        [sys.executable, "-m", "cmi_inspect.report.verify", "--out", str(tmp_path / "out.json"), log.location],
        capture_output=True,
        text=True,
    )
    assert done.returncode != 0 and "python -I -S" in done.stderr
