"""The judge audit: answers of known correctness, the judge path they take, the rates."""

from __future__ import annotations

import json

import pytest
from cmi_inspect.cli import main
from cmi_inspect.data import load_records
from cmi_inspect.judge import Verdict, majority
from cmi_inspect.judge_audit import KINDS, audit_result, calibration_answers, judge_calibration
from inspect_ai import eval as inspect_eval

from conftest import SYNTHETIC, mock_model, score_of, value_of


@pytest.fixture(scope="module")
def records():
    return load_records(SYNTHETIC)


def test_answers_are_built_from_the_record_alone_and_the_wrong_ones_are_wrong(records):
    for record in records:
        answers = list(calibration_answers(record))
        assert answers == list(calibration_answers(record))  # deterministic
        assert {kind for kind, _ in answers} <= set(KINDS)
        expected = record.scoring_criteria.expected_answer.lower()
        assert ("correct", record.scoring_criteria.expected_answer) in answers
        for kind, text in answers:
            if kind != "correct":
                assert expected not in text.lower(), (kind, text)
    dated = next(r for r in records if r.scoring_criteria.expected_answer == "3 March 2022")
    wrong = [t for k, t in calibration_answers(dated) if k == "specific_wrong"]
    assert "3 March 2021" in wrong  # the expected date a year earlier
    assert any(m.content in wrong for m in dated.memory_bank if m.label == "harmful")
    assert [t for k, t in calibration_answers(dated) if k == "vague_wrong"] == [
        "Sometime last year.",
        "It was a while ago.",
    ]


def run_audit(tmp_path, roles=None):
    [log] = inspect_eval(
        judge_calibration(data_file=str(SYNTHETIC)),
        model="none/none",
        model_roles=roles,
        display="none",
        log_dir=str(tmp_path),
    )
    assert log.status == "success", log.error
    return log


def test_the_alias_judge_accepts_the_right_answers_and_no_specific_wrong_one(tmp_path):
    result = audit_result(run_audit(tmp_path))
    assert result["n"] == 3 and str(result["judge"]).startswith("alias-match")
    acceptance = result["acceptance"]
    assert isinstance(acceptance, dict)
    assert acceptance["correct"] == 1.0 and acceptance["specific_wrong"] == 0.0
    assert result["agreement_with_alias"] == 1.0


def test_a_grader_that_accepts_everything_is_caught(tmp_path):
    grader = mock_model(lambda p: '{"task_success_score": 1.0}', role="grader")
    result = audit_result(run_audit(tmp_path, {"grader": grader}))
    acceptance = result["acceptance"]
    assert isinstance(acceptance, dict)
    assert acceptance["vague_wrong"] == acceptance["specific_wrong"] == 1.0
    assert isinstance(result["agreement_with_alias"], float) and result["agreement_with_alias"] < 1.0


def test_a_majority_of_graders_decides_and_a_tie_rejects():
    def v(score: float, error: str | None = None) -> Verdict:
        return Verdict(score, f"g{score}", "", error)

    assert majority([v(1.0), v(0.8), v(0.0)]).score == 1.0
    assert majority([v(1.0), v(0.0)]).score == 0.0  # a tie rejects
    panel = majority([v(1.0), v(1.0, "unreadable"), v(0.0)])
    assert panel.score == 0.0 and panel.error is not None  # an unreadable reply votes to reject


def test_several_graders_vote_in_a_normal_run(tmp_path):
    from cmi_inspect.solvers import no_memory
    from cmi_inspect.task import causal_locomo

    yes = mock_model(lambda p: '{"task_success_score": 1.0}', role="grader")
    no = mock_model(lambda p: '{"task_success_score": 0.0}', role="grader")
    [log] = inspect_eval(
        causal_locomo(data_file=str(SYNTHETIC)),
        solver=no_memory(),
        model=mock_model(lambda p: "I do not know."),
        model_roles={"grader": [yes, yes, no]},
        display="none",
        log_dir=str(tmp_path),
    )
    assert log.status == "success" and log.samples
    score = score_of(log.samples[0], "task_score")
    assert value_of(log.samples[0], "task_score")["judge"] == 1.0
    assert score.metadata is not None and score.metadata["judge"].startswith("majority of")


def test_the_command_prints_and_writes_the_result_and_the_report_shows_it(tmp_path, capsys):
    out = tmp_path / "audit.json"
    assert (
        main(["judge-audit", "--data-file", str(SYNTHETIC), "--log-dir", str(tmp_path / "logs"), "--json", str(out)])
        == 0
    )
    printed = capsys.readouterr().out
    written = json.loads(out.read_text())
    assert json.loads(printed.strip().splitlines()[-1]) == written
    assert set(written) >= {"judge", "n", "acceptance", "stderr", "agreement_with_alias"}
    runs = tmp_path / "runs"
    assert (
        main(
            [
                "run",
                str(runs),
                "--model",
                "fixed_latency/0",
                "--strategies",
                "no_memory",
                "-T",
                f"data_file={SYNTHETIC}",
            ]
        )
        == 0
    )
    capsys.readouterr()
    assert main(["report", str(runs), "--judge-audit", str(out)]) == 0
    report = capsys.readouterr().out
    assert "## How far to trust the judge" in report and "| specific_wrong |" in report
