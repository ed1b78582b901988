"""The engine behind an OpenAI-compatible endpoint: requests read and checked, replies shaped
as the OpenAI client expects, a key required when it has one, a completion cancelled when
its client goes or the server stops (on a fake engine; one subprocess for SIGTERM)."""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import anyio
import pytest
from cmi_inspect.local_model.config import EngineConfig
from cmi_inspect.local_model.engine import GenerationCancelled, PromptTooLongError
from cmi_inspect.local_model.engine_server import BadRequest, app, chat_request, main
from cmi_inspect.local_model.prefix_cache import ReuseStats
from cmi_inspect.local_model.provider import DEFAULT_MAX_TOKENS
from cmi_inspect.local_model.served import free_port
from starlette.testclient import TestClient

from conftest import REPO

REPLY = {
    "object": "chat.completion",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "  Paris \n"}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 7, "completion_tokens": 2, "total_tokens": 9},
}


class FakeEngine:
    """Records each call and answers with padded text, refuses prompts that say 'long', and
    generates until cancelled (10 s at most) for prompts that say 'wait'."""

    def __init__(self) -> None:
        self.calls: list[tuple[list[dict[str, str]], int, list[str] | None]] = []
        self.stats = ReuseStats(calls=3, prompt_tokens=30, evaluated_tokens=12)
        self.generating = threading.Event()

    def chat(
        self,
        messages: list[dict[str, str]],
        max_tokens: int,
        stop: list[str] | None,
        cancel: threading.Event | None = None,
    ) -> dict[str, Any]:
        self.calls.append((messages, max_tokens, stop))
        assert cancel is not None  # the server always gives one
        if "long" in messages[-1]["content"]:
            raise PromptTooLongError("Prompt of 5000 tokens plus max_tokens=128 exceeds the window")
        if "wait" in messages[-1]["content"]:
            self.generating.set()
            cancel.wait(10)
        if cancel.is_set():
            raise GenerationCancelled("the completion was cancelled")
        return json.loads(json.dumps(REPLY))


def ask(content: str = "Capital?", **fields: Any) -> dict[str, Any]:
    return {"model": "smollm2", "messages": [{"role": "user", "content": content}], **fields}


def test_request_reads_text_parts_roles_limits_and_stops():
    body = {
        "messages": [
            {"role": "system", "content": "Be brief."},
            {
                "role": "user",
                "content": [{"type": "text", "text": "Capital "}, {"type": "text", "text": "of France?"}],
            },
            {"role": "tool", "content": "a tool's result"},
            {"role": "assistant", "content": None},
        ],
        "max_completion_tokens": 16,
        "max_tokens": 99,  # the newer field wins
        "stop": "\n\n",
        "temperature": 0.7,
        "n": 1,
        "stream": False,
    }
    messages, max_tokens, stop = chat_request(body)
    assert messages == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Capital of France?"},
        {"role": "user", "content": "a tool's result"},  # as the in-process provider maps it
        {"role": "assistant", "content": ""},
    ]
    assert (max_tokens, stop) == (16, ["\n\n"])
    assert chat_request(ask(max_tokens=5, stop=["a", "b"]))[1:] == (5, ["a", "b"])
    assert chat_request(ask(max_tokens=None))[1:] == (DEFAULT_MAX_TOKENS, None)


