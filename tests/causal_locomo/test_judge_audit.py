"""The judge audit: answers of known correctness, the judge path they take, the rates."""

from __future__ import annotations

import json

import pytest
from cmi_inspect.causal_locomo.data_files import load_records
from cmi_inspect.causal_locomo.judge import Verdict, majority
from cmi_inspect.causal_locomo.judge_audit import (
    KINDS,
    VAGUE,
    audit_result,
    calibration_answers,
    calibration_samples,
    given_answer,
    judge_acceptance,
    judge_calibration,
)
from cmi_inspect.cli import main
from cmi_inspect.report.audits import judge_table
from inspect_ai import eval as inspect_eval
from inspect_ai.log import list_eval_logs, read_eval_log
from inspect_ai.model import ModelName
from inspect_ai.scorer import Target
from inspect_ai.solver import TaskState

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
            if kind not in ("correct", "negated"):
                assert expected not in text.lower(), (kind, text)
    dated = next(r for r in records if r.scoring_criteria.expected_answer == "3 March 2022")
    wrong = [t for k, t in calibration_answers(dated) if k == "specific_wrong"]
    assert "3 March 2021" in wrong  # the expected date a year earlier
    assert any(m.content in wrong for m in dated.memory_bank if m.label == "harmful")
    assert [t for k, t in calibration_answers(dated) if k == "vague_wrong"] == [
        "Sometime last year.",
        "It was a while ago.",
    ]
    assert [t for k, t in calibration_answers(dated) if k == "negated"] == [
        "It was not 3 March 2022.",
        "I don't think it was 3 March 2022.",
        "The answer 3 March 2022 is wrong.",
        "3 March 2022? No.",
        "It is untrue that it was 3 March 2022.",
    ]


async def test_given_answer_answers_with_no_model_and_judge_acceptance_scores_it(records):
    """The task's solver and scorer on two of its samples, outside any run: with no grader
    the judge is the alias match, which accepts the expected answer and not a wrong one."""
    samples = {str(s.id).split(":")[-1]: s for s in calibration_samples(records[:1])}
    seen = {}
    for kind in ("correct", "specific_wrong"):
        sample = samples[kind]
        state = TaskState(
            model=ModelName("none/none"), sample_id=sample.id or "", epoch=1, input=sample.input,
            messages=[], metadata=sample.metadata,
        )  # fmt: skip

        async def no_model(state, **kwargs):
            raise AssertionError("given_answer asked the model")

        state = await given_answer()(state, no_model)  # type: ignore[arg-type]
        assert state.output.completion == (sample.metadata or {})["answer"]
        score = await judge_acceptance()(state, Target(""))
        assert score is not None and score.metadata is not None and score.metadata["kind"] == kind
        seen[kind] = score.value
    assert seen == {
        "correct": {"accepted": 1.0, "alias_agrees": 1.0},
        "specific_wrong": {"accepted": 0.0, "alias_agrees": 1.0},
    }


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


@pytest.mark.slow  # the audit's whole item set through an Inspect run
@pytest.mark.heavy  # minutes on two cores: -m 'not heavy' leaves it out
def test_the_alias_judge_accepts_the_right_answers_and_no_specific_wrong_one(tmp_path):
    result = audit_result(run_audit(tmp_path))
    assert result["n"] == 3 and str(result["judge"]).startswith("alias-match")
    acceptance = result["acceptance"]
    assert isinstance(acceptance, dict)
    assert acceptance["correct"] == 1.0 and acceptance["specific_wrong"] == 0.0
    assert acceptance["negated"] == 0.0  # the alias match as a run gives it
    items = result["items"]
    assert isinstance(items, dict) and items["negated"] == 3 * 5  # five phrasings an example
    assert result["agreement_with_alias"] == 1.0
    assert "| negated | 15 | 0.000 |" in judge_table(result)


def test_a_grader_that_accepts_everything_is_caught(tmp_path):
    grader = mock_model(lambda p: '{"task_success_score": 1.0}', role="grader")
    result = audit_result(run_audit(tmp_path, {"grader": grader}))
    acceptance = result["acceptance"]
    assert isinstance(acceptance, dict)
    assert acceptance["vague_wrong"] == acceptance["specific_wrong"] == acceptance["negated"] == 1.0
    assert isinstance(result["agreement_with_alias"], float) and result["agreement_with_alias"] < 1.0


def test_a_majority_of_graders_decides_and_a_tie_rejects():
    def v(score: float, error: str | None = None) -> Verdict:
        return Verdict(score, f"g{score}", "", error)

    assert majority([v(1.0), v(0.8), v(0.0)]).score == 1.0
    assert majority([v(1.0), v(0.0)]).score == 0.0  # a tie rejects
    panel = majority([v(1.0), v(1.0, "unreadable"), v(0.0)])
    assert panel.score == 0.0 and panel.error is not None  # an unreadable reply votes to reject


def test_several_graders_vote_in_a_normal_run(tmp_path):
    from cmi_inspect.causal_locomo.causal_locomo import causal_locomo
    from cmi_inspect.causal_locomo.strategies.solvers import no_memory

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
    assert set(written) >= {"judge", "n", "acceptance", "stderr", "errors", "error_rate", "agreement_with_alias"}
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


def vague(prompt: str) -> bool:
    """Whether the answer to grade is one of the vague wrong ones."""
    answer = prompt.split("Answer to grade:\n<<<\n")[1].split("\n>>>")[0]
    return any(answer in texts for texts in VAGUE.values())


