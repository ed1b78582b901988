"""A strategy's ``select`` in a child process that sees the blind view and nothing else.

In the process that runs it, a strategy can read the data file, the model-call cache or the
logs of runs already scored, and patch the scorers (``strategies.base``'s docstring). With
``-S isolate=true`` (``cmi-inspect run --isolate`` for installed strategies) each sample's
``select`` runs instead in a fresh Python process (``isolated_child``) inside a sandbox:
with bubblewrap, a root that holds only the system's and Python's files, the virtual
environment, this package and the strategy's own code (the data file, when it lies among
them, is an empty file), no network and no environment but ``PATH``, ``HOME`` and
``PYTHONPATH``; with ``unshare`` alone, the same process with the data file, its folder,
``CMI_DATA_DIR``, the package's and Inspect's caches and Inspect's log folder hidden under
empty mounts. The child receives the sample's ``MemoryTask`` (the view the protocol allows)
and reaches the response model only through this process, which makes every call, so each
is recorded and checked as an in-process strategy's. Where neither sandbox runs, one line
says so and the strategy runs unisolated; its record says which (``Isolation``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any, Literal

from inspect_ai.model import ChatMessage, GenerateConfig, ModelOutput
from pydantic import BaseModel, ConfigDict, TypeAdapter

from cmi_inspect.causal_locomo.data import DATA_DIR_ENV
from cmi_inspect.causal_locomo.strategies.base import (
    DATA_FILE,
    MemoryStrategy,
    MemoryTask,
    Pick,
    Selection,
    StrategyError,
)
from cmi_inspect.causal_locomo.view import Memory
from cmi_inspect.errors import UserError
from cmi_inspect.paths import cache_dir

logger = logging.getLogger(__name__)

Sandbox = Literal["bwrap", "unshare", "none"]
MESSAGES = TypeAdapter(list[ChatMessage])
CHILD = "cmi_inspect.causal_locomo.strategies.isolated_child"
PACKAGE_DATA = ("testing", "causal_locomo/annotations")
"""This package's data folders (a fixture data set, the release's kinds of harmful memory):
hidden from the child like any data."""


PACKAGE = Path(__file__).resolve().parents[2]
"""This package's folder (``cmi_inspect``)."""


def package_data() -> list[Path]:
    root = PACKAGE
    return [root / folder for folder in PACKAGE_DATA if (root / folder).is_dir()]


class ChildError(Exception):
    """What the strategy raised in its child, as the child wrote it (``repr``)."""

    def __repr__(self) -> str:
        return str(self.args[0])


class ChildDetails(BaseModel):
    """The strategy's details as the child sent them (its own record, as JSON)."""

    model_config = ConfigDict(extra="allow")


