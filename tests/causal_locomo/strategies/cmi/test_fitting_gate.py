"""The fitting gate reads conversations from the samples, not the run's arguments: a log with
a sample of a conversation XL keeps for test is refused whatever data file or split the run
named, in one line; train and dev conversations and a data file of one's own pass."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from cmi_inspect.causal_locomo.causal_locomo import causal_locomo
from cmi_inspect.causal_locomo.strategies.cmi.fitting_gate import (
    check_fittable,
    fitting_logs,
    forbidden_conversations,
    readable,
    sample_conversation,
)
from cmi_inspect.causal_locomo.strategies.solvers import STRATEGY_SOLVERS as SOLVERS
from cmi_inspect.cli import main
from cmi_inspect.errors import UserError
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog, read_eval_log, write_eval_log

from conftest import SYNTHETIC, mock_model


@pytest.fixture(scope="module")
def honest_log(tmp_path_factory: pytest.TempPathFactory) -> EvalLog:
    """A run on the synthetic file, whose example ids name no LoCoMo conversation."""
    [log] = inspect_eval(
        causal_locomo(data_file=str(SYNTHETIC)),
        solver=SOLVERS["no_memory"](),
        model=mock_model(lambda p: "I do not know."),
        display="none",
        log_dir=str(tmp_path_factory.mktemp("logs")),
    )
    assert log.status == "success"
    return read_eval_log(log.location)


def renamed(log: EvalLog, ids: list[str], folder: Path) -> Path:
    """The log with its samples given these example ids (as a data file of XL's or the
    release's examples names them), written into ``folder``, its task arguments untouched."""
    assert log.samples is not None
    for sample, example_id in zip(log.samples, ids, strict=True):
        sample.id = example_id
        sample.metadata["example_id"] = example_id
    folder.mkdir(exist_ok=True)
    path = folder / "2026-01-01T00-00-00+00-00_causal-locomo_renamed.eval"
    write_eval_log(log, str(path))
    return path


def test_the_conversations_no_fit_reads_are_xl_s_test_split():
    assert forbidden_conversations() == ["conv-41", "conv-47"]


LOCOMO = ["conv-26", "conv-30", "conv-41", "conv-42", "conv-43", "conv-44", "conv-47", "conv-48", "conv-49", "conv-50"]


@dataclass(frozen=True)
class Read:
    conversation: str
    index: int


def test_a_fold_of_cross_fitting_may_read_every_conversation_but_the_one_it_holds_out():
    samples = [Read(c, i) for c in LOCOMO for i in range(2)]
    for fold in LOCOMO:
        assert forbidden_conversations(fold) == [fold]
        let_through = readable(samples, fold)
        assert {s.conversation for s in let_through} == set(LOCOMO) - {fold}
        assert let_through == [s for s in samples if s.conversation != fold]  # in order, all else kept
    # a test conversation of the legacy split is readable by every fold but its own
    assert {s.conversation for s in readable(samples, "conv-26")} >= {"conv-41", "conv-47"}


def test_cross_fitting_reads_a_run_on_the_test_split_that_a_single_fit_refuses(honest_log, tmp_path):
    log = honest_log.model_copy(deep=True)
    log.eval.task_args["split"] = "test"
    renamed(log, ["conv-41_qa_0000", "conv-47_qa_0001", "conv-26_qa_0002"], tmp_path / "logs")
    with pytest.raises(UserError, match="is a run on the test split"):
        fitting_logs(tmp_path / "logs")
    [header] = fitting_logs(tmp_path / "logs", cross_fit=True)
    assert header.eval.task_args["split"] == "test"


def test_a_sample_s_conversation_is_the_one_its_example_id_names(honest_log):
    assert honest_log.samples is not None
    assert [sample_conversation(s) for s in honest_log.samples] == ["syn_0000", "syn_0001", "syn_0002"]
    check_fittable(honest_log)  # a data file of one's own: nothing to refuse


@pytest.mark.parametrize(
    "ids",
    [
        ["conv-41_qa_0003", "conv-41_qa_0007", "conv-47_qa_0001"],  # XL's test examples, no split named
        ["conv-30_qa_0000", "conv-26_qa_0001", "conv-47_qa_0002"],  # a whole run, one test sample
    ],
)
def test_a_log_with_a_test_conversation_s_sample_is_refused_whatever_its_arguments(honest_log, tmp_path, ids):
    path = renamed(honest_log.model_copy(deep=True), ids, tmp_path / "logs")
    [header] = fitting_logs(tmp_path / "logs")
    assert header.eval.task_args.get("split") is None  # the run's arguments say nothing
    refused = f"^{re.escape(str(path))} holds samples of conversations the data set keeps for test"
    with pytest.raises(UserError, match=refused):
        check_fittable(read_eval_log(str(path)))


def test_train_and_dev_conversations_pass(honest_log, tmp_path):
    ids = ["conv-30_qa_0000", "conv-26_qa_0001", "conv-50_qa_0002"]
    path = renamed(honest_log.model_copy(deep=True), ids, tmp_path)
    check_fittable(read_eval_log(str(path)))


def test_fit_selector_on_a_test_conversation_s_run_is_one_line(honest_log, tmp_path, capsys):
    ids = ["conv-30_qa_0000", "conv-41_qa_0001", "conv-41_qa_0002"]
    renamed(honest_log.model_copy(deep=True), ids, tmp_path / "logs")
    out = str(tmp_path / "s.json")
    assert main(["fit-selector", str(tmp_path / "logs"), "--out", out, "--embedder", "hashing"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "keeps for test (conv-41 (2))" in err
    assert not (tmp_path / "s.json").exists()