def test_judge_errors_are_counted_by_kind_and_an_all_error_kind_is_not_meaningful(tmp_path, capsys):
    # a grader that rejects readably, except that its verdicts on vague answers are unreadable
    grader = mock_model(lambda p: "no verdict here" if vague(p) else '{"task_success_score": 0.0}', role="grader")
    result = audit_result(run_audit(tmp_path, {"grader": grader}))
    items, errors = result["items"], result["errors"]
    assert isinstance(items, dict) and isinstance(errors, dict)
    assert errors == {**dict.fromkeys(KINDS, 0), "vague_wrong": items["vague_wrong"]}
    assert items["vague_wrong"] > 0 and result["errors_overall"] == items["vague_wrong"]
    assert result["error_rate"] == {
        "correct": 0.0,
        "vague_wrong": 1.0,
        "specific_wrong": 0.0,
        "adversarial": None,
        "negated": 0.0,
    }
    assert result["error_rate_overall"] == pytest.approx(items["vague_wrong"] / sum(items.values()))
    # all-error kinds have no acceptance (not 0.000, which reads as a judge that never falsely accepts)
    assert result["acceptance"] == {
        "correct": 0.0,
        "vague_wrong": None,
        "specific_wrong": 0.0,
        "adversarial": None,
        "negated": 0.0,
    }
    table = judge_table(result)
    assert f"| vague_wrong | {items['vague_wrong']} | not meaningful | - | {items['vague_wrong']} (all) |" in table
    assert f"| correct | {items['correct']} | 0.000 | 0.000 | 0 |" in table
    assert f"{items['vague_wrong']} of {sum(items.values())} verdicts" in table and "were judge errors" in table
    # the report shows the same counts from the --json file
    out = tmp_path / "audit.json"
    out.write_text(json.dumps(result))
    (tmp_path / "runs").mkdir()
    assert main(["report", str(tmp_path / "runs"), "--judge-audit", str(out)]) == 0
    report = capsys.readouterr().out
    assert "| judge errors |" in report and "not meaningful" in report and "were judge errors" in report


def test_a_clean_judge_reports_no_error(tmp_path):
    result = audit_result(run_audit(tmp_path))
    assert result["errors_overall"] == 0 and result["error_rate_overall"] == 0.0
    assert "were judge errors" not in judge_table(result) and "not meaningful" not in judge_table(result)


def one_line_error(capsys, argv: list[str], message: str) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1, err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--limit", "0"], "--limit must be a number of samples of at least 1 or a range FIRST-LAST"),
        (["--limit", "-1"], "got '-1'"),
        (["--limit", "5-9"], "examples 5-9 selects nothing: there are only 3."),
        (["--model-role", "grader=nosuch/model"], "--model-role grader=nosuch/model: Model API nosuch"),
    ],
)
def test_bad_arguments_are_one_line(tmp_path, capsys, extra, message):
    one_line_error(
        capsys, ["judge-audit", "--data-file", str(SYNTHETIC), "--log-dir", str(tmp_path / "logs"), *extra], message
    )


def test_a_limit_range_audits_those_examples(tmp_path, capsys):
    out = tmp_path / "audit.json"
    argv = [
        "judge-audit",
        "--data-file",
        str(SYNTHETIC),
        "--limit",
        "2-3",
        "--log-dir",
        str(tmp_path),
        "--json",
        str(out),
    ]
    assert main(argv) == 0
    assert json.loads(out.read_text())["n"] == 2
    [info] = list_eval_logs(str(tmp_path))
    log = read_eval_log(info.name)
    assert {str(s.id).split("/")[0] for s in log.samples or []} == {"syn_0001", "syn_0002"}  # the 2nd and 3rd


def test_bad_files_and_folders_are_one_line_before_the_audit_runs(tmp_path, capsys):
    empty, a_file = tmp_path / "empty.jsonl", tmp_path / "file"
    empty.write_text("\n")
    a_file.write_text("x")
    base = ["judge-audit", "--log-dir", str(tmp_path / "logs")]
    one_line_error(capsys, [*base, "--data-file", str(empty)], f"{empty} holds no example to build answers from.")
    data = ["--data-file", str(SYNTHETIC)]
    one_line_error(
        capsys, [*base, *data, "--json", str(tmp_path)], f"--json {tmp_path}: not a file that can be written"
    )
    one_line_error(capsys, [*base, *data, "--json", str(a_file / "x.json")], "not a file that can be written")
    one_line_error(
        capsys, ["judge-audit", *data, "--log-dir", str(a_file)], f"{a_file} is a file, not a folder: name a folder"
    )
    assert not (tmp_path / "logs").exists()  # nothing ran


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[]", "Input should be an object"),
        ("{}", "(judge: Field required)"),
        ('{"judge": "x"}', "Field required"),
        ("not json", "Invalid JSON"),
    ],
)
def test_report_on_a_file_that_is_no_audit_result_is_one_line(tmp_path, capsys, text, message):
    bad = tmp_path / "audit.json"
    bad.write_text(text)
    one_line_error(capsys, ["report", str(tmp_path), "--judge-audit", str(bad)], f"{bad} is not a judge-audit result")
    capsys.readouterr()
    assert main(["report", str(tmp_path), "--judge-audit", str(bad)]) == 2
    assert message in capsys.readouterr().err


def test_report_on_a_missing_audit_file_is_one_line(tmp_path, capsys):
    one_line_error(capsys, ["report", str(tmp_path), "--judge-audit", str(tmp_path / "none.json")], "Cannot read")
