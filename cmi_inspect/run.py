"""Run every strategy on the same samples and model into one log directory.

This is Inspect's ``eval_set``: one task per strategy, all written to
``LOG_DIR``. Run the same command again after an interruption and finished
tasks are kept while unfinished ones resume, reusing their completed samples.
The task and solvers come from the repository's ``tasks/causal_locomo.py``,
so the logs are the same as those of ``inspect eval ... --solver NAME``.
Tasks run one at a time by default, so that each strategy's wall-clock is its
own (a local model serialises every call anyway); raise ``max_tasks`` for a
remote API.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from cmi_inspect.errors import UserError
from cmi_inspect.log_tags import run_name
from cmi_inspect.strategies import STRATEGIES
from cmi_inspect.strategies.cmi import ABLATIONS


def load_task_file(path: Path) -> ModuleType:
    if not path.is_file():
        raise UserError(
            f"No task file at {path}; run from the repository root or pass --task-file."
        )
    spec = importlib.util.spec_from_file_location("causal_locomo_task", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def run_all(
    log_dir: str,
    task_file: Path = Path("tasks/causal_locomo.py"),
    strategies: Sequence[str] = tuple(STRATEGIES),
    ablations: bool = False,
    model: str | None = None,
    limit: int | None = None,
    task_args: dict[str, Any] | None = None,
    model_args: dict[str, Any] | None = None,
    max_samples: int | None = None,
    max_tasks: int = 1,
    timeout: int | None = None,
    max_retries: int | None = None,
    cache: bool = True,
) -> bool:
    """Run the strategies (and CMI's ablations) with ``eval_set``; True when all succeeded.

    With ``cache`` every model call goes through Inspect's model-call cache: the task
    answers at temperature 0, so a prompt asked before (by another strategy, an
    ablation, a rerun) is read back instead of generated again. The cache key holds the
    model's identity (for a local GGUF file, its content hash) and the whole prompt.
    """
    from inspect_ai import eval_set, task_with
    from inspect_ai.model import CachePolicy
    from inspect_ai.util import registry_create

    unknown = sorted(set(strategies) - set(STRATEGIES))
    if unknown:
        raise UserError(f"Unknown strategies {unknown}; choose from {', '.join(STRATEGIES)}.")
    module = load_task_file(task_file)  # registers the solvers under their bare names
    plans: list[tuple[str, dict[str, Any]]] = [(name, {}) for name in strategies]
    if ablations:
        plans += [("cmi", {"ablation": a}) for a in ABLATIONS if a != "full"]
    args = task_args or {}
    # each task named as the hook in log_tags names its log, so eval_set pairs them on a rerun
    tasks = [
        task_with(
            module.causal_locomo(**args),
            solver=registry_create("solver", name, **params),
            name=run_name(name, params, args),
        )
        for name, params in plans
    ]
    # eval_set reads model=None as "no model": leave it out to use INSPECT_EVAL_MODEL
    chosen = {"model": model} if model else {}
    success, _ = eval_set(
        tasks,
        log_dir=log_dir,
        **chosen,  # type: ignore[arg-type]
        model_args=model_args or {},
        limit=limit,
        max_samples=max_samples,
        max_tasks=max_tasks,
        retry_attempts=2,
        retry_on_error=1,
        fail_on_error=0.1,
        timeout=timeout,
        max_retries=max_retries,
        cache=CachePolicy(expiry=None) if cache else None,
    )
    return success
