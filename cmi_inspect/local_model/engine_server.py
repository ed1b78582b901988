"""The embedded engine behind an OpenAI-compatible endpoint, its slots shared by every client.

``python -m cmi_inspect.local_model.engine_server NAME --port P [-M parallel=4 ...]
[--api-key KEY]`` serves the GGUF model ``NAME`` (as ``gguf/NAME`` resolves it, with the
provider's ``-M`` arguments) at ``/v1/chat/completions``: the same engine, probe, prefix reuse
and ``parallel`` slots as the in-process provider, so its greedy completions are the
provider's. It answers greedily whatever temperature is asked for, and reports no
log-probabilities. ``cmi-inspect run --serve N`` starts one for a run
(``served.serve_engine``); unlike llama-cpp-python's own server, which answers one request
at a time, it decodes concurrent requests together.

- **A key.** With ``--api-key KEY``, or ``CMI_SERVED_API_KEY`` in its environment, every
  request must carry ``Authorization: Bearer KEY`` (else HTTP 401). Started by hand for
  several processes, export the variable for the server and its clients alike (Inspect's
  ``openai-api/cmi-served/NAME`` sends it): a command line is visible to every local user,
  an environment is not. Without either it answers anyone who can reach its port.
  ``serve_engine`` gives each server a fresh random key.
- **Requests checked.** A field of the wrong type or out of range (``max_tokens: -1``,
  ``"stop": 5``, ``temperature: 3``, ``n: 2``, ``stream: true``) is an HTTP 400 whose one-line
  message names it, before anything reaches the engine.
- **Nothing computed for nobody.** A completion whose client disconnects stops at its next
  token, so it no longer holds the engine for the next request; SIGTERM or SIGINT stops
  every completion in flight the same way, and the process ends within ``STOP_GRACE_S``
  whatever it was doing. Started by ``served``, it ends with the process that started it.
"""

from __future__ import annotations

import argparse
import hmac
import math
import os
import sys
import threading
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict
from functools import partial
from types import FrameType
from typing import Any

import anyio
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from cmi_inspect.errors import UserError, name_value_pairs
from cmi_inspect.local_model.config import EngineConfig
from cmi_inspect.local_model.engine import (
    Engine,
    GenerationCancelled,
    PromptTooLongError,
    engine_for,
)
from cmi_inspect.local_model.provider import DEFAULT_MAX_TOKENS, reply_text, template_message
from cmi_inspect.local_model.served import API_KEY_ENV, follow_parent

STOP_GRACE_S = 10
"""After SIGTERM, the longest the process lives on: a prompt being decoded when the signal
came cannot be cut short, but its completion stops at its first token."""
SAMPLING_RANGES = {
    "temperature": (0, 2),
    "top_p": (0, 1),
    "presence_penalty": (-2, 2),
    "frequency_penalty": (-2, 2),
}
"""The OpenAI API's ranges for the sampling arguments the server takes (and, greedy, ignores)."""


class BadRequest(ValueError):
    """A request the API does not allow; the message names the field."""


def text_of(content: Any) -> str:
    """A message's content as text: a string, or the text parts of a list of parts."""
    if isinstance(content, str):
        return content
    return "".join(part["text"] for part in content or [])


