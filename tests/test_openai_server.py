"""End to end against a real OpenAI-compatible server: llama.cpp's, on loopback.

Inspect's ``openai-api/llamacpp/<model>`` provider answers and grades through the
server (it reads ``LLAMACPP_BASE_URL`` and ``LLAMACPP_API_KEY``), so this checks the
path users take with any hosted OpenAI-compatible endpoint, with no network.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from cmi_inspect.judge import FALLBACK_JUDGE
from cmi_inspect.local_model import resolve_gguf
from inspect_ai.log import read_eval_log

from conftest import REPO

INSPECT = str(Path(sys.executable).parent / "inspect")
ALIAS = "smollm2"
MODEL = f"openai-api/llamacpp/{ALIAS}"
READY_TIMEOUT_S = 120

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("llama_cpp.server") is None or importlib.util.find_spec("sse_starlette") is None,
        reason="llama.cpp's server is not installed (pip install 'llama-cpp-python[server]')",
    ),
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_until_ready(server: subprocess.Popen[bytes], url: str) -> None:
    """Poll the model list until the server answers, it exits, or the time is up."""
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"llama.cpp server exited with status {server.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/models", timeout=5) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.5)
    raise TimeoutError(f"llama.cpp server not ready after {READY_TIMEOUT_S} s")


@pytest.fixture(scope="module")
def server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Base URL of a llama.cpp server on loopback serving the bundled model; always stopped."""
    port = free_port()
    log = (tmp_path_factory.mktemp("llamacpp-server") / "server.log").open("wb")
    command = [
        sys.executable,
        "-m",
        "cmi_inspect.local_model.serve",
        "--model",
        str(resolve_gguf("smollm2")),
        "--model_alias",
        ALIAS,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        "4096",
    ]
    server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    try:
        url = f"http://127.0.0.1:{port}/v1"
        wait_until_ready(server, url)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


def test_vector_memory_answered_and_graded_through_the_server(server_url, tmp_path, release_file):
    env = {k: v for k, v in os.environ.items() if k != "INSPECT_EVAL_MODEL"}
    env |= {"LLAMACPP_BASE_URL": server_url, "LLAMACPP_API_KEY": "none"}
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