@pytest.mark.parametrize(
    ("body", "names"),
    [
        ([], "the request body must be a JSON object"),
        ({"prompt": "no messages"}, "messages must be a non-empty list"),
        ({"messages": []}, "messages must be a non-empty list"),
        ({"messages": ["hi"]}, "messages[0] must be an object with a string role"),
        ({"messages": [{"role": 1, "content": "hi"}]}, "messages[0] must be an object with a string role"),
        ({"messages": [{"role": "user", "content": 5}]}, "messages[0].content must be a string"),
        (
            {"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}]},
            "messages[0].content[0] must be a text part",
        ),
        ({"messages": [{"role": "user", "content": [{"type": "text"}]}]}, "messages[0].content[0].text must be"),
        (ask(max_tokens=-1), "max_tokens must be an integer of at least 1, got -1"),
        (ask(max_tokens=0), "max_tokens must be an integer of at least 1, got 0"),
        (ask(max_tokens=1.5), "max_tokens must be an integer of at least 1, got 1.5"),
        (ask(max_tokens="8"), "max_tokens must be an integer of at least 1, got '8'"),
        (ask(max_tokens=True), "max_tokens must be an integer of at least 1, got True"),
        (ask(max_completion_tokens=0, max_tokens=8), "max_completion_tokens must be an integer"),
        (ask(stop=5), "stop must be a non-empty string or a list of them, got 5"),
        (ask(stop=["a", 1]), "stop must be a non-empty string or a list of them"),
        (ask(stop=""), "stop must be a non-empty string or a list of them, got ''"),
        (ask(temperature=3), "temperature must be a number in [0, 2], got 3"),
        (ask(temperature=-0.1), "temperature must be a number in [0, 2]"),
        (ask(temperature="hot"), "temperature must be a number in [0, 2], got 'hot'"),
        (ask(temperature=float("nan")), "temperature must be a number in [0, 2], got nan"),
        (ask(top_p=1.5), "top_p must be a number in [0, 1]"),
        (ask(presence_penalty=True), "presence_penalty must be a number in [-2, 2]"),
        (ask(n=2), "n must be 1: one choice per request is served, got 2"),
        (ask(n=True), "n must be 1"),
        (ask(stream=True), "stream must be false: streaming is not served, got True"),
        (ask(stream=0), "stream must be false"),
        (ask(response_format={"type": "json_object"}), "response_format must be text: constrained"),
        (ask(tools=[{"type": "function"}]), "tools are not served"),
        (ask(logprobs=True), "logprobs are not served, got True"),
    ],
)
def test_a_request_the_api_does_not_allow_names_its_field(body, names):
    with pytest.raises(BadRequest) as raised:
        chat_request(body)
    assert str(raised.value).startswith(names)


@pytest.fixture
def client() -> tuple[TestClient, FakeEngine]:
    engine = FakeEngine()
    return TestClient(app(engine, "smollm2", parallel=2)), engine  # type: ignore[arg-type]


def test_completion_is_shaped_for_the_openai_client_and_stripped(client):
    http, engine = client
    reply = http.post("/v1/chat/completions", json=ask(max_tokens=8))
    assert reply.status_code == 200
    body = reply.json()
    assert body["id"].startswith("chatcmpl-") and body["model"] == "smollm2"
    assert isinstance(body["created"], int)
    assert body["choices"][0]["message"]["content"] == "Paris"
    assert body["usage"]["total_tokens"] == 9
    assert engine.calls == [([{"role": "user", "content": "Capital?"}], 8, None)]
    assert http.get("/v1/models").json()["data"] == [{"id": "smollm2", "object": "model"}]
    assert http.get("/stats").json() == {
        "calls": 3,
        "prompt_tokens": 30,
        "evaluated_tokens": 12,
        "scored_tokens": 0,
    }


def test_too_long_malformed_and_invalid_requests_are_400s_the_client_can_read(client):
    http, engine = client
    long = http.post("/v1/chat/completions", json=ask("long"))
    assert long.status_code == 400
    assert long.json()["error"]["code"] == "context_length_exceeded"
    assert "exceeds the window" in long.json()["error"]["message"]
    for body in ({"prompt": "no messages"}, ask(stop=5), ask(max_tokens=-1)):
        bad = http.post("/v1/chat/completions", json=body)
        assert bad.status_code == 400, body
        message = bad.json()["error"]["message"]
        assert message.startswith("malformed chat completion request: ") and "\n" not in message
    assert "stop must be" in http.post("/v1/chat/completions", json=ask(stop=5)).json()["error"]["message"]
    not_json = http.post("/v1/chat/completions", content=b"{not json", headers={"content-type": "application/json"})
    assert not_json.status_code == 400
    assert len(engine.calls) == 1  # only the long prompt reached the engine


def test_with_a_key_every_route_wants_it():
    http = TestClient(app(FakeEngine(), "smollm2", parallel=1, api_key="s3cret"))  # type: ignore[arg-type]
    for method, path, body in [
        ("GET", "/v1/models", None),
        ("POST", "/v1/chat/completions", ask()),
        ("GET", "/stats", None),
    ]:
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "s3cret"}):
            refused = http.request(method, path, json=body, headers=headers)
            assert refused.status_code == 401, (path, headers)
            assert refused.json()["error"]["code"] == "invalid_api_key"
        allowed = http.request(method, path, json=body, headers={"Authorization": "Bearer s3cret"})
        assert allowed.status_code == 200, path


def test_a_stopping_server_cancels_what_is_in_flight_and_what_comes_after(client):
    http, engine = client
    answers: list[Any] = []
    waiting = threading.Thread(target=lambda: answers.append(http.post("/v1/chat/completions", json=ask("wait"))))
    waiting.start()
    assert engine.generating.wait(10)
    http.app.state.in_flight.stop_all()  # type: ignore[attr-defined]  # what SIGTERM does
    waiting.join(10)
    assert [a.status_code for a in answers] == [503]
    assert answers[0].json()["error"]["code"] == "server_stopping"
    later = http.post("/v1/chat/completions", json=ask())
    assert later.status_code == 503


