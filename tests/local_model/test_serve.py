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


def test_an_api_key_that_starts_with_a_dash_reaches_the_server_as_its_value(monkeypatch):
    """A random key may start with "-" (``secrets.token_urlsafe``): passed as a separate
    argument, llama.cpp's argparse took it for an option and the server exited at start."""
    import argparse
    import sys

    import llama_cpp.server.__main__ as server_main
    from cmi_inspect.local_model import serve
    from cmi_inspect.local_model.probe import EngineChoice
    from llama_cpp.server.cli import add_args_from_model
    from llama_cpp.server.settings import ServerSettings

    seen: list[str] = []
    monkeypatch.setenv(serve.API_KEY_ENV, "-Kq1")
    monkeypatch.setattr(serve, "choose_extra_bufts", lambda *a: EngineChoice(False, "test"))
    monkeypatch.setattr(server_main, "main", lambda: seen.extend(sys.argv[1:]))
    assert serve.main(["--model", "smollm2"]) == 0
    parser = argparse.ArgumentParser()
    add_args_from_model(parser, ServerSettings)
    parser.add_argument("--model")
    assert parser.parse_args(seen).api_key == "-Kq1"
