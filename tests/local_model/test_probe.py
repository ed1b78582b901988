"""The probe of llama.cpp's extra buffers: verdicts, their cache and forced choices,
with children that crash, fail, hang or succeed (no native crash in this process)."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import pytest
from cmi_inspect.errors import UserError
from cmi_inspect.local_model import choose_extra_bufts, resolve_gguf
from cmi_inspect.local_model.probe import (
    VERDICT_ENV,
    ProbeResult,
    parse_option,
    probe_key,
    run_probe,
    verdict_path,
)


def killed_by(name: str) -> list[str]:
    return [sys.executable, "-c", f"import os, signal; os.kill(os.getpid(), signal.{name})"]


CRASH = killed_by("SIGILL")
OK = [sys.executable, "-c", "pass"]
FAIL = [sys.executable, "-c", "raise SystemExit('no llama.cpp here')"]
HANG = [sys.executable, "-c", "import time; time.sleep(30)"]


@pytest.fixture
def model(monkeypatch, tmp_path) -> Path:
    monkeypatch.setenv("CMI_CACHE_DIR", str(tmp_path))
    return resolve_gguf("smollm2")


def test_a_child_killed_by_illegal_instruction_is_a_verdict_against_the_buffers():
    result = run_probe(CRASH)
    assert (result.usable, result.cacheable) == (False, True)
    assert "SIGILL" in result.reason


def test_only_a_clean_exit_or_a_signal_says_something_about_the_machine():
    assert run_probe(OK).usable and run_probe(OK).cacheable
    failed = run_probe(FAIL)
    assert (failed.usable, failed.cacheable) == (False, False)
    assert "exited 1: no llama.cpp here" in failed.reason
    hung = run_probe(HANG, timeout=1)
    assert (hung.usable, hung.cacheable) == (False, False)
    assert "timed out" in hung.reason


def test_a_crash_turns_the_buffers_off_and_the_verdict_is_kept_for_this_machine(model):
    choice = choose_extra_bufts("auto", model, command=CRASH)
    assert choice.extra_bufts is False
    assert choice.chosen_by.startswith("probe: extra buffers turned off")
    assert verdict_path(probe_key(model)).is_file()
    again = choose_extra_bufts("auto", model, command=OK)  # read back, not probed again
    assert again.extra_bufts is False and again.chosen_by.startswith("cached probe")


def test_a_passing_probe_keeps_the_fast_path(model):
    assert choose_extra_bufts("auto", model, command=OK).extra_bufts is True
    assert choose_extra_bufts("auto", model, command=CRASH).chosen_by == ("cached probe: extra buffers usable")


def test_an_inconclusive_probe_falls_back_for_this_run_only(model):
    assert choose_extra_bufts("auto", model, command=FAIL).extra_bufts is False
    assert not verdict_path(probe_key(model)).exists()
    assert choose_extra_bufts("auto", model, command=OK).extra_bufts is True


@pytest.mark.parametrize(("option", "on"), [("on", True), (True, True), ("off", False), (False, False), ("OFF", False)])
def test_a_forced_choice_runs_no_probe(model, option, on):
    choice = choose_extra_bufts(option, model, command=CRASH)
    assert choice.extra_bufts is on
    assert choice.chosen_by == f"-M extra_bufts={'on' if on else 'off'}"
    assert not verdict_path(probe_key(model)).exists()


def test_a_bad_option_is_one_line_naming_the_choices():
    with pytest.raises(UserError, match=r"extra_bufts must be one of auto, on, off, got 'maybe'"):
        parse_option("maybe")


def test_the_verdict_is_keyed_on_the_model_file(model, tmp_path):
    copy = tmp_path / "other.gguf"
    copy.write_bytes(model.read_bytes()[:-1] + b"\0")
    assert probe_key(copy) != probe_key(model)
    assert probe_key(model) == probe_key(model)


@pytest.mark.parametrize(
    ("name", "cacheable"), [("SIGSEGV", True), ("SIGBUS", True), ("SIGKILL", False), ("SIGTERM", False)]
)
def test_only_a_crash_the_cpu_causes_is_kept_not_a_kill(name, cacheable):
    result = run_probe(killed_by(name))
    assert (result.usable, result.cacheable) == (False, cacheable)
    assert name in result.reason


def test_a_child_the_oom_killer_ends_is_probed_again_next_run(model):
    assert choose_extra_bufts("auto", model, command=killed_by("SIGKILL")).extra_bufts is False
    assert not verdict_path(probe_key(model)).exists()
    assert choose_extra_bufts("auto", model, command=OK).chosen_by == "probe: extra buffers usable"


VERDICT = {"usable": False, "reason": "the child died of SIGILL", "seconds": 1.5, "cacheable": True}


@pytest.mark.parametrize(
    "text",
    [
        json.dumps({**VERDICT, "usable": "false"}),
        json.dumps({**VERDICT, "usable": 0}),
        json.dumps({**VERDICT, "reason": None}),
        json.dumps({**VERDICT, "seconds": True}),
        json.dumps({**VERDICT, "seconds": "1.5"}),
        json.dumps({**VERDICT, "seconds": -1}),
        json.dumps({**VERDICT, "cacheable": False}),
        json.dumps({k: v for k, v in VERDICT.items() if k != "reason"}),
        json.dumps({**VERDICT, "extra": 1}),
        json.dumps([VERDICT]),
        '{"usable": true, "reason": "ok", "seconds": NaN, "cacheable": true}',
        '{"usable": true',
        "",
    ],
)
def test_a_cached_file_that_is_not_exactly_a_verdict_is_probed_again(model, text):
    path = verdict_path(probe_key(model))
    path.parent.mkdir(parents=True)
    path.write_text(text)
    choice = choose_extra_bufts("auto", model, command=OK)
    assert choice.chosen_by == "probe: extra buffers usable"
    rewritten = ProbeResult.from_json(path.read_text())  # the new verdict replaced it
    assert rewritten is not None and rewritten.usable and rewritten.reason == "decoded a long prompt"


def test_a_well_formed_verdict_is_read_back(model):
    path = verdict_path(probe_key(model))
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(VERDICT))
    choice = choose_extra_bufts("auto", model, command=OK)
    assert (choice.extra_bufts, choice.chosen_by) == (
        False,
        "cached probe: extra buffers turned off (the child died of SIGILL)",
    )
    path.write_bytes(b"\xff\xfe")  # not UTF-8
    assert choose_extra_bufts("auto", model, command=OK).chosen_by == "probe: extra buffers usable"


def test_a_cache_that_cannot_be_written_leaves_the_verdict_uncached_with_one_warning(monkeypatch, tmp_path, caplog):
    cache = tmp_path / "a-file"
    cache.write_text("not a folder")
    monkeypatch.setenv("CMI_CACHE_DIR", str(cache))
    model = resolve_gguf("smollm2")
    with caplog.at_level(logging.WARNING):
        assert choose_extra_bufts("auto", model, command=CRASH).extra_bufts is False
    [warning] = caplog.records
    assert "verdict is not cached" in warning.getMessage() and "\n" not in warning.getMessage()
    assert cache.read_text() == "not a folder"


def test_a_read_only_cache_folder_runs_the_probe_and_warns(model, monkeypatch, caplog):
    def read_only(self: Path, *args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "write_text", read_only)  # chmod does not stop root
    with caplog.at_level(logging.WARNING):
        assert choose_extra_bufts("auto", model, command=OK).extra_bufts is True
    assert "Permission denied" in caplog.records[0].getMessage()
    path = verdict_path(probe_key(model))
    assert not path.exists() and list(path.parent.iterdir()) == []  # no partial file left


def test_a_forced_verdict_runs_no_probe_and_names_itself(model, probe_verdict):
    choice = choose_extra_bufts("auto", model, command=CRASH if probe_verdict else OK)
    assert choice.extra_bufts is probe_verdict
    assert choice.chosen_by.startswith(f"{VERDICT_ENV}: extra buffers")
    assert not verdict_path(probe_key(model)).exists()
    assert choose_extra_bufts("off", model).extra_bufts is False  # -M extra_bufts still rules


def test_a_bad_forced_verdict_is_one_line(model, monkeypatch):
    monkeypatch.setenv(VERDICT_ENV, "maybe")
    with pytest.raises(UserError, match=f"{VERDICT_ENV} must be usable or unusable, got 'maybe'"):
        choose_extra_bufts("auto", model, command=OK)


def test_a_probe_that_runs_says_so_and_a_cached_verdict_says_nothing(model, capsys):
    choose_extra_bufts("auto", model, command=OK)
    said = capsys.readouterr().err
    assert "cmi-inspect: probing whether llama.cpp's extra weight buffers (AMX) run" in said
    assert "done in" in said
    choose_extra_bufts("auto", model, command=OK)  # now cached
    assert capsys.readouterr().err == ""
