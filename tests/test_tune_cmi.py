"""The tuning replay decides as the run decided, and recomputes the answer effect: it
replays CMI's rule (``-S selector=rule``), not a learned selector."""

from __future__ import annotations

from benchmarks.tune_cmi import replay
from cmi_inspect.causal_locomo.causal_locomo import causal_locomo
from cmi_inspect.causal_locomo.prompts import note_contents
from cmi_inspect.causal_locomo.strategies.solvers import cmi
from inspect_ai import eval as inspect_eval

from conftest import LABEL_FREE, mock_model


def follow_first_note(prompt: str) -> str:
    notes = note_contents(prompt)
    return notes[0] if notes else "I do not know."


def run(**args):
    [log] = inspect_eval(
        causal_locomo(protocol="blind", data_file=str(LABEL_FREE)),
        solver=cmi(embedder="hashing", selector="rule", **args),
        model=mock_model(follow_first_note),
        display="none",
    )
    assert log.status == "success" and log.samples
    return log


def logged_f1(log) -> float:
    values = [s.scores["memory_selection"].value["useful_f1"] for s in log.samples]
    return sum(values) / len(values)


def test_replaying_the_runs_thresholds_gives_the_runs_selections():
    log = run(effect="answer")
    config = log.samples[0].store["MemorySelection:details"]["config"]
    result = replay(log, config["tau_u"], config["tau_s"], config["prefer"])
    assert result["n"] == len(log.samples) and result["f1"] == logged_f1(log)
    # the answer effect recomputed from a run of it is that run (no graded record: as logged)
    assert replay(log, config["tau_u"], config["tau_s"], config["prefer"], "answer") == result


def test_other_thresholds_change_the_replay():
    log = run(effect="answer", tau_u=0.0, tau_s=0.0)
    kept_all = replay(log, -2.0, -1.01, "utility")
    kept_none = replay(log, 2.0, -1.01, "utility")
    assert kept_none["f1"] == 0.0 and kept_all["f1"] > 0.0
