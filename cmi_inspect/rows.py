"""How rows of a run are run: the task of each, ``eval_set`` over several, and the rows of
installed strategies, each in a Python process of its own (``run_apart``)."""

from __future__ import annotations

import contextvars
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from inspect_ai import Task
from inspect_ai.log import EvalLog

from cmi_inspect.errors import UserError
from cmi_inspect.run_spec import RowsSpec, RunSettings

CACHE_EXPIRY = "1W"
"""How long ``cmi-inspect run``'s answers stay in Inspect's model-call cache."""
DEFAULT_FAIL_ON_ERROR = 0.1
"""A run fails once this share of its samples have failed (``--fail-on-error``)."""
DEFAULT_RETRY_ON_ERROR = 1
"""Times a failed sample is retried (``--retry-on-error``)."""


def causal_locomo_task(**task_args: Any) -> Task:
    from cmi_inspect.causal_locomo.causal_locomo import causal_locomo

    return causal_locomo(**task_args)


def run_task(name: str, params: dict[str, Any], task_args: dict[str, Any]) -> Task:
    """The task of one row: the strategy as the task's own strategy solver (``-T strategy=``), so
    that the run is named after it, refused before it starts for what its protocol hides,
    and rebuilt by ``inspect eval-retry`` from the task's arguments."""
    from cmi_inspect.causal_locomo.causal_locomo import causal_locomo

    return causal_locomo(**task_args, strategy=name, strategy_args=params)


def check_rows(
    plans: Sequence[tuple[str, dict[str, Any]]],
    task_args: dict[str, Any],
    model: str,
    model_args: dict[str, Any],
) -> None:
    """Build each row's task as the run will, with the run's model active (as it is when
    ``inspect eval`` builds a task), so that a bad argument, or a strategy that cannot call
    that model (``MemoryStrategy.check_model``), is one line before anything runs. A
    ``gguf/`` model is not built for it (its engine is probed and loaded when built), and
    every strategy takes one."""
    from inspect_ai.model import get_model

    from cmi_inspect.inspect_private import set_active_model

    def build() -> None:
        if not model.startswith("gguf/"):
            set_active_model(get_model(model, **model_args))
        for name, params in plans:
            run_task(name, params, task_args)

    contextvars.copy_context().run(build)


def run_plans(
    log_dir: str,
    plans: Sequence[tuple[str, dict[str, Any]]],
    task_args: dict[str, Any],
    settings: RunSettings,
) -> list[EvalLog]:
    """``eval_set`` over the rows ``plans`` into ``log_dir``, beside any other rows' logs."""
    from inspect_ai import eval_set
    from inspect_ai.model import CachePolicy

    tasks = [run_task(name, params, task_args) for name, params in plans]
    # in a context of its own: eval_set leaves its generate config (the cache policy) in
    # the caller's context, where later model calls of the same process would read it
    _, logs = contextvars.copy_context().run(
        eval_set,
        tasks,
        log_dir=log_dir,
        model=settings.model,
        model_args=settings.model_args,
        limit=settings.limit,
        max_samples=settings.max_samples,
        max_tasks=settings.max_tasks,
        retry_attempts=2,
        timeout=settings.timeout,
        time_limit=settings.time_limit,
        max_retries=settings.max_retries,
        # Inspect's default policy, a week, as `inspect eval --cache` makes it: the cache key
        # holds the expiry, so a plain `inspect eval ... --cache` reads these very answers
        cache=CachePolicy(expiry=CACHE_EXPIRY) if settings.cache else None,
        log_dir_allow_dirty=True,  # the rows run apart write beside these
        model_roles=settings.model_roles,
        epochs=settings.epochs,
        tags=settings.tags,
        **{
            "retry_on_error": DEFAULT_RETRY_ON_ERROR,
            "fail_on_error": DEFAULT_FAIL_ON_ERROR,
            **settings.inspect_options,  # --sample-id, --log-level, ... as given
        },
        **settings.config,
    )
    return logs


def run_apart(
    log_dir: str,
    plans: list[tuple[str, dict[str, Any]]],
    task_args: dict[str, Any],
    settings: RunSettings,
    check: bool = False,
) -> None:
    """Run installed strategies' rows in a Python process of their own (``python -m
    cmi_inspect.rows SPEC``), so that nothing one does in its process (patching the scorers,
    say) reaches another row; its log says how it went. With ``check`` the process only
    builds their tasks: a bad argument is the one line it gives, raised here."""
    spec = RowsSpec(
        log_dir=log_dir, plans=plans, task_args=task_args, settings=settings, check=check
    )
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", suffix=".json", delete=False) as file:
        file.write(spec.model_dump_json())
    try:
        done = subprocess.run(
            [sys.executable, "-m", "cmi_inspect.rows", file.name],
            check=False,
            stderr=subprocess.PIPE if check else None,
            text=True,
        )
    finally:
        os.unlink(file.name)
    if check and done.returncode != 0:
        said = (done.stderr or "").strip().splitlines()
        raise UserError(said[-1] if said else f"checking {plans} failed (exit {done.returncode})")


def main(spec_file: str) -> int:
    """Rows run apart (``run_apart``): the spec's plans checked, or run by ``run_plans``."""
    spec = RowsSpec.model_validate_json(Path(spec_file).read_text(encoding="utf-8"))
    try:
        check_rows(spec.plans, spec.task_args, spec.settings.model, spec.settings.model_args)
    except UserError as ex:
        print(str(ex), file=sys.stderr)
        return 2
    if not spec.check:
        run_plans(spec.log_dir, spec.plans, spec.task_args, spec.settings)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
