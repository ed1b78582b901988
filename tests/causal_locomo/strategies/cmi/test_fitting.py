"""Fitting the learned selector from logged CMI runs: the features a log gives back are the
ones the run computed, the fit ranks as its labels say, and a test-split run is refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from cmi_inspect.causal_locomo.causal_locomo import causal_locomo
from cmi_inspect.causal_locomo.strategies.cmi.features import CAUSAL, NON_CAUSAL
from cmi_inspect.causal_locomo.strategies.cmi.fitting import (
    LoggedSample,
    choose_c,
    choose_threshold,
    fit,
    fit_from_logs,
    kept,
    load_samples,
)
from cmi_inspect.causal_locomo.strategies.cmi.selector import Keeps, SelectorFile
from cmi_inspect.causal_locomo.strategies.solvers import cmi
from cmi_inspect.errors import UserError
from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log, write_eval_log

from conftest import SYNTHETIC, mock_model, samples_of

MODEL = "mockllm/model"


def respond(prompt: str) -> str:
    """Repeats the first memory line's last words; knows nothing without one."""
    lines = [line for line in prompt.splitlines() if line.startswith("- [m")]
    return " ".join(lines[0].split()[-4:]) if lines else "I do not know."


def any_selector(causal: bool) -> SelectorFile:
    names = list(CAUSAL if causal else NON_CAUSAL)
    return SelectorFile(
        name="any",
        causal=causal,
        features=names,
        mean=[0.0] * len(names),
        scale=[1.0] * len(names),
        coef=[0.1 * (i % 3 - 1) for i in range(len(names))],
        intercept=0.0,
        threshold=0.0,
        embedder="hashing",
        response_model=MODEL if causal else None,
    )


