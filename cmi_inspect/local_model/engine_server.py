"""The embedded engine behind an OpenAI-compatible endpoint, its slots shared by every client.

``python -m cmi_inspect.local_model.engine_server NAME --port P [-M parallel=4 ...]`` serves
the GGUF model ``NAME`` (as ``gguf/NAME`` resolves it, with the provider's ``-M`` arguments)
at ``/v1/chat/completions``: the same engine, probe, prefix reuse and ``parallel`` slots as
the in-process provider, so its greedy completions are the provider's. It answers greedily
whatever temperature is asked for, and reports no log-probabilities.
``cmi-inspect run --serve N`` starts one for a run (``served.serve_engine``); unlike
llama-cpp-python's own server, which answers one request at a time, it decodes concurrent
requests together.
"""

from __future__ import annotations

import argparse
import sys
import time
import uuid
from dataclasses import asdict
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from cmi_inspect.errors import UserError
from cmi_inspect.local_model.engine import Engine, PromptTooLongError
from cmi_inspect.local_model.provider import (
    DEFAULT_MAX_TOKENS,
    GGUFModel,
    reply_text,
    template_message,
)


def text_of(content: Any) -> str:
    """A message's content as text: a string, or the text parts of a list of parts."""
    if isinstance(content, str):
        return content
    parts = content or []
    return "".join(p.get("text", "") for p in parts if p.get("type") == "text")


def chat_request(body: dict[str, Any]) -> tuple[list[dict[str, str]], int, list[str] | None]:
    """Messages (roles mapped as the provider maps them), max tokens and stop strings."""
    messages = [template_message(m["role"], text_of(m.get("content"))) for m in body["messages"]]
    max_tokens = body.get("max_completion_tokens") or body.get("max_tokens") or DEFAULT_MAX_TOKENS
    stop = body.get("stop")
    return messages, int(max_tokens), [stop] if isinstance(stop, str) else stop


def error(status: int, message: str, code: str) -> JSONResponse:
    return JSONResponse(
        {"error": {"message": message, "type": "invalid_request_error", "code": code}}, status
    )


def app(engine: Engine, alias: str, parallel: int) -> Starlette:
    """The routes: the model list, chat completions, and the engine's reuse counters."""
    # every request waits on the engine in a worker thread: let all of them wait at once
    waiting = anyio.CapacityLimiter(max(64, 16 * parallel))

    async def models(_: Request) -> JSONResponse:
        return JSONResponse({"object": "list", "data": [{"id": alias, "object": "model"}]})

    async def completions(request: Request) -> JSONResponse:
        try:
            messages, max_tokens, stop = chat_request(await request.json())
        except (ValueError, KeyError, TypeError, AttributeError) as ex:
            return error(400, f"malformed chat completion request: {ex!r}", "invalid_request")
        try:
            response = await anyio.to_thread.run_sync(
                engine.chat, messages, max_tokens, stop, limiter=waiting
            )
        except PromptTooLongError as ex:
            return error(400, str(ex), "context_length_exceeded")
        response["choices"][0]["message"]["content"] = reply_text(response)  # as the provider
        created = int(time.time())
        return JSONResponse(
            {**response, "id": f"chatcmpl-{uuid.uuid4().hex}", "created": created, "model": alias}
        )

    async def stats(_: Request) -> JSONResponse:
        return JSONResponse(asdict(engine.stats))

    return Starlette(
        routes=[
            Route("/v1/models", models),
            Route("/v1/chat/completions", completions, methods=["POST"]),
            Route("/stats", stats),
        ]
    )


def main(argv: list[str]) -> int:
    import uvicorn

    parser = argparse.ArgumentParser(prog="python -m cmi_inspect.local_model.engine_server")
    parser.add_argument("model", help="a GGUF model, as gguf/NAME names it (e.g. smollm2)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--model_alias", help="the name the server answers to (default: NAME)")
    parser.add_argument("-M", dest="model_args", action="append", default=[], metavar="K=V")
    args = parser.parse_args(argv)
    try:
        model = GGUFModel(args.model, **dict(pair.split("=", 1) for pair in args.model_args))
    except (UserError, ValueError) as ex:
        print(f"engine_server: {ex}", file=sys.stderr)
        return 2
    print(
        f"serving {model.path.name} with {model.parallel} slot(s), llama.cpp extra buffers "
        f"{'on' if model.choice.extra_bufts else 'off'} ({model.choice.chosen_by})",
        file=sys.stderr,
        flush=True,
    )
    engine = model.engine
    uvicorn.run(
        app(engine, args.model_alias or args.model, model.parallel),
        host=args.host,
        port=args.port,
        log_level="warning",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
