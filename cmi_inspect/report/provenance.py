"""How a logged run was made, from its log's header: the ``inspect eval`` command that makes
it again, when it ran, the versions and commit it ran at, and the tokens it spent."""

from __future__ import annotations

import json
import math
import shlex
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from inspect_ai.log import EvalLog

from cmi_inspect.causal_locomo.log_tags import TASK_NAME

PACKAGE = "cmi-inspect"
"""This package's distribution name, as a log's ``packages`` records its version."""


@dataclass(frozen=True)
class Provenance:
    """How a run can be made again and what made it, from its log's header."""

    command: str
    """The ``inspect eval`` command that runs it again (``command_of``)."""
    started: str
    completed: str
    inspect_ai: str
    """The versions of Inspect and of this package that ran it."""
    package: str
    revision: str
    """The git commit it ran at (``+dirty`` with uncommitted changes), when in a checkout."""
    task_version: str
    tokens: dict[str, tuple[int, int]]
    """Input and output tokens by model, the grader's included."""
    cost: float | None = None
    """What the calls cost, where the provider reports it."""


def wall_clock(log: EvalLog) -> float:
    """Seconds from the log's start to its completion (nan when it records neither)."""
    start, end = log.stats.started_at, log.stats.completed_at
    if not start or not end:
        return math.nan
    return (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds()


def _argument(value: Any) -> str:
    """A task, solver or model argument as a command line writes it."""
    if isinstance(value, list | tuple):
        return ",".join(str(v) for v in value)
    if isinstance(value, dict):
        return json.dumps(value)  # YAML reads it back, as -T reads every value
    return str(value).lower() if isinstance(value, bool) else str(value)


def _options(flag: str, args: dict[str, Any]) -> list[str]:
    return [
        f"{flag} {shlex.quote(f'{k}={_argument(v)}')}"
        for k, v in args.items()
        if v is not None and v != {}  # an empty mapping is the default it stands for
    ]


def command_of(log: EvalLog) -> str:
    """The ``inspect eval`` command that makes the logged run again: its task, solver and
    their arguments, model, model arguments and roles, sample limit and epochs (however it
    was started, ``cmi-inspect run`` included; settings that change no result, such as the
    cache or timeouts, left out)."""
    spec, step = log.eval, log.plan.steps[-1]
    task = spec.task_file or spec.task_registry_name or TASK_NAME
    task_args = spec.task_args_passed or {}
    words = ["inspect eval", shlex.quote(task)]
    if spec.solver or "strategy" not in task_args:  # else the task names its own (-T strategy=)
        words += ["--solver", shlex.quote(spec.solver or step.solver)]
        words += _options("-S", spec.solver_args_passed or step.params_passed or {})
    words += _options("-T", task_args)
    words += ["--model", shlex.quote(spec.model), *_options("-M", spec.model_args or {})]
    for role, config in (spec.model_roles or {}).items():
        models = ",".join(c.model for c in (config if isinstance(config, list) else [config]))
        words.append(f"--model-role {shlex.quote(f'{role}={models}')}")
    limit = spec.config.limit
    if limit is not None:
        words.append(
            f"--limit {limit[0] + 1}-{limit[1]}"
            if isinstance(limit, tuple | list)
            else f"--limit {limit}"
        )
    if (spec.config.epochs or 1) > 1:
        words.append(f"--epochs {spec.config.epochs}")
    return " ".join(words)


def provenance(log: EvalLog) -> Provenance:
    """What the log says of how its run was made (``Provenance``)."""
    spec, revision = log.eval, log.eval.revision
    usage = log.stats.model_usage
    costs = [u.total_cost for u in usage.values() if u.total_cost is not None]
    return Provenance(
        command=command_of(log),
        started=log.stats.started_at,
        completed=log.stats.completed_at,
        inspect_ai=spec.packages.get("inspect_ai", "not recorded"),
        package=spec.packages.get(PACKAGE, "not recorded"),
        revision=(revision.commit + ("+dirty" if revision.dirty else "")) if revision else "",
        task_version=str(spec.task_version),
        tokens={m: (u.input_tokens, u.output_tokens) for m, u in usage.items()},
        cost=sum(costs) if costs else None,
    )
