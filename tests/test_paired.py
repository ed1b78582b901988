"""Paired comparison of two runs: differences, bootstrap intervals and harmful adoptions,
on small mockllm runs of the synthetic fixture."""

from __future__ import annotations

import pytest
from cmi_inspect.causal_locomo.task import causal_locomo
from cmi_inspect.errors import UserError
from cmi_inspect.report.paired import compare, harmful_adopted, pair_key, paired_differences, per_sample
from cmi_inspect.strategies.solvers import full_history, no_memory
from inspect_ai import eval as inspect_eval

from conftest import SYNTHETIC, mock_model


@pytest.fixture(scope="module")
def logs():
    def run(solver, answer):
        [log] = inspect_eval(
            causal_locomo(data_file=str(SYNTHETIC)), solver=solver, model=mock_model(lambda p: answer), display="none"
        )
        return log

    return run(full_history(), "3 March 2022"), run(no_memory(), "I do not know.")


def test_differences_are_means_over_the_pairs_with_an_interval_around_them(logs):
    full, none = logs
    a, b = per_sample(full), per_sample(none)
    assert a.keys() == b.keys() and len(a) == 3
    by_metric = {d.metric: d for d in paired_differences(full, none, resamples=500)}
    f1 = by_metric["useful_f1"]
    expected = sum(a[i]["useful_f1"] - b[i]["useful_f1"] for i in a) / len(a)
    assert f1.n == 3 and f1.difference == pytest.approx(expected) and f1.low <= f1.difference <= f1.high
    assert f1.b == 0.0  # no memory selects nothing
    assert by_metric["poison_adoption"].difference > 0  # full history holds every harmful memory


def test_harmful_adoptions_are_counted_over_memories(logs):
    full, none = logs
    adopted, total = harmful_adopted(full)
    assert total > 0 and adopted == total and harmful_adopted(none) == (0, total)
    first = pair_key(full.samples[0])
    assert harmful_adopted(full, {first})[1] <= total and harmful_adopted(full, set()) == (0, 0)


def test_compare_renders_a_table_and_refuses_a_missing_log(logs, tmp_path):
    full, none = logs
    text = compare(full.location, none.location, resamples=200)
    assert text.startswith("3 paired samples, 200 bootstrap resamples.")
    assert "| useful_f1 |" in text and "Harmful memories adopted: full_history" in text
    with pytest.raises(UserError, match="^No log at"):
        compare(str(tmp_path / "missing.eval"), none.location)


def test_runs_on_different_data_are_not_paired(logs):
    full, none = logs
    other = none.model_copy(deep=True)
    other.eval.metadata = {**(other.eval.metadata or {}), "data_sha256": "f" * 64}
    with pytest.raises(UserError, match="ran on different data"):
        paired_differences(full, other)


def test_each_epoch_is_its_own_pair(logs):
    full, _ = logs
    twice = full.model_copy(deep=True)
    second = [s.model_copy(update={"epoch": 2}) for s in twice.samples or []]
    twice.samples = [*(twice.samples or []), *second]
    assert len(per_sample(twice)) == 2 * len(per_sample(full))
    assert harmful_adopted(twice)[1] == 2 * harmful_adopted(full)[1]


def test_compare_refuses_a_run_on_edited_data_in_one_line(logs, tmp_path, capsys):
    from cmi_inspect.cli import main

    full, _ = logs
    edited = tmp_path / "data.jsonl"
    edited.write_text(SYNTHETIC.read_text(encoding="utf-8").replace("3 March 2022", "4 April 2024"), encoding="utf-8")
    [other] = inspect_eval(
        causal_locomo(data_file=str(edited)),
        solver=full_history(),
        model=mock_model(lambda p: "3 March 2022"),
        display="none",
        log_dir=str(tmp_path),
    )
    assert main(["compare", full.location, other.location]) == 2
    err = capsys.readouterr().err
    assert "ran on different data" in err and err.count("\n") == 1