def _works(command: list[str]) -> bool:
    try:
        return subprocess.run(command, capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


PROBES: dict[Sandbox, list[str]] = {
    "bwrap": ["bwrap", "--ro-bind", "/", "/", "--unshare-all", "true"],
    "unshare": ["unshare", "--user", "--map-root-user", "--mount", "--net", "true"],
}


@cache
def works(kind: Sandbox) -> bool:
    """Whether the ``kind`` of sandbox runs on this machine (a trial run of ``true``)."""
    probe = PROBES.get(kind)
    return probe is not None and shutil.which(probe[0]) is not None and _works(probe)


def sandbox() -> Sandbox:
    """The strongest sandbox this machine runs: bubblewrap, else ``unshare``, else none."""
    return next((k for k in PROBES if works(k)), "none")


def code_roots(strategy: type[MemoryStrategy]) -> list[Path]:
    """The folders a child needs to import this package and the strategy: Python's own, the
    environment's, ``cmi_inspect`` and the strategy's top-level package (or module)."""
    roots = {Path(sys.base_prefix), Path(sys.prefix), Path(sys.executable).resolve().parent}
    roots.add(PACKAGE)
    module = sys.modules[strategy.__module__]
    top = sys.modules[strategy.__module__.split(".")[0]]
    origin = Path(top.__file__ or module.__file__ or "").resolve()
    roots.add(origin.parent if origin.name == "__init__.py" else origin)
    return sorted(roots)


def import_path(strategy: type[MemoryStrategy]) -> list[str]:
    """The child's ``PYTHONPATH``: the folders holding this package and the strategy."""
    tops = [PACKAGE]
    module = sys.modules[strategy.__module__.split(".")[0]]
    origin = Path(module.__file__ or "").resolve()
    tops.append(origin.parent if origin.name == "__init__.py" else origin)
    return list(dict.fromkeys(str(t.parent) for t in tops))


def hidden(data_file: str) -> list[Path]:
    """What the ``unshare`` sandbox hides: the data and every cache or log of results."""
    from inspect_ai.model import cache_path

    found = [Path(data_file).resolve(), Path(data_file).resolve().parent, cache_dir(), cache_path()]
    found += package_data()
    for name in (DATA_DIR_ENV, "INSPECT_LOG_DIR"):
        if os.environ.get(name):
            found.append(Path(os.environ[name]))
    data_home = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    found.append(data_home / "inspect_ai")
    return [p.resolve() for p in dict.fromkeys(found) if p.exists()]


def command(kind: Sandbox, strategy: type[MemoryStrategy], data_file: str) -> list[str]:
    """The child's command line in the ``kind`` of sandbox."""
    python = [sys.executable, "-m", CHILD]
    env = {"PATH": "/usr/bin:/bin", "HOME": "/tmp", "PYTHONPATH": ":".join(import_path(strategy))}
    if kind == "bwrap":
        bound = [
            *("--ro-bind-try", "/usr", "/usr", "--ro-bind-try", "/lib", "/lib"),
            *("--ro-bind-try", "/lib64", "/lib64", "--ro-bind-try", "/bin", "/bin"),
            *("--ro-bind-try", "/etc", "/etc"),
        ]
        for root in code_roots(strategy):
            bound += ["--ro-bind", str(root), str(root)]
        data = Path(data_file).resolve()
        if any(data.is_relative_to(r) for r in code_roots(strategy)):
            bound += ["--ro-bind", "/dev/null", str(data)]
        for folder in package_data():
            bound += ["--tmpfs", str(folder)]
        settings = [a for k, v in env.items() for a in ("--setenv", k, v)]
        return [
            *("bwrap", "--die-with-parent", "--unshare-all", "--proc", "/proc", "--dev", "/dev"),
            *("--tmpfs", "/tmp", *bound, "--clearenv", *settings, "--chdir", "/tmp", *python),
        ]
    if kind == "unshare":
        mounts = " && ".join(
            f"mount --bind /dev/null {p}" if p.is_file() else f"mount -t tmpfs none {p}"
            for p in hidden(data_file)
        )
        shell = f'{mounts} && exec env -i {" ".join(f"{k}={v}" for k, v in env.items())} "$@"'
        return [
            *("unshare", "--user", "--map-root-user", "--mount", "--net", "--fork"),
            *("sh", "-c", shell, "isolated", *python),
        ]
    return python


def task_message(
    task: MemoryTask, strategy: type[MemoryStrategy], args: Mapping[str, Any]
) -> dict[str, Any]:
    """What the child is given: the strategy's class and arguments, and the sample's view,
    as JSON."""
    return {
        "strategy": strategy.name,
        "module": strategy.__module__,
        "qualname": strategy.__qualname__,
        "args": dict(args),
        "request": task.request,
        "memories": [dataclasses.asdict(m) for m in task.memories],
        "sessions": [s.model_dump(mode="json") for s in task.sessions],
        "protocol": task.protocol,
        "model": task.model.name,
        "conversation": task.conversation,
    }


def task_of(message: Mapping[str, Any], model: Any) -> MemoryTask:
    """The child's ``MemoryTask`` from ``task_message``'s JSON, with the relayed model."""
    from cmi_inspect.causal_locomo.data import PastSession

    return MemoryTask(
        request=message["request"],
        memories=[Memory(**m) for m in message["memories"]],
        sessions=[PastSession.model_validate(s) for s in message["sessions"]],
        protocol=message["protocol"],
        model=model,
        conversation=message.get("conversation"),
    )


def selection_of(message: Mapping[str, Any]) -> Selection:
    """The child's answer (``isolated_child.selection_message``) as a ``Selection``."""
    output = message.get("output")
    return Selection(
        picks=[Pick(p["key"], p.get("score")) for p in message["picks"]],
        prompt=message["prompt"],
        details=ChildDetails(**message["details"]) if message.get("details") else None,
        output=ModelOutput.model_validate(output) if output else None,
    )


class Isolated(MemoryStrategy):
    """Another strategy's ``select`` run in a sandboxed child process, once per sample."""

    def __init__(self, inner: MemoryStrategy, args: Mapping[str, Any]) -> None:
        if inner.answer_scorer() is not None:
            raise UserError(
                f"-S isolate=true cannot run strategy {inner.name!r}: it scores answers with "
                "the answer key, which a sandboxed process never sees."
            )
        self.inner, self.args = inner, dict(args)
        self.name = inner.name  # type: ignore[misc]
        self.kind = self.sandbox = sandbox()
        if self.kind == "none":
            logger.warning(
                "strategy %r runs NOT isolated: neither bubblewrap (bwrap) nor unshare runs "
                "here; install bubblewrap to isolate it (its row is marked not isolated)",
                inner.name,
            )

    def explain(self, details: dict[str, Any], names: Mapping[str, str]) -> str:  # type: ignore[override]
        return type(self.inner).explain(details, names)

    def check_protocol(self, protocol: Any) -> None:
        self.inner.check_protocol(protocol)

    async def select(self, task: MemoryTask) -> Selection:
        if self.kind == "none":
            return await self.inner.select(task)
        child = await asyncio.create_subprocess_exec(
            *command(self.kind, type(self.inner), DATA_FILE.get()),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            limit=2**26,
        )
        try:
            return await relay(child, task, task_message(task, type(self.inner), self.args))
        finally:
            if child.returncode is None:
                child.kill()
            await child.wait()


async def relay(
    child: asyncio.subprocess.Process, task: MemoryTask, opening: dict[str, Any]
) -> Selection:
    """Give the child its task, answer its model calls through ``task.model`` (so that each
    is this sample's, recorded), and return its selection."""
    assert child.stdin is not None and child.stdout is not None and child.stderr is not None
    writing = asyncio.Lock()

    async def send(message: dict[str, Any]) -> None:
        async with writing:
            child.stdin.write((json.dumps(message) + "\n").encode())  # type: ignore[union-attr]
            await child.stdin.drain()  # type: ignore[union-attr]

    async def answer(request: dict[str, Any]) -> None:
        try:
            output = await task.model.generate(
                MESSAGES.validate_python(request["input"]),
                config=GenerateConfig.model_validate(request.get("config") or {}),
            )
            await send({"id": request["id"], "output": output.model_dump(mode="json")})
        except Exception as ex:  # the child's call fails in the child, as it would in-process
            await send({"id": request["id"], "error": f"{type(ex).__name__}: {ex}"})

    await send(opening)
    calls: set[asyncio.Task[None]] = set()
    while line := await child.stdout.readline():
        message = json.loads(line)
        if "generate" in message:
            call = asyncio.create_task(answer(message["generate"]))
            calls.add(call)
            call.add_done_callback(calls.discard)
        elif "selection" in message:
            return selection_of(message["selection"])
        elif "error" in message:
            raise (UserError if message.get("user") else ChildError)(message["error"])
    said = (await child.stderr.read()).decode(errors="replace").strip().splitlines()
    raise StrategyError(
        f"strategy {opening['strategy']!r}'s isolated process ended without a selection "
        f"(exit {await child.wait()}): {said[-1] if said else 'no output'}"
    )
