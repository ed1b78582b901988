"""The register's evaluation report: the paper's figure beside runs on its settings only, the
difference, and each run's command, dates and versions from its log."""

from __future__ import annotations

import dataclasses
import math

import pytest
from cmi_inspect.causal_locomo import reference
from cmi_inspect.causal_locomo.causal_locomo import causal_locomo
from cmi_inspect.causal_locomo.data import CAUSAL_LOCOMO_SHA256
from cmi_inspect.causal_locomo.strategies.solvers import cmi, vector_memory
from cmi_inspect.report import build_report
from cmi_inspect.report.evaluation import difference, duration, evaluation_report, score_table
from cmi_inspect.report.runs import DataSet, Run, read_runs
from cmi_inspect.report.stats import Mean
from inspect_ai import eval as inspect_eval

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
