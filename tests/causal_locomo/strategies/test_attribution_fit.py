"""The attribution baselines' thresholds cross-fitted by conversation (``attribution_fit``,
``cmi-inspect fit-threshold``), and runs that read them, on the synthetic set (each of whose
samples is a conversation of its own)."""

from __future__ import annotations

import json

import pytest
from cmi_inspect.causal_locomo.causal_locomo import causal_locomo
from cmi_inspect.causal_locomo.selection import MemorySelection
from cmi_inspect.causal_locomo.strategies.attribution_fit import GRID, Replayed, choose, fit_thresholds, replayed
from cmi_inspect.causal_locomo.strategies.cmi import fitting_gate as gate
from cmi_inspect.causal_locomo.strategies.leave_one_in import LeaveOneInDetails
from cmi_inspect.cli import main as cli
from cmi_inspect.errors import UserError
from inspect_ai import eval as inspect_eval

from conftest import SYNTHETIC, samples_of


def sample(conversation: str, attributions: list[float], gold: list[str]) -> Replayed:
    return Replayed(conversation, attributions, ["a", "b", "c"], gold, [], {"c"})


def test_the_threshold_with_the_best_mean_objective_is_chosen_the_lowest_on_a_tie():
    useful_above_half = [sample("x", [1.0, 0.3, 0.0], ["a"]), sample("y", [2.0, 0.4, 0.1], ["a"])]
    assert choose(useful_above_half)[0] == 0.5  # keeps a alone
    assert choose([sample("x", [0.0, 0.0, 0.0], [])])[0] == 0.0  # every threshold keeps nothing


def run(log_dir, threshold: object = 0.0):
    [log] = inspect_eval(
        causal_locomo(data_file=str(SYNTHETIC), protocol="blind", strategy="leave_one_in",
                      strategy_args={"threshold": threshold}),
        model="forced_script/0", display="none", log_dir=str(log_dir), limit=4,
    )  # fmt: skip
    assert log.status == "success", log.error
    return log


def test_each_fold_is_chosen_on_the_other_conversations_and_a_run_keeps_its_folds_threshold(tmp_path):
    run(tmp_path / "first")
    fitted = fit_thresholds(str(tmp_path / "first"), "leave_one_in")
    logged = [s for s in (replayed(x, "leave_one_in") for x in samples_of(run(tmp_path / "again"))) if s]
    assert len(fitted.folds) == len(logged) >= 3 and fitted.grid == list(GRID)
    for fold in fitted.folds:
        assert (fold.threshold, fold.objective) == choose(gate.readable(logged, fold.held_out))
    path = tmp_path / "thresholds.json"
    fitted.save(path)
    by_fold = {f.held_out: f.threshold for f in fitted.folds}
    for s in samples_of(run(tmp_path / "second", str(path))):
        d = LeaveOneInDetails.model_validate(s.store_as(MemorySelection).details)
        assert d.threshold == by_fold[str(s.id)]
        assert [c.selected for c in d.candidates] == [c.attribution > d.threshold for c in d.candidates]


def test_a_threshold_file_of_another_strategy_or_none_at_all_is_one_line(tmp_path):
    run(tmp_path / "first")
    assert cli(["fit-threshold", str(tmp_path / "first"), "--strategy", "leave_one_in",
                "--out", str(tmp_path / "t.json")]) == 0  # fmt: skip
    data = json.loads((tmp_path / "t.json").read_text())
    (tmp_path / "cc.json").write_text(json.dumps({**data, "strategy": "context_cite"}))
    with pytest.raises(UserError, match="fitted for context_cite, not leave_one_in"):
        causal_locomo(data_file=str(SYNTHETIC), strategy="leave_one_in",
                      strategy_args={"threshold": str(tmp_path / "cc.json")})  # fmt: skip
    with pytest.raises(UserError, match="-S threshold=nowhere.json: No such file"):
        causal_locomo(data_file=str(SYNTHETIC), strategy="leave_one_in",
                      strategy_args={"threshold": "nowhere.json"})  # fmt: skip
    with pytest.raises(UserError, match="two conversations or more"):
        fit_thresholds(str(tmp_path / "nothing"), "leave_one_in")
