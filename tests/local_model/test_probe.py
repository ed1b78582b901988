"""The probe of llama.cpp's extra buffers: verdicts, their cache and forced choices,
with children that crash, fail, hang or succeed (no native crash in this process)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from cmi_inspect.errors import UserError
from cmi_inspect.local_model import choose_extra_bufts, resolve_gguf
from cmi_inspect.local_model.probe import VERDICT_ENV, parse_option, probe_key, run_probe, verdict_path

CRASH = [sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGILL)"]
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
