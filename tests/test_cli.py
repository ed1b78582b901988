"""The cmi-inspect command line."""

from __future__ import annotations

import re

import pytest
from cmi_inspect import paths
from cmi_inspect.causal_locomo import data
from cmi_inspect.cli import main

from conftest import LOCOMO_MINI, REPO, SYNTHETIC


@pytest.mark.slow  # the console script in a subprocess, a run and a report
def test_run_then_report(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(REPO)
    logs, out = tmp_path / "logs", tmp_path / "report"
    assert (
        main(
            [
                "run",
                str(logs),
                "--model",
                "fixed_latency/0",
                "--strategies",
                "vector_memory,graph_memory",
                "-T",
                f"data_file={SYNTHETIC}",
            ]
        )
        == 0
    )
    assert main(["report", str(logs), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "| vector_memory | fixed_latency/0 | paper | 3 | 0 |" in printed
    assert "| graph_memory | fixed_latency/0 | paper | 3 | 0 |" in printed
    assert {p.name for p in out.iterdir()} == {
        "report.md",
        "evaluation_report.md",
        "report.json",
        "accuracy_robustness.png",
        "utility_by_label.png",
        "poison_by_kind.png",
        "accuracy_cost.png",
    }
    assert main(["report", str(logs), "--evaluation-report"]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("## Evaluation Report")
    command = r"inspect eval \S+ -T data_file=\S+ -T strategy=graph_memory --model fixed_latency/0"
    assert re.search(command, printed)


def test_report_reads_only_the_logs(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(REPO)
    logs = tmp_path / "logs"
    assert (
        main(["run", str(logs), "--model", "fixed_latency/0", "--strategies", "cmi", "-T", f"data_file={SYNTHETIC}"])
        == 0
    )
    capsys.readouterr()
    # no data anywhere: CMI's Table 3 takes the labels from the samples' metadata
    monkeypatch.delenv(data.DATA_DIR_ENV, raising=False)
    monkeypatch.setenv(paths.CACHE_DIR_ENV, str(tmp_path / "cache"))
    monkeypatch.setattr(data, "CAUSAL_LOCOMO_URL", "http://127.0.0.1:9/x.jsonl")
    assert main(["report", str(logs)]) == 0
    printed = capsys.readouterr().out
    assert "| cmi | fixed_latency/0 | paper | useful |" in printed


def test_report_on_a_missing_path_or_a_file_is_one_line_and_a_failure(tmp_path, capsys):
    assert main(["report", str(tmp_path / "nowhere")]) == 2
    assert "nowhere does not exist" in capsys.readouterr().err
    (tmp_path / "file.eval").write_text("x")
    assert main(["report", str(tmp_path / "file.eval")]) == 2
    assert "is a file, not a log folder" in capsys.readouterr().err


def test_run_into_a_file_or_an_unwritable_folder_is_one_line_before_any_work(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    for where, message in ((blocker, "is a file, not a folder"), (blocker / "logs", "Cannot write the logs")):
        assert main(["run", str(where), "--model", "fixed_latency/0", "-T", f"data_file={SYNTHETIC}"]) == 2
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_build_xl_into_an_unwritable_folder_stops_before_building(tmp_path, capsys, monkeypatch):
    from cmi_inspect.causal_locomo import xl

    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setattr(xl, "build_xl", lambda *a, **k: pytest.fail("built before checking the folder"))
    assert main(["build-xl", str(blocker / "xl")]) == 2
    assert "Cannot write the XL build" in capsys.readouterr().err


def test_build_xl_writes_it_and_on_request_every_bank_inline_then_audits_its_form(
    tmp_path, capsys, monkeypatch, mini_verdicts
):
    import json

    from cmi_inspect.causal_locomo import xl
    from cmi_inspect.causal_locomo.xl import assemble

    monkeypatch.setattr(xl, "locomo_path", lambda: LOCOMO_MINI)
    monkeypatch.setattr(assemble, "VERDICTS", mini_verdicts)
    assert main(["build-xl", str(tmp_path / "xl"), "--inline-banks"]) == 0
    manifest = json.loads(capsys.readouterr().out)
    assert manifest["builder_version"] == "xl-5" and "inline_sha256" in manifest
    assert {p.name for p in (tmp_path / "xl").iterdir()} == {
        "causal_locomo_xl.jsonl",
        "causal_locomo_xl_inline.jsonl",
        "manifest.json",
    }
    stored = str(tmp_path / "xl" / "causal_locomo_xl.jsonl")
    assert main(["audit", "--data-file", stored, "--form"]) == 0
    table = capsys.readouterr().out
    assert "| chars |" in table and "logistic regression on all, 10 folds by conversation" in table
    assert main(["audit", "--data-file", stored, "--form", "--json"]) == 0
    assert set(json.loads(capsys.readouterr().out)["features"]) >= {"copy3", "bank_overlap", "first_word"}


def test_a_second_run_on_the_same_folder_is_refused_while_the_first_holds_it(tmp_path):
    from cmi_inspect.errors import UserError
    from cmi_inspect.run import only_run

    with only_run(tmp_path), pytest.raises(UserError, match="Another cmi-inspect run is writing to"):
        with only_run(tmp_path):
            pass
    with only_run(tmp_path):  # released once the first ends
        pass


def test_compare_on_a_missing_log_is_one_line_and_a_failure(tmp_path, capsys):
    assert main(["compare", str(tmp_path / "a.eval"), str(tmp_path / "b.eval")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("cmi-inspect compare: No log at") and err.count("\n") == 1


def test_serve_with_no_slots_or_another_provider_is_one_line(tmp_path, capsys):
    for extra, message in (
        (["--serve", "0"], "--serve must be an integer of at least 1, got 0"),
        (["--serve", "2", "--model", "fixed_latency/0"], "--serve serves the embedded engine"),
    ):
        assert main(["run", str(tmp_path / "logs"), "-T", f"data_file={SYNTHETIC}", *extra]) == 2
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("limit", "message"),
    [
        ("-1", "--limit must be a number of samples of at least 1 or a range FIRST-LAST"),
        ("0", "got '0'"),
        ("3-2", "got '3-2'"),
        ("4-9", "--limit 4-9 selects nothing: there are only 3."),
    ],
)
def test_run_refuses_a_limit_that_selects_no_sample_or_not_the_ones_asked_in_one_line(tmp_path, capsys, limit, message):
    argv = ["run", str(tmp_path / "logs"), "--model", "fixed_latency/0", "-T", f"data_file={SYNTHETIC}"]
    assert main([*argv, f"--limit={limit}"]) == 2
    err = capsys.readouterr().err
    assert message in err and "resume" not in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "logs").exists()


def test_run_takes_inspects_range_form_of_limit(tmp_path, capsys):
    logs = tmp_path / "logs"
    argv = ["run", str(logs), "--model", "fixed_latency/0", "--strategies", "no_memory", "-T", f"data_file={SYNTHETIC}"]
    assert main([*argv, "--limit", "2-3"]) == 0
    capsys.readouterr()
    assert main(["report", str(logs)]) == 0
    assert "| no_memory | fixed_latency/0 | paper | 2 | 0 |" in capsys.readouterr().out


def test_time_limit_reaches_the_run_and_a_bad_one_is_one_line(tmp_path, capsys, monkeypatch):
    import cmi_inspect.run

    seen = {}
    monkeypatch.setattr(cmi_inspect.run, "run_all", lambda spec: seen.update(spec.model_dump()) or [])
    assert main(["run", str(tmp_path / "logs"), "--time-limit", "600"]) == 0
    assert seen["time_limit"] == 600
    monkeypatch.undo()  # the real run refuses it, before any work
    assert main(["run", str(tmp_path / "logs"), "--time-limit", "0"]) == 2
    err = capsys.readouterr().err
    assert "--time-limit must be an integer of at least 1, got 0" in err and len(err.strip().splitlines()) == 1


def test_inspects_own_options_pass_through_to_every_run_and_a_bad_one_is_one_line(tmp_path, capsys, monkeypatch):
    import cmi_inspect.run

    seen: dict = {}
    monkeypatch.setattr(cmi_inspect.run, "run_all", lambda spec: seen.update(spec.model_dump()) or [])
    argv = ["run", str(tmp_path / "logs"), "--model-role", "grader=openai/gpt-5", "--epochs", "2", "--tags", "a, b"]
    argv += ["--sample-id", "syn_0000,syn_0002", "--fail-on-error", "3", "--retry-on-error", "0"]
    argv += ["--token-limit", "5000", "--log-level", "info", "--log-format", "json", "--display", "plain"]
    assert main(argv) == 0
    assert (seen["model_roles"], seen["epochs"], seen["tags"]) == ({"grader": "openai/gpt-5"}, 2, ["a", "b"])
    assert seen["inspect_options"] == {
        "sample_id": ["syn_0000", "syn_0002"],
        "fail_on_error": 3,
        "retry_on_error": 0,
        "token_limit": 5000,
        "log_level": "info",
        "log_format": "json",
        "display": "plain",
    }
    assert main(["run", str(tmp_path / "logs"), "--fail-on-error", "0.25"]) == 0
    assert seen["inspect_options"] == {"fail_on_error": 0.25}
    assert main(["run", str(tmp_path / "logs"), "--no-fail-on-error"]) == 0
    assert seen["inspect_options"] == {"fail_on_error": False}
    for bad, message in (
        (["--fail-on-error", "1.5"], "--fail-on-error must be a share of samples between 0 and 1"),
        (["--fail-on-error", "some"], "got 'some'"),
        (["--sample-id", " , "], "--sample-id names no sample"),
        (["--token-limit", "0"], "--token-limit must be an integer of at least 1, got '0'"),
    ):
        capsys.readouterr()
        assert main(["run", str(tmp_path / "logs"), *bad]) == 2
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def one_line(capsys, command: str) -> str:
    """The error a command printed, checked to be one line with no traceback."""
    err = capsys.readouterr().err
    assert err.startswith(f"cmi-inspect {command}: ") and err.count("\n") == 1 and "Traceback" not in err
    return err


def not_logs(tmp_path) -> dict[str, tuple[str, str]]:
    """Paths that are no log, each with what the one line says of it."""
    garbage = tmp_path / "garbage.eval"
    garbage.write_bytes(b"not a zip file")
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    (tmp_path / "folder").mkdir()
    return {
        "garbage": (str(garbage), "garbage.eval is not a readable Inspect log (ValueError:"),
        "text": (str(text), "notes.txt is not an Inspect log (a .eval or .json file)."),
        "folder": (str(tmp_path / "folder"), "folder is a folder: name one .eval log."),
    }


def test_compare_on_a_garbage_log_a_text_file_or_a_folder_is_one_line(tmp_path, capsys):
    for path, message in not_logs(tmp_path).values():
        assert main(["compare", path, path]) == 2
        assert message in one_line(capsys, "compare")


def test_compare_refuses_fewer_than_one_resample_before_reading(tmp_path, capsys):
    assert main(["compare", str(tmp_path / "a.eval"), str(tmp_path / "b.eval"), "--resamples", "0"]) == 2
    assert "--resamples must be an integer of at least 1, got 0" in one_line(capsys, "compare")


def test_fit_selector_on_a_garbage_log_or_a_text_file_is_one_line(tmp_path, capsys):
    cases = not_logs(tmp_path)
    for name in ("garbage", "text"):
        path, message = cases[name]
        assert main(["fit-selector", path, "--out", str(tmp_path / "s.json")]) == 2
        assert message in one_line(capsys, "fit-selector")
    folder = tmp_path / "logs"
    folder.mkdir()
    (folder / "2024-01-01T00-00-00+00-00_causal-locomo_x.eval").write_bytes(b"not a zip file")
    assert main(["fit-selector", str(folder), "--out", str(tmp_path / "s.json")]) == 2
    assert "is not a readable Inspect log" in one_line(capsys, "fit-selector")


def test_report_out_where_nothing_can_be_written_is_one_line_before_reading_logs(tmp_path, capsys, monkeypatch):
    import cmi_inspect.report

    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setattr(cmi_inspect.report, "load_runs", lambda *a: pytest.fail("read the logs first"))
    assert main(["report", str(tmp_path), "--out", str(blocker / "report")]) == 2
    assert f"--out {blocker / 'report'}: cannot write the report there (Not a directory)." in one_line(capsys, "report")


@pytest.mark.parametrize(
    ("option", "message"),
    [
        (["--max-samples", "0"], "--max-samples must be an integer of at least 1, got 0"),
        (["--max-tasks", "-1"], "--max-tasks must be an integer of at least 1, got -1"),
        (["--timeout", "-5"], "--timeout must be an integer of at least 1, got -5"),
        (["--timeout", "0"], "--timeout must be an integer of at least 1, got 0"),
        (["--max-retries", "-1"], "--max-retries must be an integer of at least 0, got -1"),
        (["--max-connections", "0"], "--max-connections must be an integer of at least 1, got 0"),
        (["--epochs", "0"], "--epochs must be an integer of at least 1, got 0"),
    ],
)
def test_run_refuses_counts_below_their_least_value_before_any_work(tmp_path, capsys, option, message):
    argv = ["run", str(tmp_path / "logs"), "--model", "fixed_latency/0", "-T", f"data_file={SYNTHETIC}"]
    assert main([*argv, *option]) == 2
    assert message in one_line(capsys, "run")
    assert not (tmp_path / "logs").exists()


def test_run_refuses_a_model_an_installed_strategy_cannot_call_before_any_row_runs(tmp_path, capsys):
    from cmi_inspect.causal_locomo.strategies.graphiti import import_graphiti
    from cmi_inspect.errors import UserError

    try:
        import_graphiti()
    except UserError as ex:
        pytest.skip(str(ex))
    argv = ["run", str(tmp_path / "logs"), "--model", "fixed_latency/0", "-T", f"data_file={SYNTHETIC}"]
    assert main([*argv, "--strategies", "graphiti"]) == 2
    message = one_line(capsys, "run")
    assert "Strategy 'graphiti' calls the response model through an OpenAI-compatible endpoint" in message
    assert not list((tmp_path / "logs").glob("*.eval"))


def test_audit_examples_keeps_the_listed_ones_and_names_an_unknown_id_in_one_line(tmp_path, mini_records):
    from cmi_inspect.cli.audit import only_examples
    from cmi_inspect.errors import UserError

    ids = [r.example_id for r in mini_records][:2]
    (tmp_path / "ids.txt").write_text("\n".join(ids) + "\n\n")
    assert [r.example_id for r in only_examples(mini_records, tmp_path / "ids.txt")] == ids
    (tmp_path / "bad.txt").write_text("conv-99_x00000000\n")
    with pytest.raises(UserError, match=r"1 ids are not in the data \(first conv-99_x00000000\)"):
        only_examples(mini_records, tmp_path / "bad.txt")
    with pytest.raises(UserError, match="--examples .*nowhere.txt: No such file"):
        only_examples(mini_records, tmp_path / "nowhere.txt")