@pytest.fixture(scope="module")
def cmi_logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A blind CMI run on the synthetic fixture, ranked by a causal selector file (the
    hashing embedder throughout, which needs no model)."""
    folder = tmp_path_factory.mktemp("cmi-logs")
    path = folder / "selector.json"
    any_selector(causal=True).save(path)
    [log] = inspect_eval(
        causal_locomo(protocol="blind", data_file=str(SYNTHETIC)),
        solver=cmi(selector=str(path), embedder="hashing"),
        model=mock_model(respond),
        display="none",
        log_dir=str(folder / "logs"),
    )
    assert log.status == "success"
    return folder / "logs"


def test_a_log_gives_back_the_features_the_run_computed(cmi_logs):
    runs = load_samples(cmi_logs, CAUSAL, "hashing")
    [log_file] = list(cmi_logs.glob("*.eval"))
    logged = {s.id: s.store["MemorySelection:details"]["candidates"] for s in samples_of(read_eval_log(str(log_file)))}
    assert runs.model == MODEL and runs.splits == ["whole"]
    assert len(runs.samples) == 3
    for sample in runs.samples:
        candidates = logged[sample.sample_id]
        assert sample.keys == [c["key"] for c in candidates]
        for row, c in zip(sample.rows, candidates, strict=True):
            assert row == pytest.approx(c["features"])
            assert c["probability"] is not None


def test_a_run_on_the_test_split_is_refused(cmi_logs, tmp_path):
    [log_file] = list(cmi_logs.glob("*.eval"))
    log = read_eval_log(str(log_file))
    log.eval.task_args["split"] = "test"
    write_eval_log(log, str(tmp_path / "test-split.eval"))
    with pytest.raises(UserError, match="test split"):
        load_samples(tmp_path, CAUSAL, "hashing")


def test_fitting_from_logs_writes_a_selector_that_holds_for_the_runs_model(cmi_logs):
    fitted = fit_from_logs(cmi_logs, embedder="hashing")
    s = fitted.selector
    assert s.causal and s.response_model == MODEL and s.features == list(CAUSAL)
    assert s.fitted_on["samples"] == 3 and s.fitted_on["splits"] == ["whole"]
    assert s.fitted_on["conversations"] == ["syn_0000", "syn_0001", "syn_0002"]
    assert s.fitted_on["conversations_never_read"] == ["conv-41", "conv-47"]
    assert s.fitted_on["threshold_chosen_on"] == "training runs, held out"
    assert set(fitted.losses) and set(fitted.thresholds)
    non_causal = fit_from_logs(cmi_logs, causal=False, embedder="hashing").selector
    assert not non_causal.causal and non_causal.response_model is None


def test_development_runs_must_be_other_conversations(cmi_logs):
    with pytest.raises(UserError, match="share conversations"):
        fit_from_logs(cmi_logs, cmi_logs, embedder="hashing")


def made_up(conversation: str, i: int, useful_at: int) -> LoggedSample:
    """Three candidates; the useful one has the highest memory support."""
    keys = ["m1", "m2", "m3"]
    rows = [{"memory_support": 0.9 if k == useful_at else 0.2 + 0.1 * k} for k in range(3)]
    labels = ["useful" if k == useful_at else "harmful" if k == 2 else "irrelevant" for k in range(3)]
    ids = [f"{conversation}-{i}-{k}" for k in range(3)]
    return LoggedSample(
        sample_id=f"{conversation}_{i}",
        conversation=conversation,
        keys=keys,
        rows=rows,
        labels=labels,
        memory_ids=ids,
        gold=[ids[useful_at]],
        bad=[x for k, x in enumerate(ids) if k != useful_at],
        harmful={ids[2]} if useful_at != 2 else set(),
    )


def test_the_fit_ranks_by_what_tells_the_labels_apart():
    samples = [made_up(c, i, i % 2) for c in ("a", "b", "c") for i in range(6)]
    selector = fit(samples, ["memory_support"], 1.0, MODEL)
    assert selector.coef[0] > 0 and selector.keeps == "every_above"  # what a fit writes now
    assert all(kept(selector, s, 0.0)[0] == s.labels.index("useful") for s in samples)
    assert all(len(kept(selector, s, 0.0)) == 3 for s in samples)  # every candidate reaches 0
    c, losses = choose_c(samples, ["memory_support"])
    assert c in losses and losses[c] == min(losses.values())
    threshold, table = choose_threshold(selector, samples)
    assert table[threshold]["useful_f1"] == 1.0 and table[threshold]["poison_adoption"] == 0.0
    assert table[0.95]["n_selected"] <= table[0.0]["n_selected"]


def test_cross_validation_needs_two_conversations():
    with pytest.raises(UserError, match="two conversations"):
        choose_c([made_up("a", i, 0) for i in range(3)], ["memory_support"])


def test_every_above_keeps_each_candidate_that_reaches_the_threshold_and_top_the_best_alone():
    s = made_up("a", 0, 0)
    two_useful = LoggedSample(**{**s.__dict__, "labels": ["useful", "useful", "harmful"], "gold": s.memory_ids[:2]})
    two_useful.rows[1]["memory_support"] = 0.8
    every = any_one_feature_selector(keeps="every_above")
    p = [every.probability(r) for r in two_useful.rows]
    assert p[0] > p[1] > 0.5 > p[2]
    assert kept(every, two_useful, 0.5) == [0, 1]  # most probable first
    assert kept(every, two_useful, 0.97) == [0] and kept(every, two_useful, 0.99) == []
    assert two_useful.metrics(kept(every, two_useful, 0.5))["useful_f1"] == 1.0
    top = every.model_copy(update={"keeps": "top"})
    assert kept(top, two_useful, 0.5) == [0] and kept(top, two_useful, 0.99) == []
    assert two_useful.metrics(kept(top, two_useful, 0.5))["useful_f1"] == pytest.approx(2 / 3)


def any_one_feature_selector(keeps: Keeps) -> SelectorFile:
    """p(useful) rises with memory support, 0.5 at 0.5."""
    return SelectorFile(
        name="support", causal=False, features=["memory_support"], mean=[0.5], scale=[0.1],
        coef=[1.0], intercept=0.0, threshold=0.5, keeps=keeps, embedder="hashing",
    )  # fmt: skip


def test_a_fit_on_candidates_of_one_kind_is_one_line():
    samples = [made_up("a", i, 0) for i in range(3)]
    only_irrelevant = [LoggedSample(**{**s.__dict__, "labels": ["irrelevant"] * 3}) for s in samples]
    with pytest.raises(UserError, match="^the samples of a hold candidates of one kind only"):
        fit(only_irrelevant, ["memory_support"], 1.0, MODEL)
