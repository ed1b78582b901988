"""The embedded model behind an OpenAI-compatible endpoint, for code that speaks only that API.

``served_model`` starts ``python -m cmi_inspect.local_model.serve`` (llama.cpp's server) for a
GGUF file on a free loopback port the first time a process asks for it, reuses it for every
later call with the same file and window, and stops it when the process exits. mem0's LLM
(``strategies.mem0``) reaches the embedded model this way. ``serve_engine`` serves the
engine itself, with its slots, for one ``cmi-inspect run --serve N``.
"""

from __future__ import annotations

import atexit
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cmi_inspect

ALIAS = "local"
"""The model name the server answers to."""
READY_TIMEOUT_S = 180
STOP_TIMEOUT_S = 20


@dataclass(frozen=True)
class ServedModel:
    """A running server: its base URL (``.../v1``), model name and log file."""

    url: str
    model: str
    log: Path


_servers: dict[tuple[str, int, bool], tuple[subprocess.Popen[bytes], ServedModel]] = {}
_lock = threading.Lock()


def served_model(path: Path, n_ctx: int, extra_bufts: bool) -> ServedModel:
    """The server for this GGUF file and context window, started on first use."""
    key = (str(path), n_ctx, extra_bufts)
    with _lock:
        if key in _servers:
            process, served = _servers[key]
            if process.poll() is None:
                return served
            raise RuntimeError(
                f"the llama.cpp server for {path.name} exited with status {process.returncode}; "
                f"its log: {served.log}"
            )
        _servers[key] = _start(path, n_ctx, extra_bufts)
        return _servers[key][1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start(
    path: Path, n_ctx: int, extra_bufts: bool
) -> tuple[subprocess.Popen[bytes], ServedModel]:
    return launch(
        ["cmi_inspect.local_model.serve", "--model", str(path),
         "--extra-bufts", "on" if extra_bufts else "off", "--n_ctx", str(n_ctx)],
        ALIAS,
    )  # fmt: skip


@contextmanager
def serve_engine(name: str, model_args: dict[str, Any]) -> Iterator[ServedModel]:
    """The engine of ``gguf/NAME`` with these ``-M`` arguments, served
    (``engine_server``) for the length of the ``with`` block, then stopped."""
    pairs = [arg for k, v in model_args.items() for arg in ("-M", f"{k}={v}")]
    process, served = launch(["cmi_inspect.local_model.engine_server", name, *pairs], name)
    try:
        yield served
    finally:
        _stop(process)


def launch(module_args: list[str], alias: str) -> tuple[subprocess.Popen[bytes], ServedModel]:
    """``python -m MODULE ...`` serving ``alias`` on a free loopback port, once it answers."""
    port = free_port()
    served = ServedModel(
        url=f"http://127.0.0.1:{port}/v1",
        model=alias,
        log=Path(tempfile.mkdtemp(prefix="cmi-llamacpp-")) / "server.log",
    )
    command = [
        sys.executable, "-m", *module_args, "--model_alias", alias,
        "--host", "127.0.0.1", "--port", str(port),
    ]  # fmt: skip
    # the child imports this same cmi_inspect, not whichever one the environment installs
    here = str(Path(cmi_inspect.__file__).resolve().parent.parent)
    path_env = os.pathsep.join(filter(None, [here, os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path_env}
    with served.log.open("wb") as log:
        process = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env
        )
    atexit.register(_stop, process)
    try:
        _wait_until_ready(process, served)
    except Exception:
        _stop(process)
        raise
    return process, served


def _wait_until_ready(process: subprocess.Popen[bytes], served: ServedModel) -> None:
    """Poll the model list until the server answers; its log's tail if it exits or never does."""
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(
                f"the llama.cpp server exited with status {process.returncode}: {_tail(served.log)}"
            )
        try:
            with urllib.request.urlopen(f"{served.url}/models", timeout=5) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.5)
    raise TimeoutError(
        f"the llama.cpp server was not ready after {READY_TIMEOUT_S} s: {_tail(served.log)}"
    )


def _tail(log: Path, chars: int = 600) -> str:
    return log.read_text(errors="replace")[-chars:].strip()


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
