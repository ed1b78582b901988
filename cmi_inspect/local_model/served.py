"""The embedded model behind an OpenAI-compatible endpoint, for code that speaks only that API.

``served_model`` starts ``python -m cmi_inspect.local_model.serve`` (llama.cpp's server) for a
GGUF file on a free loopback port the first time a process asks for it, reuses it for every
later call with the same file and window, and stops it when the process exits. mem0's LLM
(``strategies.mem0``) reaches the embedded model this way. ``serve_engine`` serves the
engine itself, with its slots, for one ``cmi-inspect run --serve N``.

Every server started here:

- takes a random API key (``ServedModel.api_key``), passed in its environment, never on its
  command line where any local user could read it, so no other process can tie it up;
- dies with the process that started it, whatever kills that one (``follow_parent``: the
  kernel's parent-death signal on Linux, and a watchdog thread anywhere);
- writes its output to an unlinked temporary file, so nothing is left on disk however the
  run ends; an error quotes the file's tail.
"""

from __future__ import annotations

import atexit
import os
import secrets
import signal
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
from typing import IO, Any

ALIAS = "local"
"""The model name the server answers to."""
READY_TIMEOUT_S = 180
STOP_TIMEOUT_S = 20
API_KEY_ENV = "CMI_SERVED_API_KEY"
"""The key a server takes when none is given on its command line; Inspect's
``openai-api/cmi-served/NAME`` sends the same variable's value."""
PARENT_ENV = "CMI_SERVER_PARENT"
"""The process id a server follows (set by ``launch``; absent when started by hand)."""
PDEATHSIG_ENV = "CMI_SERVER_PDEATHSIG"
"""Set when the kernel's parent-death signal may be used (see ``launch``)."""
PARENT_POLL_S = 0.2
PR_SET_PDEATHSIG = 1
"""``prctl`` option (linux/prctl.h): the signal this process gets when its parent dies."""


@dataclass(frozen=True)
class ServedModel:
    """A running server: its base URL (``.../v1``), model name and API key."""

    url: str
    model: str
    api_key: str


@dataclass
class Server:
    """A server process, what reaches it, and the unlinked file its output goes to."""

    process: subprocess.Popen[bytes]
    served: ServedModel
    log: IO[bytes]

    def tail(self, chars: int = 600) -> str:
        """The end of the server's output (read at an offset: its own file position is the
        server's too)."""
        fd = self.log.fileno()
        size = os.fstat(fd).st_size
        start = max(0, size - chars)
        return os.pread(fd, size - start, start).decode(errors="replace").strip()

    def stop(self) -> None:
        """Terminate the server (killed if it has not exited after ``STOP_TIMEOUT_S``)."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


_servers: dict[tuple[str, int, bool, str | None], Server] = {}
_lock = threading.Lock()


def served_model(
    path: Path, n_ctx: int, extra_bufts: bool, chat_format: str | None = None
) -> ServedModel:
    """The server for this GGUF file, context window and llama.cpp chat format (None: the
    one the file's template implies), started on first use."""
    key = (str(path), n_ctx, extra_bufts, chat_format)
    with _lock:
        if key in _servers:
            server = _servers[key]
            if server.process.poll() is None:
                return server.served
            raise RuntimeError(
                f"the llama.cpp server for {path.name} exited with status "
                f"{server.process.returncode}: {server.tail()}"
            )
        _servers[key] = _start(path, n_ctx, extra_bufts, chat_format)
        return _servers[key].served


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start(path: Path, n_ctx: int, extra_bufts: bool, chat_format: str | None) -> Server:
    formats = ["--chat_format", chat_format] if chat_format else []
    return launch(
        ["cmi_inspect.local_model.serve", "--model", str(path),
         "--extra-bufts", "on" if extra_bufts else "off", "--n_ctx", str(n_ctx), *formats],
        ALIAS,
    )  # fmt: skip


@contextmanager
def serve_engine(name: str, model_args: dict[str, Any]) -> Iterator[ServedModel]:
    """The engine of ``gguf/NAME`` with these ``-M`` arguments, served
    (``engine_server``) for the length of the ``with`` block, then stopped."""
    pairs = [arg for k, v in model_args.items() for arg in ("-M", f"{k}={v}")]
    server = launch(["cmi_inspect.local_model.engine_server", name, *pairs], name)
    try:
        yield server.served
    finally:
        server.stop()


def launch(module_args: list[str], alias: str) -> Server:
    """``python -m MODULE ...`` serving ``alias`` on a free loopback port with a fresh API
    key, following this process, once it answers."""
    port = free_port()
    served = ServedModel(
        url=f"http://127.0.0.1:{port}/v1", model=alias, api_key=secrets.token_urlsafe(24)
    )
    command = [
        sys.executable, "-m", *module_args, "--model_alias", alias,
        "--host", "127.0.0.1", "--port", str(port),
    ]  # fmt: skip
    # the child imports this same cmi_inspect, not whichever one the environment installs
    here = str(Path(__file__).resolve().parents[2])
    path_env = os.pathsep.join(filter(None, [here, os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path_env, API_KEY_ENV: served.api_key}
    env[PARENT_ENV] = str(os.getpid())
    # the kernel sends the parent-death signal when the *thread* that started the child
    # ends: only the main thread lasts as long as the process (mem0 starts its server
    # from a worker thread, which Inspect's pool ends when idle); elsewhere the watchdog
    if threading.current_thread() is threading.main_thread():
        env[PDEATHSIG_ENV] = "1"
    else:
        env.pop(PDEATHSIG_ENV, None)
    log = tempfile.TemporaryFile()
    process = subprocess.Popen(
        command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env
    )
    server = Server(process, served, log)
    atexit.register(server.stop)
    try:
        _wait_until_ready(server)
    except BaseException:
        server.stop()
        raise
    return server


def _wait_until_ready(server: Server) -> None:
    """Poll the model list until the server answers; its output's tail if it exits or
    never does."""
    process, served = server.process, server.served
    models = urllib.request.Request(
        f"{served.url}/models", headers={"Authorization": f"Bearer {served.api_key}"}
    )
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(
                f"the llama.cpp server exited with status {process.returncode}: {server.tail()}"
            )
        try:
            with urllib.request.urlopen(models, timeout=5) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.5)
    raise TimeoutError(
        f"the llama.cpp server was not ready after {READY_TIMEOUT_S} s: {server.tail()}"
    )


def follow_parent() -> None:
    """In a server ``launch`` started: end this process as soon as the one that started it
    is gone, whatever ended that one (its ``atexit`` never runs after a kill -9 or a
    SIGTERM). Nothing for a server started by hand."""
    parent = int(os.environ.pop(PARENT_ENV, "") or 0)
    if not parent:
        return
    if os.environ.pop(PDEATHSIG_ENV, "") and sys.platform == "linux":
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # gone before the signal was asked for
        os._exit(1)
    threading.Thread(target=_watch, args=(parent,), name="parent watchdog", daemon=True).start()


def _watch(parent: int) -> None:
    """Poll the parent's id: an orphan is re-parented (to init or a subreaper)."""
    while os.getppid() == parent:
        time.sleep(PARENT_POLL_S)
    print(f"the process that started this server ({parent}) is gone: exiting", file=sys.stderr)
    sys.stderr.flush()
    os._exit(1)
