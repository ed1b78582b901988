"""progress: the engine's slow first steps say what they are and how long they took."""

from __future__ import annotations

import pytest
from cmi_inspect.local_model.progress import step


def test_a_step_says_what_it_is_before_and_how_long_it_took_after(capsys):
    with step("probing the CPU", "usually 10 s"):
        assert capsys.readouterr().err == "cmi-inspect: probing the CPU (usually 10 s)...\n"
    assert capsys.readouterr().err.startswith("cmi-inspect: probing the CPU: done in ")


def test_a_step_that_fails_still_says_it_ended(capsys):
    with pytest.raises(RuntimeError), step("loading", "a second"):
        raise RuntimeError("no file")
    assert "loading: done in" in capsys.readouterr().err
