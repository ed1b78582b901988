"""The embedded model served on loopback: started once per file and window, stopped after,
behind a fresh key, ending with the process that started it, leaving nothing on disk (on a
small stand-in server; llama.cpp's own, marked slow)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from cmi_inspect.local_model import resolve_gguf, served

STAND_IN = """
import http.server, os, sys

if "--follow" in sys.argv:  # as the real servers do (importing cmi_inspect takes seconds)
    from cmi_inspect.local_model.served import follow_parent

    follow_parent()
if "--fail" in sys.argv:
    print("no model here", flush=True)
    sys.exit(3)
key = os.environ["CMI_SERVED_API_KEY"]

class Models(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        ok = self.headers.get("Authorization") == f"Bearer {key}"
        self.send_response(200 if ok else 401)
        self.end_headers()
        self.wfile.write(b'{"data": []}')

port = int(sys.argv[sys.argv.index("--port") + 1])
http.server.HTTPServer(("127.0.0.1", port), Models).serve_forever()
"""

PARENT = """
import sys, threading, time
from cmi_inspect.local_model import served

started = []
if sys.argv[1] == "thread":  # as mem0 starts it: from a worker thread that then ends
    worker = threading.Thread(target=lambda: started.append(served.launch(["stand_in", "--follow"], "x")))
    worker.start()
    worker.join()
else:
    started.append(served.launch(["stand_in", "--follow"], "x"))
print(started[0].process.pid, started[0].served.url, started[0].served.api_key, flush=True)
time.sleep(120)
"""


@pytest.fixture
def stand_in(tmp_path, monkeypatch) -> Path:
    """A module ``stand_in`` on the path of this process and of its children, and a fresh
    temporary folder for both."""
    (tmp_path / "stand_in.py").write_text(STAND_IN)
    (tmp_path / "parent.py").write_text(PARENT)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")])))
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setenv("TMPDIR", str(temp))
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    return tmp_path


def status(url: str, key: str | None) -> int:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    try:
        with urllib.request.urlopen(urllib.request.Request(f"{url}/models", headers=headers), timeout=10) as r:
            return int(r.status)
    except urllib.error.HTTPError as ex:
        return ex.code


def alive(pid: int) -> bool:
    """Whether the process exists and is not a zombie (an orphan's is reaped by init, if ever)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text(encoding="utf-8").split(") ")[-1][0] != "Z"
    except FileNotFoundError:
        return False


def test_a_server_takes_its_fresh_key_and_leaves_no_file_behind(stand_in):
    assert served.API_KEY_ENV == "CMI_SERVED_API_KEY"  # the stand-in's
    server = served.launch(["stand_in"], "x")
    try:
        assert server.served.url.startswith("http://127.0.0.1:")
        assert len(server.served.api_key) >= 32
        assert status(server.served.url, server.served.api_key) == 200
        assert status(server.served.url, None) == 401
        other = served.launch(["stand_in"], "x")
        other.stop()
        assert other.served.api_key != server.served.api_key
        assert server.served.api_key not in Path(f"/proc/{server.process.pid}/cmdline").read_text(encoding="utf-8")
    finally:
        server.stop()
    assert server.process.returncode is not None
    assert list((stand_in / "tmp").iterdir()) == []


def test_a_server_that_exits_says_why_with_the_end_of_its_output(stand_in):
    with pytest.raises(RuntimeError, match=r"exited with status 3: no model here"):
        served.launch(["stand_in", "--fail"], "x")
    assert list((stand_in / "tmp").iterdir()) == []


@pytest.mark.slow  # a parent and its server in subprocesses, killed
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads process states from /proc")
@pytest.mark.parametrize("started_from", ["main", "thread"])
def test_the_server_dies_with_its_parent_killed_by_sigkill(stand_in, started_from):
    parent = subprocess.Popen(
        [sys.executable, str(stand_in / "parent.py"), started_from], stdout=subprocess.PIPE, text=True
    )
    pid = 0
    try:
        lines: list[str] = []
        reader = threading.Thread(target=lambda: lines.append(parent.stdout.readline()), daemon=True)  # type: ignore[union-attr]
        reader.start()
        reader.join(60)
        assert lines and lines[0], "the parent never started its server"
        pid_text, url, key = lines[0].split()
        pid = int(pid_text)
        assert alive(pid) and status(url, key) == 200  # the thread that started it has ended
        parent.send_signal(signal.SIGKILL)  # no atexit, no finally
        parent.wait(timeout=10)
        deadline = time.monotonic() + 10
        while alive(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not alive(pid), "the server outlived its parent"
        assert list((stand_in / "tmp").iterdir()) == []
    finally:
        parent.kill()
        parent.wait()
        if pid and alive(pid):
            os.kill(pid, signal.SIGKILL)


def test_a_server_started_by_hand_follows_no_one(monkeypatch):
    monkeypatch.delenv(served.PARENT_ENV, raising=False)
    before = threading.active_count()
    served.follow_parent()
    assert threading.active_count() == before


@pytest.mark.slow  # starts llama.cpp's server in a subprocess
def test_one_server_per_model_and_window_answering_on_loopback():
    path = resolve_gguf("smollm2")
    first = served.served_model(path, 2048, extra_bufts=False)
    server = served._servers[(str(path), 2048, False, None)]
    try:
        assert first.url.startswith("http://127.0.0.1:") and first.model == served.ALIAS
        assert served.served_model(path, 2048, extra_bufts=False) == first  # reused, not restarted
        assert status(first.url, None) == 401
        request = urllib.request.Request(f"{first.url}/models", headers={"Authorization": f"Bearer {first.api_key}"})
        with urllib.request.urlopen(request, timeout=10) as response:
            assert [m["id"] for m in json.load(response)["data"]] == [served.ALIAS]
    finally:
        server.stop()
    assert server.process.returncode is not None
    with pytest.raises(RuntimeError, match="exited with status"):
        served.served_model(path, 2048, extra_bufts=False)
    del served._servers[(str(path), 2048, False, None)]
