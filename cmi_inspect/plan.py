"""A run plan: the rows of a run written down before it runs (a pre-registration), each a
strategy with its ``-S`` arguments and the task arguments it adds, on examples listed in a
file; ``cmi-inspect run LOG_DIR --plan FILE`` runs every row into a folder of its own
(``eval_set``, resumable), in the plan's order, and stops at the first row that does not
finish, so that the same command goes on from there.

A row may need a file a later step makes from earlier rows' logs (a selector fitted by
cross-fitting): it names it under ``needs``, relative to the log folder, and its arguments
say ``LOG_DIR/...`` for it; until the file is there the row waits, with one line saying so.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from cmi_inspect.errors import UserError

LOG_DIR = "LOG_DIR/"
"""How a row's argument names a file in the run's log folder."""


class PlanRow(BaseModel):
    """One row: its folder's name, the strategy, its arguments, its own task arguments."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*$")
    strategy: str
    args: dict[str, Any] = {}
    task: dict[str, Any] = {}
    needs: str | None = None
    """A file in the log folder this row waits for (made by a step the plan's text names)."""


class Plan(BaseModel):
    """The rows, the task arguments they share, the examples' file (relative to the plan),
    and the sha256 of the data they were planned on (a row on other data is refused)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    title: str
    task: dict[str, Any]
    examples: str
    rows: list[PlanRow]
    data_sha256: str | None = None


def load_plan(path: Path) -> tuple[Plan, list[str]]:
    """The plan in ``path`` and its example ids, or one line naming what is wrong."""
    try:
        plan = Plan.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except OSError as ex:
        raise UserError(f"--plan {path}: {ex.strerror or ex}.") from None
    except json.JSONDecodeError as ex:
        raise UserError(f"--plan {path}, line {ex.lineno}: not JSON ({ex.msg}).") from None
    except ValidationError as ex:
        error = ex.errors()[0]
        where = ".".join(str(p) for p in error["loc"])
        raise UserError(f"--plan {path}: {where}: {error['msg']}.") from None
    names = [row.name for row in plan.rows]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise UserError(f"--plan {path}: two rows are named {twice[0]!r}; each needs its own.")
    ids_file = path.parent / plan.examples
    try:
        ids = [line.strip() for line in ids_file.read_text(encoding="utf-8").splitlines()]
    except OSError as ex:
        raise UserError(f"--plan {path}: examples {ids_file}: {ex.strerror or ex}.") from None
    return plan, [i for i in ids if i]


def row_args(row: PlanRow, log_dir: str) -> dict[str, Any]:
    """The row's ``-S`` arguments with ``LOG_DIR/...`` read as a path in ``log_dir``."""
    return {
        key: str(Path(log_dir) / value[len(LOG_DIR) :])
        if isinstance(value, str) and value.startswith(LOG_DIR)
        else value
        for key, value in row.args.items()
    }


def waiting(row: PlanRow, log_dir: str) -> bool:
    return row.needs is not None and not (Path(log_dir) / row.needs).is_file()


def run_plan(
    log_dir: str,
    plan_file: Path,
    model: str | None = None,
    model_args: dict[str, Any] | None = None,
    cache: bool = True,
    max_samples: int | None = None,
    timeout: int | None = None,
    max_retries: int | None = None,
    inspect_options: dict[str, Any] | None = None,
) -> list[str]:
    """Run the plan's rows, each into ``log_dir/NAME``; the rows that did not finish, each
    with why (waiting for a file, stopped, or not reached after a row that stopped)."""
    import os
    import sys
    from contextlib import redirect_stdout

    from cmi_inspect.paths import writable_dir
    from cmi_inspect.rows import causal_locomo_task, check_rows, run_plans
    from cmi_inspect.run import (
        DEFAULT_MODEL,
        EVAL_SET_VERDICTS,
        WithoutLines,
        only_run,
        refuse_other_data,
    )
    from cmi_inspect.run_spec import RunSettings

    plan, ids = load_plan(plan_file)
    chosen = model or os.environ.get("INSPECT_EVAL_MODEL") or DEFAULT_MODEL
    ready = [row for row in plan.rows if not waiting(row, log_dir)]
    for row in ready:  # every row's arguments and data, before any row runs
        task_args = {**plan.task, **row.task}
        check_rows([(row.strategy, row_args(row, log_dir))], task_args, chosen, model_args or {})
        data = causal_locomo_task(**task_args)
        digest = str((data.metadata or {})["data_sha256"])
        if plan.data_sha256 and digest != plan.data_sha256:
            raise UserError(f"--plan {plan_file}: row {row.name} reads data with sha256 "
                            f"{digest[:12]}..., not the {plan.data_sha256[:12]}... it was "
                            "planned on.")  # fmt: skip
        refuse_other_data(str(Path(log_dir) / row.name), str(data.version), digest)
    settings = RunSettings(
        model=chosen, model_args=model_args or {}, max_samples=max_samples, timeout=timeout,
        max_retries=max_retries, cache=cache,
        inspect_options={**(inspect_options or {}), "sample_id": ids},
    )  # fmt: skip
    left = [f"{row.name} (waits for {row.needs})" for row in plan.rows if row not in ready]
    with only_run(writable_dir(log_dir, "logs")):
        for n, row in enumerate(ready):
            with redirect_stdout(WithoutLines(sys.stdout, EVAL_SET_VERDICTS)):
                logs = run_plans(str(Path(log_dir) / row.name),
                                 [(row.strategy, row_args(row, log_dir))],
                                 {**plan.task, **row.task}, settings)  # fmt: skip
            if not logs or logs[0].status != "success":
                status = logs[0].status if logs else "stopped"
                rest = [f"{r.name} (not reached)" for r in ready[n + 1 :]]
                return [f"{row.name} ({status})", *rest, *left]
    return left
