"""The tasks an eval has built, for the strategy solver Inspect builds after them.

Inspect builds a solver named on its own (``--solver NAME -S ...``) after the tasks it runs
with, and lists a run by its task. So each task records itself here as the eval builds it,
and that solver, built next, checks its strategy against each task's protocol before the
first sample and tags each run with its strategy and the arguments set (``log_tags``), as
``-T strategy=`` does. Each eval runs in a copy of its caller's context, so no record leaks
into the next; a task built outside an eval (no active model) is not recorded.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from inspect_ai import Task, task_with

from cmi_inspect.causal_locomo.log_tags import run_tags
from cmi_inspect.causal_locomo.protocol import Protocol
from cmi_inspect.inspect_private import active_model


@dataclass(frozen=True)
class BuiltTask:
    """One Causal-LoCoMo task of the eval being set up."""

    task: Task
    protocol: Protocol
    args: Mapping[str, Any]
    """The task arguments a run's tags show (``log_tags.data_tags``)."""


BUILT: ContextVar[tuple[BuiltTask, ...]] = ContextVar("built_tasks", default=())


def note_built(task: Task, protocol: Protocol, args: Mapping[str, Any]) -> None:
    """Record ``task``, being built for an eval; nothing outside one."""
    if active_model() is not None:
        BUILT.set((*BUILT.get(), BuiltTask(task, protocol, dict(args))))


def built_tasks() -> tuple[BuiltTask, ...]:
    """The tasks recorded in this eval so far."""
    return BUILT.get()


@contextmanager
def own_solver() -> Iterator[None]:
    """While a task builds its own strategy solver (``-T strategy=``): that solver is the
    task's, so no task built before it is checked or tagged for it."""
    token = BUILT.set(())
    try:
        yield
    finally:
        BUILT.reset(token)


def tag_runs(strategy: str, passed: Mapping[str, Any]) -> None:
    """Tag each task of this eval with the strategy named apart and its arguments set
    (Inspect's ``task_with``, in place)."""
    for built in BUILT.get():
        task_with(built.task, tags=run_tags(strategy, dict(passed), dict(built.args)))
