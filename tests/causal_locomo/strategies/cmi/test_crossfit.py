"""Cross-fitting: the folds, a fold that never reads its held-out conversation and reads its
choice conversation for the threshold only, the file written from logged CMI runs, and a run
that ranks each sample with the fold holding out its conversation."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cmi_inspect.causal_locomo.causal_locomo import causal_locomo
from cmi_inspect.causal_locomo.strategies.cmi.crossfit import cross_fit, cross_fit_from_logs, folds
from cmi_inspect.causal_locomo.strategies.cmi.features import CAUSAL, NON_CAUSAL
from cmi_inspect.causal_locomo.strategies.cmi.fitting import LoggedRuns, LoggedSample, choose_c, fit
from cmi_inspect.causal_locomo.strategies.cmi.selector import CrossFitFile, SelectorFile, read_selector
from cmi_inspect.causal_locomo.strategies.solvers import cmi
from cmi_inspect.cli import main
from cmi_inspect.errors import UserError
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog, read_eval_log, write_eval_log

from conftest import REPO, conversation_data, mock_model, samples_of

MODEL = "mockllm/model"
LOCOMO = ["conv-26", "conv-30", "conv-41", "conv-42", "conv-43", "conv-44", "conv-47", "conv-48", "conv-49", "conv-50"]
FIXTURE = {"conv-26": [0, 1, 2], "conv-30": [0, 1, 2], "conv-41": [2, 0, 1], "conv-42": [1, 2, 0]}
"""Four conversations of the synthetic records, named as LoCoMo's examples are."""


def test_ten_conversations_give_ten_folds_each_held_out_once_chosen_on_the_next():
    found = folds(list(reversed(LOCOMO)))
    assert [held for held, _, _ in found] == LOCOMO
    for i, (held_out, choice, training) in enumerate(found):
        assert choice == LOCOMO[(i + 1) % 10]  # the next one, cyclic
        assert training == [c for c in LOCOMO if c not in (held_out, choice)] and len(training) == 8
    assert [choice for _, choice, _ in found][-1] == "conv-26"


@pytest.mark.parametrize("conversations", [[], ["conv-26"], ["conv-26", "conv-30", "conv-30"]])
def test_fewer_than_three_conversations_are_one_line(conversations):
    with pytest.raises(UserError) as refused:
        folds(conversations)
    message = str(refused.value)
    assert message.startswith("cross-fitting needs logs of 3 conversations or more") and "\n" not in message


def made_up(conversation: str, i: int, support: tuple[float, float, float], labels: tuple[str, ...]) -> LoggedSample:
    ids = [f"{conversation}-{i}-{k}" for k in range(3)]
    return LoggedSample(
        sample_id=f"{conversation}_qa_{i:04d}",
        conversation=conversation,
        keys=["m1", "m2", "m3"],
        rows=[{"memory_support": s} for s in support],
        labels=list(labels),
        memory_ids=ids,
        gold=[x for x, label in zip(ids, labels, strict=True) if label == "useful"],
        bad=[x for x, label in zip(ids, labels, strict=True) if label != "useful"],
        harmful={x for x, label in zip(ids, labels, strict=True) if label == "harmful"},
    )


def runs_of(by_conversation: dict[str, list[LoggedSample]]) -> LoggedRuns:
    return LoggedRuns([s for samples in by_conversation.values() for s in samples], MODEL, ["whole"], ["x"])


def conversation(name: str, useful_support: float, harmful_support: float) -> list[LoggedSample]:
    """Six samples: the useful candidate at ``useful_support``, the harmful one at
    ``harmful_support``, an irrelevant one between."""
    labels = ("useful", "irrelevant", "harmful")
    return [made_up(name, i, (useful_support + 0.01 * i, 0.5, harmful_support), labels) for i in range(6)]


def test_a_fold_reads_nothing_of_its_held_out_conversation_and_its_choice_one_for_the_threshold_alone():
    names = ["memory_support"]
    clean = {c: conversation(c, 0.8, 0.2) for c in ("a", "b", "c", "d")}
    base = cross_fit(runs_of(clean), names, "hashing").file
    by_fold = {f.held_out: f for f in base.folds}
    assert [(f.held_out, f.choice) for f in base.folds] == [("a", "b"), ("b", "c"), ("c", "d"), ("d", "a")]
    for f in base.folds:
        assert f.read == sorted(set("abcd") - {f.held_out}) and f.held_out not in f.read
        assert f.selector.fitted_on["conversations_never_read"] == [f.held_out]
        assert f.selector.keeps == "every_above" and f.selector.name == f"crossfit_non_causal fold {f.held_out}"
        assert f.selector.fitted_on["threshold_chosen_on"] == f"conversation {f.choice}"
    # a (held out by its fold) made to say the opposite: its fold does not move at all
    flipped = clean | {"a": conversation("a", 0.2, 0.95)}
    moved = {f.held_out: f for f in cross_fit(runs_of(flipped), names, "hashing").file.folds}
    assert moved["a"] == by_fold["a"]
    # the fold choosing on a (d's) keeps its coefficients; its threshold is a's to choose
    assert moved["d"].selector.coef == by_fold["d"].selector.coef
    assert moved["d"].selector.intercept == by_fold["d"].selector.intercept
    assert moved["d"].selector.threshold != by_fold["d"].selector.threshold
    # the folds trained on a are fitted anew
    for held_out in ("b", "c"):
        assert moved[held_out].selector.coef != by_fold[held_out].selector.coef
    # a fold's selector is the fit on its training conversations, C chosen among them
    fold_b = by_fold["b"]
    train = [s for c in fold_b.training for s in clean[c]]
    c, _ = choose_c(train, names)
    assert fold_b.selector.fitted_on["C"] == c
    assert fold_b.selector.coef == fit(train, names, c, MODEL, "hashing").coef