async def test_a_client_that_disconnects_cancels_its_completion():
    engine = FakeEngine()
    application = app(engine, "smollm2", parallel=1)  # type: ignore[arg-type]
    body = json.dumps(ask("wait")).encode()
    sent: list[dict[str, Any]] = []
    messages = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive() -> dict[str, Any]:
        if messages:
            return messages.pop(0)
        await anyio.to_thread.run_sync(engine.generating.wait, 10)  # the client leaves mid-generation
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/v1/chat/completions",
        "raw_path": b"/v1/chat/completions",
        "query_string": b"",
        "root_path": "",
        "headers": [(b"content-type", b"application/json")],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8080),
    }
    with anyio.fail_after(10):
        await application(scope, receive, send)  # type: ignore[arg-type]  # the ASGI test doubles
    assert sent[0]["status"] == 499  # cancelled: the fake stops waiting only when told
    assert json.loads(sent[1]["body"])["error"]["code"] == "client_closed"


SIGTERM_SERVER = """
import sys, threading
from cmi_inspect.local_model import engine_server
from cmi_inspect.local_model.engine import GenerationCancelled

engine_server.STOP_GRACE_S = int(sys.argv[2])

class Engine:
    stats = None
    def chat(self, messages, max_tokens, stop, cancel):
        print("generating", flush=True)
        if messages[-1]["content"] == "honours cancel":
            cancel.wait(60)
            print("cancelled", flush=True)
            raise GenerationCancelled("cancelled")
        threading.Event().wait(60)  # a prompt that cannot be cut short

engine_server.serve(engine_server.app(Engine(), "fake", 1), "127.0.0.1", int(sys.argv[1]))
"""


def _line(process: subprocess.Popen[str]) -> str:
    """The server's next line of output (a thread reads it, so the wait is bounded)."""
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.append(process.stdout.readline()), daemon=True)  # type: ignore[union-attr]
    reader.start()
    reader.join(60)
    assert lines, "the server wrote nothing in 60 s"
    return lines[0].strip()


@pytest.mark.slow  # a server in a subprocess (about 10 s)
@pytest.mark.parametrize(("content", "grace"), [("honours cancel", 30), ("never ends", 2)])
def test_sigterm_ends_the_server_with_a_completion_in_flight(tmp_path, content, grace):
    port = free_port()
    script = tmp_path / "server.py"
    script.write_text(SIGTERM_SERVER)
    process = subprocess.Popen(
        [sys.executable, str(script), str(port), str(grace)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        url = f"http://127.0.0.1:{port}/v1"
        deadline = time.monotonic() + 60
        while True:  # until it answers
            try:
                urllib.request.urlopen(f"{url}/models", timeout=5).close()
                break
            except (urllib.error.URLError, ConnectionError):
                assert time.monotonic() < deadline and process.poll() is None, "the server never answered"
                time.sleep(0.2)
        request = urllib.request.Request(
            f"{url}/chat/completions",
            data=json.dumps(ask(content)).encode(),
            headers={"Content-Type": "application/json"},
        )

        def post() -> None:
            with contextlib.suppress(OSError):  # a 503, or no answer at all
                urllib.request.urlopen(request, timeout=60)

        threading.Thread(target=post, daemon=True).start()
        assert _line(process) == "generating"
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=45)  # uvicorn alone waits the 60 s of the completion
        rest = process.stdout.read()  # type: ignore[union-attr]
        if content == "honours cancel":  # cancelled, answered, and uvicorn's own exit
            assert process.returncode == -signal.SIGTERM and "cancelled" in rest
        else:
            assert process.returncode == 128 + signal.SIGTERM and "not stopped 2 s after" in rest
    finally:
        process.kill()
        process.wait()


def test_the_command_line_says_what_is_wrong_in_one_line(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("CMI_CACHE_DIR", str(tmp_path))
    for argv, says in [
        (["smollm2", "-M", "n_ctx=abc"], "n_ctx must be an integer of at least 1, got 'abc'"),
        (["smollm2", "-M", "n_threads=zero"], "n_threads must be an integer of at least 1, got 'zero'"),
        (["smollm2", "-M", "parallel"], "-M expects name=value, got 'parallel'"),
        ([str(tmp_path / "missing.gguf")], "Unknown local model"),
    ]:
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"engine_server: {says}") and err.count("\n") == 1, err


def test_a_served_model_key_is_read_from_the_environment(monkeypatch):
    """``--api-key``'s default: set for the server and its clients alike."""
    monkeypatch.setenv("CMI_SERVED_API_KEY", "from-env")
    seen: dict[str, Any] = {}
    monkeypatch.setattr(
        "cmi_inspect.local_model.engine_server.serve", lambda application, host, port: seen.update(app=application)
    )

    config = EngineConfig(path=Path("m.gguf"), extra_bufts=False, chosen_by="test")
    monkeypatch.setattr(EngineConfig, "from_model_args", lambda name, **args: config)
    monkeypatch.setattr("cmi_inspect.local_model.engine_server.engine_for", lambda c: FakeEngine())
    assert main(["smollm2"]) == 0
    http = TestClient(seen["app"])
    assert http.get("/v1/models").status_code == 401
    assert http.get("/v1/models", headers={"Authorization": "Bearer from-env"}).status_code == 200
