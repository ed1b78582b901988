"""The engine behind an OpenAI-compatible endpoint: requests read, replies shaped as the
OpenAI client expects, a prompt too long as the API reports one."""

from __future__ import annotations

from typing import Any

import pytest
from cmi_inspect.local_model.engine import PromptTooLongError
from cmi_inspect.local_model.engine_server import app, chat_request
from cmi_inspect.local_model.prefix_cache import ReuseStats
from cmi_inspect.local_model.provider import DEFAULT_MAX_TOKENS
from starlette.testclient import TestClient


class FakeEngine:
    """Records each call and answers with padded text, or refuses prompts that say 'long'."""

    def __init__(self) -> None:
        self.calls: list[tuple[list[dict[str, str]], int, list[str] | None]] = []
        self.stats = ReuseStats(calls=3, prompt_tokens=30, evaluated_tokens=12)

    def chat(self, messages: list[dict[str, str]], max_tokens: int, stop: list[str] | None) -> dict[str, Any]:
        self.calls.append((messages, max_tokens, stop))
        if "long" in messages[-1]["content"]:
            raise PromptTooLongError("Prompt of 5000 tokens plus max_tokens=128 exceeds the window")
        return {
            "object": "chat.completion",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": "  Paris \n"},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 7, "completion_tokens": 2, "total_tokens": 9},
        }


def test_request_reads_text_parts_roles_limits_and_stops():
    body = {
        "messages": [
            {"role": "system", "content": "Be brief."},
            {
                "role": "user",
                "content": [{"type": "text", "text": "Capital "}, {"type": "text", "text": "of France?"}],
            },
            {"role": "tool", "content": "a tool's result"},
        ],
        "max_completion_tokens": 16,
        "stop": "\n\n",
    }
    messages, max_tokens, stop = chat_request(body)
    assert messages == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Capital of France?"},
        {"role": "user", "content": "a tool's result"},  # as the in-process provider maps it
    ]
    assert (max_tokens, stop) == (16, ["\n\n"])
    assert chat_request({"messages": [], "max_tokens": 5})[1:] == (5, None)
    assert chat_request({"messages": []})[1] == DEFAULT_MAX_TOKENS


@pytest.fixture
def client() -> tuple[TestClient, FakeEngine]:
    engine = FakeEngine()
    return TestClient(app(engine, "smollm2", parallel=2)), engine  # type: ignore[arg-type]


def test_completion_is_shaped_for_the_openai_client_and_stripped(client):
    http, engine = client
    reply = http.post(
        "/v1/chat/completions",
        json={"model": "smollm2", "messages": [{"role": "user", "content": "Capital?"}], "max_tokens": 8},
    )
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


def test_too_long_and_malformed_requests_are_400s_the_client_can_read(client):
    http, _ = client
    long = http.post("/v1/chat/completions", json={"messages": [{"role": "user", "content": "long"}]})
    assert long.status_code == 400
    assert long.json()["error"]["code"] == "context_length_exceeded"
    assert "exceeds the window" in long.json()["error"]["message"]
    malformed = http.post("/v1/chat/completions", json={"prompt": "no messages"})
    assert malformed.status_code == 400
    assert "messages" in malformed.json()["error"]["message"]
