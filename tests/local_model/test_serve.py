"""llama.cpp's server with the engine's choice of buffers: a bad choice or model is one line."""

from __future__ import annotations

import pytest
from cmi_inspect.local_model.serve import main


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (
            ["--model", "smollm2", "--extra-bufts", "maybe"],
            "serve: extra_bufts must be one of auto, on, off, got 'maybe'",
        ),
        (["--model", "missing.gguf"], "serve: Unknown local model 'missing.gguf'"),
    ],
)
def test_a_bad_choice_or_a_missing_model_is_one_line_and_a_failure(capsys, argv, says):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(says) and err.count("\n") == 1, err