def _message(i: int, message: object) -> dict[str, str]:
    """One checked message, its role mapped as the provider maps it."""
    where = f"messages[{i}]"
    if not isinstance(message, dict) or not isinstance(message.get("role"), str):
        raise BadRequest(f"{where} must be an object with a string role")
    content = message.get("content")
    if isinstance(content, list):
        for j, part in enumerate(content):
            if not isinstance(part, dict) or part.get("type") != "text":
                raise BadRequest(f"{where}.content[{j}] must be a text part: only text is served")
            if not isinstance(part.get("text"), str):
                raise BadRequest(f"{where}.content[{j}].text must be a string")
    elif content is not None and not isinstance(content, str):
        raise BadRequest(f"{where}.content must be a string or a list of text parts")
    return template_message(message["role"], text_of(content))


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def chat_request(body: object) -> tuple[list[dict[str, str]], int, list[str] | None]:
    """Messages (roles mapped as the provider maps them), max tokens and stop strings of a
    chat completion request; ``BadRequest`` naming the first field the API does not allow."""
    if not isinstance(body, dict):
        raise BadRequest("the request body must be a JSON object")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise BadRequest("messages must be a non-empty list")
    chat = [_message(i, m) for i, m in enumerate(messages)]
    for name in ("max_completion_tokens", "max_tokens"):
        value = body.get(name)
        if value is not None and (type(value) is not int or value < 1):
            raise BadRequest(f"{name} must be an integer of at least 1, got {value!r}")
    max_tokens = next(
        (body[k] for k in ("max_completion_tokens", "max_tokens") if body.get(k) is not None),
        DEFAULT_MAX_TOKENS,
    )
    stop = body.get("stop")
    stops = [stop] if isinstance(stop, str) else stop
    if stops is not None and (
        not isinstance(stops, list) or not all(isinstance(s, str) and s for s in stops)
    ):
        raise BadRequest(f"stop must be a non-empty string or a list of them, got {stop!r}")
    for name, (low, high) in SAMPLING_RANGES.items():
        value = body.get(name)
        if value is not None and not (_is_number(value) and low <= value <= high):
            raise BadRequest(f"{name} must be a number in [{low}, {high}], got {value!r}")
    n = body.get("n")
    if n is not None and (type(n) is not int or n != 1):
        raise BadRequest(f"n must be 1: one choice per request is served, got {n!r}")
    stream = body.get("stream")
    if stream is not None and stream is not False:
        raise BadRequest(f"stream must be false: streaming is not served, got {stream!r}")
    # what the engine cannot honour is refused, never ignored: it decodes free text only
    response_format = body.get("response_format")
    if response_format is not None and response_format != {"type": "text"}:
        raise BadRequest(
            f"response_format must be text: constrained output is not served, "
            f"got {response_format!r}"
        )
    for name in ("tools", "logprobs"):
        if body.get(name):
            raise BadRequest(f"{name} are not served, got {body[name]!r}")
    return chat, max_tokens, stops


def error(status: int, message: str, code: str) -> JSONResponse:
    return JSONResponse(
        {"error": {"message": message, "type": "invalid_request_error", "code": code}}, status
    )


class InFlight:
    """The cancel flags of the completions being computed. ``stop_all`` sets every one, and
    that of any request still to come: the server is stopping."""

    def __init__(self) -> None:
        self._flags: set[threading.Event] = set()
        self._lock = threading.Lock()
        self.stopping = False

    @contextmanager
    def flag(self) -> Iterator[threading.Event]:
        """A cancel flag for one completion, held while the block runs."""
        cancel = threading.Event()
        with self._lock:
            self._flags.add(cancel)
            if self.stopping:
                cancel.set()
        try:
            yield cancel
        finally:
            with self._lock:
                self._flags.discard(cancel)

    def stop_all(self) -> None:
        with self._lock:
            self.stopping = True
            for cancel in self._flags:
                cancel.set()


Handler = Callable[[Request], Awaitable[Response]]


