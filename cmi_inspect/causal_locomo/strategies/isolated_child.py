"""The sandboxed side of ``-S isolate=true``: build the strategy, run its ``select`` on the one
task it is given, and relay its model calls to the parent (``isolation``).

The protocol is JSON lines: the parent's first line is the task (``isolation.task_message``);
the child asks ``{"generate": {"id", "input", "config"}}`` and is answered ``{"id",
"output"}`` or ``{"id", "error"}``; it ends with ``{"selection": ...}`` or ``{"error": ...}``.
The strategy's own prints go to standard error, never into the protocol.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import sys
from itertools import count
from typing import IO, Any

from inspect_ai.model import (
    ChatMessage,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    get_model,
    modelapi,
)
from inspect_ai.tool import ToolChoice, ToolInfo

from cmi_inspect.causal_locomo.strategies.base import Selection
from cmi_inspect.errors import UserError

PROVIDER = "cmi_relayed"
"""The child's model provider: calls relayed to the parent."""


class Relay:
    """The child's end of the pipe: requests out, answers in, matched by id."""

    def __init__(self, out: IO[str]) -> None:
        self.out = out
        self.ids = count(1)
        self.waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}

    def send(self, message: dict[str, Any]) -> None:
        self.out.write(json.dumps(message) + "\n")
        self.out.flush()

    async def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        ident = next(self.ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.waiting[ident] = future
        self.send({"generate": {"id": ident, **request}})
        return await future

    def answered(self, message: dict[str, Any]) -> None:
        future = self.waiting.pop(int(message["id"]))
        future.set_result(message)


class RelayedAPI(ModelAPI):
    """The response model, reached through the parent, which makes and records each call."""

    def __init__(self, model_name: str, relay: Relay, **_: Any) -> None:
        super().__init__(model_name=model_name)
        self.relay = relay

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        reply = await self.relay.ask(
            {
                "input": [m.model_dump(mode="json") for m in input],
                "config": config.model_dump(mode="json", exclude_none=True),
            }
        )
        if "error" in reply:
            raise RuntimeError(reply["error"])
        return ModelOutput.model_validate(reply["output"])


@modelapi(name=PROVIDER)
def relayed() -> type[ModelAPI]:
    return RelayedAPI


def selection_message(selection: Selection) -> dict[str, Any]:
    return {
        "picks": [{"key": p.key, "score": p.score} for p in selection.picks],
        "prompt": selection.prompt,
        "details": selection.details.model_dump(mode="json") if selection.details else None,
        "output": selection.output.model_dump(mode="json") if selection.output else None,
    }


async def serve(relay: Relay, read: asyncio.StreamReader) -> None:
    from cmi_inspect.causal_locomo.strategies.arguments import build_strategy
    from cmi_inspect.causal_locomo.strategies.isolation import task_of

    async def answers() -> None:
        while line := await read.readline():
            relay.answered(json.loads(line))

    opening = json.loads(await read.readline())
    listening = asyncio.create_task(answers())
    try:
        found: Any = importlib.import_module(opening["module"])
        for part in opening["qualname"].split("."):
            found = getattr(found, part)
        strategy = build_strategy(found, opening["args"])
        model = get_model(f"{PROVIDER}/{opening['model']}", relay=relay, memoize=False)
        selection = await strategy.select(task_of(opening, model))
        relay.send({"selection": selection_message(selection)})
    except UserError as ex:  # a misconfigured strategy is the user's to fix, in one line
        relay.send({"error": str(ex), "user": True})
    except BaseException as ex:  # SystemExit too: the parent names it, as in-process
        relay.send({"error": repr(ex)})
    finally:
        listening.cancel()


async def main() -> None:
    protocol = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # what the strategy prints goes to standard error
    sys.stdout = sys.stderr
    loop = asyncio.get_running_loop()
    read = asyncio.StreamReader(limit=2**26)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(read), sys.stdin)
    await serve(Relay(protocol), read)


if __name__ == "__main__":
    asyncio.run(main())
