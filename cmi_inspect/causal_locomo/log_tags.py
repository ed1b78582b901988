"""Names each Causal-LoCoMo run's strategy where Inspect View's log list shows it.

Inspect View lists logs by task name, model, task arguments and tags. Every run here is
the one task ``causal_locomo``, and ``--solver NAME`` is not a task argument, so without
this seven runs look alike. When a run ends this hook names its task after its strategy
and protocol (``causal_locomo: cmi (blind)``; the registry name, which ``inspect
eval-retry`` and the report go by, stays ``causal_locomo``) and adds tags: the strategy,
the protocol, the dataset when it is not the release, and every solver argument the user
set (``ablation=no_perturb``). ``cmi-inspect run`` names its tasks the same way before they
start, so that ``eval_set`` pairs each task with its log on a rerun, and while it runs has
Inspect name the log files after the registry name instead (``plain_file_names``), so that
no file name carries the label's spaces and parentheses.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from inspect_ai.hooks import Hooks, TaskEnd
from inspect_ai.log import EvalPlan, EvalSpec, read_eval_log_async, write_eval_log_async

TASK_NAME = "causal_locomo"
FILE_PATTERN_ENV = "INSPECT_EVAL_LOG_FILE_PATTERN"
"""Inspect's pattern for a log file's name after its timestamp (default ``{task}_{id}``)."""
FILE_TASK = TASK_NAME.replace("_", "-")
"""The task as a log file names it: what ``inspect eval cmi_inspect/causal_locomo`` writes."""


GUARDED = " + guard"
"""How a label says that a guard filtered the strategy's picks (``-S guard=evidence``)."""
ISOLATED = " + isolated"
"""How a label says that the strategy chose in a sandbox (``-S isolate=true``)."""


def solver_label(solver: str, passed: dict[str, Any]) -> str:
    """The solver's name, with the CMI ablation when it is not the full method and every
    other solver argument the user set, and `` + guard`` for a guarded one:
    ``cmi[utility_only, budget=1]``, ``vector_memory[embedder=hashing]``, ``vector_memory
    + guard``. Runs with different arguments stay apart."""
    name = solver.split("/")[-1]
    rest = dict(passed)
    if name == "memory_strategy":  # any strategy by name: the run is that strategy's
        name = str(rest.pop("strategy", name))
    ablation = rest.pop("ablation", "full")
    guard = str(rest.pop("guard", "none"))
    isolated = str(rest.pop("isolate", False)).lower() in ("true", "1", "yes")
    parts = [str(ablation)] if name == "cmi" and ablation != "full" else []
    parts += [f"{k}={v}" for k, v in sorted(rest.items())]
    label = f"{name}[{', '.join(parts)}]" if parts else name
    if guard != "none":
        label += GUARDED if guard == "evidence" else f"{GUARDED}={guard}"
    return label + (ISOLATED if isolated else "")


def strategy_of(label: str) -> str:
    """The strategy a label names, without its arguments or guard."""
    return label.split("[")[0].split(GUARDED)[0].split(ISOLATED)[0]


def strategy_label(plan: EvalPlan) -> str:
    """``solver_label`` of a logged run's plan."""
    step = plan.steps[-1]
    return solver_label(step.solver, step.params_passed or {})


def run_name(solver: str, passed: dict[str, Any], task_args: dict[str, Any]) -> str:
    """``causal_locomo: STRATEGY (protocol[, dataset])``, short enough for View's list (a
    ``data_file`` shows in the task arguments beside it)."""
    where = [str(task_args.get("protocol", "paper"))]
    if not task_args.get("data_file") and task_args.get("dataset", "release") != "release":
        where.append(str(task_args["dataset"]))
    return f"{TASK_NAME}: {solver_label(solver, passed)} ({', '.join(where)})"


@contextmanager
def plain_file_names() -> Iterator[None]:
    """While the block runs, Inspect names a new log file ``TIMESTAMP_causal-locomo_ID.eval``
    whatever its run's label (Inspect writes the task's name where the pattern says
    ``{task}``, and a label holds spaces and parentheses); a pattern of the user's own is
    kept, with ``{task}`` so filled."""
    before = os.environ.get(FILE_PATTERN_ENV)
    os.environ[FILE_PATTERN_ENV] = (before or "{task}_{id}").replace("{task}", FILE_TASK)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(FILE_PATTERN_ENV, None)
        else:
            os.environ[FILE_PATTERN_ENV] = before


def is_causal_locomo(spec: EvalSpec) -> bool:
    """Whether a log's task is this benchmark's, whatever name its run was given."""
    return (spec.task_registry_name or spec.task).split("/")[-1] == TASK_NAME


def run_tags(plan: EvalPlan, task_args: dict[str, Any]) -> list[str]:
    """The strategy, protocol, dataset and solver arguments set, as tags."""
    step = plan.steps[-1]
    tags = [step.solver.split("/")[-1], f"protocol={task_args.get('protocol', 'paper')}"]
    if task_args.get("dataset", "release") != "release":
        tags.append(f"dataset={task_args['dataset']}")
    if task_args.get("data_file"):
        tags.append("data_file")
    tags += [f"{k}={v}" for k, v in sorted((step.params_passed or {}).items())]
    return tags


class RunTags(Hooks):
    """Names and tags each finished run in its log header (Inspect's header-only write);
    ``_registry`` registers it.

    The header is rewritten once the task has ended rather than changed while it runs:
    Inspect keys the log it is writing on the task name, and a hook must not mutate the
    running task's spec.
    """

    async def on_task_end(self, data: TaskEnd) -> None:
        log = data.log
        if not log.location or not is_causal_locomo(log.eval):
            return
        header = await read_eval_log_async(log.location, header_only=True)
        spec, step = header.eval, header.plan.steps[-1]
        task_args = spec.task_args or {}
        name = run_name(step.solver, step.params_passed or {}, task_args)
        tags = [
            *(spec.tags or []),
            *(t for t in run_tags(header.plan, task_args) if t not in (spec.tags or [])),
        ]
        if (spec.task, spec.task_display_name, spec.tags) == (name, name, tags):
            return
        spec.task = spec.task_display_name = name
        spec.tags = tags
        await write_eval_log_async(header, log.location, header_only=True)
