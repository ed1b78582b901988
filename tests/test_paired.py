"""Paired comparison of two runs: differences, bootstrap intervals over samples and over
conversations, and harmful adoptions, on small mockllm runs of the synthetic fixture."""

from __future__ import annotations

import numpy as np
import pytest
from cmi_inspect.causal_locomo.causal_locomo import causal_locomo
from cmi_inspect.causal_locomo.strategies.solvers import full_history, no_memory
from cmi_inspect.errors import UserError
from cmi_inspect.report.paired import (
    compare,
    conversation_means,
    conversations_line,
    harmful_adopted,
    pair_key,
    paired_differences,
    per_sample,
)
from inspect_ai import eval as inspect_eval

from conftest import SYNTHETIC, conversation_data, mock_model


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


def test_compare_reads_logs_through_links_as_it_reads_them(logs, tmp_path):
    full, none = logs
    for name, log in (("a.eval", full), ("b.eval", none)):
        (tmp_path / name).symlink_to(log.location)
    assert compare(str(tmp_path / "a.eval"), str(tmp_path / "b.eval"), resamples=200) == compare(
        full.location, none.location, resamples=200
    )


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


CONVERSATIONS = {"conv-1": [0, 1], "conv-2": [0, 2], "conv-3": [1, 2, 2]}
"""Which synthetic records each conversation of the fixture holds, as LoCoMo ids name them."""


def run_on(data, solver, answer, log_dir):
    [log] = inspect_eval(
        causal_locomo(data_file=str(data)),
        solver=solver,
        model=mock_model(lambda p: answer),
        display="none",
        log_dir=str(log_dir),
    )
    assert log.status == "success", log.error
    return log


@pytest.fixture(scope="module")
def conversation_logs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("conversations")
    data = conversation_data(folder / "data.jsonl", CONVERSATIONS)
    return run_on(data, full_history(), "3 March 2022", folder), run_on(data, no_memory(), "I do not know.", folder)


def test_the_conversation_bootstrap_resamples_conversations_with_all_their_pairs():
    # each conversation's pairs average 0, so every resample of conversations does
    diff = np.array([1.0, -1.0, 1.0, -1.0, 0.5, -0.5])
    means = conversation_means(diff, ["a", "a", "b", "b", "c", "c"], resamples=200, seed=0)
    assert means.shape == (200,) and np.allclose(means, 0.0)
    # the mean is over the pairs drawn: a conversation of three weighs three times one of one
    means = conversation_means(np.array([1.0, 1.0, 1.0, 0.0]), ["a", "a", "a", "b"], resamples=2000, seed=0)
    assert set(np.round(means, 6)) == {0.0, 0.75, 1.0}
    again = conversation_means(np.array([1.0, 1.0, 1.0, 0.0]), ["a", "a", "a", "b"], resamples=2000, seed=0)
    assert np.array_equal(means, again)  # seeded


def test_compare_gives_an_interval_over_conversations_and_says_how_many(conversation_logs):
    full, none = conversation_logs
    differences = paired_differences(full, none, resamples=500)
    assert differences == paired_differences(full, none, resamples=500)  # deterministic
    score = next(d for d in differences if d.metric == "score")
    assert score.n == 7 and score.conversations == 3
    assert score.conversation_low is not None and score.conversation_high is not None
    assert score.conversation_low <= score.difference <= score.conversation_high
    text = compare(full.location, none.location, resamples=200)
    assert text.startswith("7 paired samples, 200 bootstrap resamples.\n")
    assert "Conversation bootstrap: the 3 conversations the pairs come from" in text
    assert "Fewer than 5 clusters: its interval is drawn from 3 conversation means" in text
    assert "| 95% conversation bootstrap |" in text and "n/a" not in text


def test_a_comparison_of_fewer_than_five_conversations_says_so_in_its_line():
    for count in (2, 4):
        line = conversations_line(count)
        assert "\n" not in line and f"Fewer than 5 clusters: its interval is drawn from {count}" in line
    assert "Fewer" not in conversations_line(5) and "Fewer" not in conversations_line(10)


def test_without_conversations_the_interval_is_not_available_in_one_line(logs, tmp_path):
    full, none = logs  # the synthetic fixture's ids, syn_0000, name no conversation
    score = next(d for d in paired_differences(full, none, resamples=100) if d.metric == "score")
    assert (score.conversations, score.conversation_low, score.conversation_high) == (0, None, None)
    text = compare(full.location, none.location, resamples=100)
    assert "Conversation bootstrap: not available (sample ids name no conversation).\n" in text
    assert text.count("| n/a |") == 3
    one = conversation_data(tmp_path / "one.jsonl", {"conv-9": [0, 1, 2]})
    a, b = run_on(one, full_history(), "3 March 2022", tmp_path), run_on(one, no_memory(), "No.", tmp_path)
    assert "not available (the pairs come from one conversation)" in compare(a.location, b.location, resamples=50)