def test_a_fold_trained_on_one_conversation_records_that_c_was_not_chosen():
    three = {c: conversation(c, 0.8, 0.2) for c in ("a", "b", "c")}
    file = cross_fit(runs_of(three), ["memory_support"], "hashing").file
    assert all(f.selector.fitted_on["C_chosen_by"] == "default (one training conversation)" for f in file.folds)
    assert [len(f.training) for f in file.folds] == [1, 1, 1]


def test_each_fold_keeps_every_candidate_its_choice_conversation_says_is_worth_keeping():
    """Two useful candidates a sample: the threshold chosen keeps both, not the top one."""
    labels = ("useful", "useful", "harmful")
    two = {c: [made_up(c, i, (0.9, 0.8, 0.1 + 0.01 * i), labels) for i in range(6)] for c in "abc"}
    fitted = cross_fit(runs_of(two), ["memory_support"], "hashing")
    for f in fitted.file.folds:
        chosen = fitted.tables[f.held_out][f.selector.threshold]
        assert chosen["n_selected"] == 2.0 and chosen["useful_f1"] == 1.0 and chosen["poison_adoption"] == 0.0
    assert "| a | b | 1 conversations |" in fitted.report()


def respond(prompt: str) -> str:
    """Repeats the first memory line's last words; knows nothing without one."""
    lines = [line for line in prompt.splitlines() if line.startswith("- [m")]
    return " ".join(lines[0].split()[-4:]) if lines else "I do not know."


def causal_selector(path: Path) -> str:
    names = list(CAUSAL)
    SelectorFile(
        name="any", causal=True, features=names, mean=[0.0] * len(names), scale=[1.0] * len(names),
        coef=[0.1 * (i % 3 - 1) for i in range(len(names))], intercept=0.0, threshold=0.0,
        embedder="hashing", response_model=MODEL,
    ).save(path)  # fmt: skip
    return str(path)


def run_cmi(data: Path, selector: str, log_dir: Path, **options) -> EvalLog:
    [log] = inspect_eval(
        causal_locomo(protocol="blind", data_file=str(data)),
        solver=cmi(selector=selector, embedder="hashing", **options),
        model=mock_model(respond),
        display="none",
        log_dir=str(log_dir),
        fail_on_error=False,
    )
    return log


