"""End to end against a real OpenAI-compatible server: llama.cpp's, on loopback.

Inspect's ``openai-api/llamacpp/<model>`` provider answers and grades through the
server (it reads ``LLAMACPP_BASE_URL`` and ``LLAMACPP_API_KEY``), so this checks the
path users take with any hosted OpenAI-compatible endpoint, with no network.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cmi_inspect.causal_locomo.judge import FALLBACK_JUDGE
from cmi_inspect.local_model import choose_extra_bufts, resolve_gguf
from cmi_inspect.local_model.served import ALIAS, ServedModel, served_model
from inspect_ai.log import read_eval_log

from conftest import REPO

INSPECT = str(Path(sys.executable).parent / "inspect")
MODEL = f"openai-api/llamacpp/{ALIAS}"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("llama_cpp.server") is None or importlib.util.find_spec("sse_starlette") is None,
        reason="llama.cpp's server is not installed (pip install 'llama-cpp-python[server]')",
    ),
]


@pytest.fixture(scope="module")
def server() -> ServedModel:
    """llama.cpp's server on loopback (its URL and key) serving the bundled model, started as
    mem0's adapter starts it (``local_model.served``) and stopped when the tests end."""
    path = resolve_gguf("smollm2")
    return served_model(path, 4096, choose_extra_bufts("auto", path).extra_bufts)


def test_vector_memory_answered_and_graded_through_the_server(server, tmp_path, release_file):
    env = {k: v for k, v in os.environ.items() if k != "INSPECT_EVAL_MODEL"}
    env |= {"LLAMACPP_BASE_URL": server.url, "LLAMACPP_API_KEY": server.api_key}
    subprocess.run(
        [
            INSPECT,
            "eval",
            "tasks/causal_locomo.py",
            "--solver",
            "vector_memory",
            "--limit",
            "2",
            "--model",
            MODEL,
            "--model-role",
            f"grader={MODEL}",
            "--log-dir",
            str(tmp_path),
            "--display",
            "none",
        ],
        cwd=REPO,
        env=env,
        check=True,
        capture_output=True,
        text=True,
        timeout=900,
    )
    [path] = tmp_path.glob("*.eval")
    log = read_eval_log(str(path))
    assert log.status == "success", log.error
    assert log.eval.model == MODEL
    assert log.samples is not None and len(log.samples) == 2
    for sample in log.samples:
        assert sample.output.completion and sample.scores is not None
        score = sample.scores["task_score"]
        assert isinstance(score.value, dict) and score.metadata is not None
        assert 0.0 <= float(score.value["score"]) <= 1.0
        assert score.metadata["judge"] != FALLBACK_JUDGE
        assert ALIAS in score.metadata["judge"]
        assert sample.model_usage[MODEL].output_tokens > 0