def app(engine: Engine, alias: str, parallel: int, api_key: str | None = None) -> Starlette:
    """The routes: the model list, chat completions, and the engine's reuse counters, each
    behind the key when there is one. ``state.in_flight`` holds the completions' flags."""
    # every request waits on the engine in a worker thread: let all of them wait at once
    waiting = anyio.CapacityLimiter(max(64, 16 * parallel))
    in_flight = InFlight()

    def guarded(handler: Handler) -> Handler:
        if api_key is None:
            return handler
        expected = f"Bearer {api_key}".encode()

        async def check(request: Request) -> Response:
            given = request.headers.get("authorization", "").encode()
            if not hmac.compare_digest(given, expected):
                message = "a valid key is required: Authorization: Bearer KEY"
                return error(401, message, "invalid_api_key")
            return await handler(request)

        return check

    async def models(_: Request) -> Response:
        return JSONResponse({"object": "list", "data": [{"id": alias, "object": "model"}]})

    async def completions(request: Request) -> Response:
        try:
            messages, max_tokens, stop = chat_request(await request.json())
        except ValueError as ex:  # BadRequest, or a body that is not JSON
            return error(400, f"malformed chat completion request: {ex}", "invalid_request")
        with in_flight.flag() as cancel:
            try:
                response = await until_gone(
                    request, cancel, partial(engine.chat, messages, max_tokens, stop, cancel)
                )
            except PromptTooLongError as ex:
                return error(400, str(ex), "context_length_exceeded")
            except GenerationCancelled:
                if in_flight.stopping:
                    return error(503, "the server is stopping", "server_stopping")
                return error(499, "the client closed the connection", "client_closed")
        response["choices"][0]["message"]["content"] = reply_text(response)  # as the provider
        created = int(time.time())
        return JSONResponse(
            {**response, "id": f"chatcmpl-{uuid.uuid4().hex}", "created": created, "model": alias}
        )

    async def until_gone(
        request: Request, cancel: threading.Event, call: Callable[[], dict[str, Any]]
    ) -> dict[str, Any]:
        """``call()`` in a worker thread, ``cancel`` set if the client disconnects first."""

        async def watch() -> None:
            while (await request.receive())["type"] != "http.disconnect":
                pass
            cancel.set()

        failed: Exception | None = None
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(watch)
            try:
                return await anyio.to_thread.run_sync(call, limiter=waiting)
            except Exception as ex:  # raised below: the task group would wrap it in a group
                failed = ex
            finally:
                tasks.cancel_scope.cancel()
        assert failed is not None
        raise failed

    async def stats(_: Request) -> Response:
        return JSONResponse(asdict(engine.stats))

    application = Starlette(
        routes=[
            Route("/v1/models", guarded(models)),
            Route("/v1/chat/completions", guarded(completions), methods=["POST"]),
            Route("/stats", guarded(stats)),
        ]
    )
    application.state.in_flight = in_flight
    return application


class StoppingServer(uvicorn.Server):
    """uvicorn's server, whose first SIGTERM or SIGINT also cancels every completion in flight
    (uvicorn alone waits for each to end) and ends the process ``STOP_GRACE_S`` later if it
    has not ended by then."""

    def __init__(self, config: uvicorn.Config, in_flight: InFlight) -> None:
        super().__init__(config)
        self.in_flight = in_flight

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if not self.should_exit:  # a signal handler: the locks are taken in a thread
            threading.Thread(target=self._stop, args=(sig,), daemon=True).start()
        super().handle_exit(sig, frame)

    def _stop(self, sig: int) -> None:
        self.in_flight.stop_all()
        time.sleep(STOP_GRACE_S)
        print(f"engine_server: not stopped {STOP_GRACE_S} s after {sig}: exiting", file=sys.stderr)
        os._exit(128 + sig)


def serve(application: Starlette, host: str, port: int) -> None:
    """Serve the app until SIGTERM or SIGINT."""
    config = uvicorn.Config(application, host=host, port=port, log_level="warning")
    StoppingServer(config, application.state.in_flight).run()


def main(argv: list[str]) -> int:
    follow_parent()
    parser = argparse.ArgumentParser(prog="python -m cmi_inspect.local_model.engine_server")
    parser.add_argument("model", help="a GGUF model, as gguf/NAME names it (e.g. smollm2)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--model_alias", help="the name the server answers to (default: NAME)")
    parser.add_argument("-M", dest="model_args", action="append", default=[], metavar="K=V")
    parser.add_argument(
        "--api-key",
        default=os.environ.get(API_KEY_ENV) or None,
        help=f"the key every request must carry (default: ${API_KEY_ENV}; none: no key)",
    )
    args = parser.parse_args(argv)
    try:
        settings: dict[str, Any] = name_value_pairs("-M", args.model_args)
        config = EngineConfig.from_model_args(args.model, **settings)
        engine = engine_for(config)
    except UserError as ex:
        print(f"engine_server: {ex}", file=sys.stderr)
        return 2
    print(
        f"serving {config.path.name} with {config.parallel} slot(s) ({config.batching_by}), "
        f"llama.cpp extra buffers {'on' if config.extra_bufts else 'off'} ({config.chosen_by})"
        f"{'' if args.api_key else ', with no key'}",
        file=sys.stderr,
        flush=True,
    )
    application = app(engine, args.model_alias or args.model, config.parallel, args.api_key)
    try:
        serve(application, args.host, args.port)
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