@pytest.fixture(scope="module")
def fixture_logs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The four-conversation fixture, and a blind CMI run on it (every intervention asked)."""
    folder = tmp_path_factory.mktemp("crossfit")
    data = conversation_data(folder / "data.jsonl", FIXTURE)
    log = run_cmi(data, causal_selector(folder / "any.json"), folder / "logs")
    assert log.status == "success" and all(s.error is None for s in samples_of(log))
    return data, folder / "logs"


def test_fit_selector_cross_fit_writes_one_file_of_a_fold_per_conversation(fixture_logs, tmp_path, capsys):
    _, logs = fixture_logs
    out = tmp_path / "crossfit.json"
    assert main(["fit-selector", str(logs), "--cross-fit", "--out", str(out), "--embedder", "hashing"]) == 0
    assert f"Written: {out} (use it with -S selector={out})" in capsys.readouterr().out
    file = read_selector(out)
    assert isinstance(file, CrossFitFile) and json.loads(out.read_text())["format"] == "cmi-inspect-crossfit/1"
    assert file.name == "crossfit" and file.causal and file.fitted_on["response_model"] == MODEL
    assert [f.held_out for f in file.folds] == list(FIXTURE)
    for f in file.folds:
        assert f.held_out not in f.read and f.read == sorted(set(FIXTURE) - {f.held_out})
        assert f.selector.fitted_on["samples"] == 3 * len(f.training) and f.selector.fitted_on["choice_samples"] == 3
    non_causal = cross_fit_from_logs(logs, causal=False, embedder="hashing").file
    assert non_causal.name == "crossfit_non_causal" and not non_causal.causal
    assert non_causal.features == list(NON_CAUSAL)


def test_cross_fit_refuses_dev_and_logs_of_fewer_than_three_conversations(fixture_logs, tmp_path, capsys):
    _, logs = fixture_logs
    out = str(tmp_path / "cf.json")
    assert main(["fit-selector", str(logs), "--cross-fit", "--dev", str(logs), "--out", out]) == 2
    assert "drop --dev" in capsys.readouterr().err
    [path] = logs.glob("*.eval")
    log = read_eval_log(str(path))
    for sample in samples_of(log):  # two conversations left
        example_id = str(sample.id).replace("conv-41", "conv-26").replace("conv-42", "conv-30")
        sample.id = sample.metadata["example_id"] = example_id
    (tmp_path / "two").mkdir()
    write_eval_log(log, str(tmp_path / "two" / path.name))
    assert main(["fit-selector", str(tmp_path / "two"), "--cross-fit", "--out", out, "--embedder", "hashing"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "these cover 2: conv-26, conv-30." in err
    assert not Path(out).exists()


def test_a_run_ranks_each_sample_with_the_fold_that_never_read_its_conversation(fixture_logs, tmp_path):
    data, logs = fixture_logs
    file = cross_fit_from_logs(logs, embedder="hashing").file
    path = tmp_path / "crossfit.json"
    file.save(path)
    records = data.read_text().splitlines()
    stranger = json.dumps(json.loads(records[0]) | {"example_id": "conv-99_qa_0000"})
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text("\n".join([*records, stranger]) + "\n")
    log = run_cmi(mixed, str(path), tmp_path / "logs")
    by_id = {str(s.id): s for s in samples_of(log)}
    assert len(by_id) == 13
    refused = by_id.pop("conv-99_qa_0000").error
    assert refused is not None and refused.message.strip().endswith(
        "cross-fitted selector crossfit: no fold holds out conversation conv-99 (its folds hold out conv-26, "
        "conv-30, conv-41, conv-42); a sample is ranked only by the fold that never read its conversation."
    )
    for example_id, sample in by_id.items():
        assert sample.error is None, sample.error
        details = sample.store["MemorySelection:details"]
        held_out = example_id.split("_qa_")[0]
        fold = file.fold_for(held_out)
        assert details["selector"] == f"crossfit fold {held_out}" and details["budget"] == 3
        kept = [c["key"] for c in details["candidates"] if c["selected"]]
        above = [c for c in details["candidates"] if c["probability"] >= fold.selector.threshold]
        assert kept == [c["key"] for c in sorted(above, key=lambda c: (-c["probability"], c["rank"]))]
        assert sample.scores and "n_selected" in json.dumps(sample.scores["memory_selection"].value)


def test_learned_non_causal_runs_with_a_non_causal_cross_fit_asking_no_intervention(fixture_logs, tmp_path):
    data, logs = fixture_logs
    path = tmp_path / "nc.json"
    cross_fit_from_logs(logs, causal=False, embedder="hashing").file.save(path)
    log = run_cmi(data, str(path), tmp_path / "logs", ablation="learned_non_causal")
    for sample in samples_of(log):
        assert sample.error is None, sample.error
        details = sample.store["MemorySelection:details"]
        assert details["selector"] == f"crossfit_non_causal fold {str(sample.id).split('_qa_')[0]}"
        assert details["model_calls"] == 0 and details["answer_no_memory"] is None


@pytest.mark.slow  # two inspect eval processes
def test_inspect_eval_takes_a_cross_fit_file_as_it_takes_a_selector_file(fixture_logs, tmp_path):
    """The commands a user types, from the checkout: the file read at -S parsing, each sample
    ranked by its conversation's fold; a causal one of another model's answers refused before
    the run, in one line."""
    data, logs = fixture_logs
    env = {k: v for k, v in os.environ.items() if k not in ("INSPECT_EVAL_MODEL", "INSPECT_LOG_DIR")}

    def inspect_eval_cli(selector: Path, *args: str) -> subprocess.CompletedProcess[str]:
        command = [str(Path(sys.executable).parent / "inspect"), "eval", "tasks/causal_locomo.py",
                   "--solver", "cmi", "-S", f"selector={selector}", "-S", "embedder=hashing", *args,
                   "-T", "protocol=blind", "-T", f"data_file={data}", "--model", "fixed_latency/0",
                   "--log-dir", str(tmp_path / "logs"), "--display", "plain"]  # fmt: skip
        return subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True)

    causal, non_causal = tmp_path / "crossfit.json", tmp_path / "crossfit_non_causal.json"
    cross_fit_from_logs(logs, embedder="hashing").file.save(causal)
    cross_fit_from_logs(logs, causal=False, embedder="hashing").file.save(non_causal)
    refused = inspect_eval_cli(causal)  # fitted on mockllm/model's answers
    printed = " ".join((refused.stdout + refused.stderr).split())  # unwrapped by the terminal
    assert refused.returncode != 0 and "Traceback" not in printed
    assert "cross-fitted selector crossfit was fitted on mockllm/model's answers, not fixed_latency/0's" in printed
    assert not list((tmp_path / "logs").glob("*.eval"))
    ran = inspect_eval_cli(non_causal, "-S", "ablation=learned_non_causal")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    [written] = (tmp_path / "logs").glob("*.eval")
    log = read_eval_log(str(written))
    assert log.status == "success" and len(samples_of(log)) == 12
    for sample in samples_of(log):
        assert sample.error is None
        fold = str(sample.id).split("_qa_")[0]
        assert sample.store["MemorySelection:details"]["selector"] == f"crossfit_non_causal fold {fold}"
