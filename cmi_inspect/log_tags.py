"""Tags that name each Causal-LoCoMo run's strategy in the log, so Inspect View's log list shows it.

Inspect View lists logs by task name, model, task arguments and tags. Every
run here is the one task ``causal_locomo``, and ``--solver NAME`` is not a
task argument, so without this seven runs look alike. At the start of each
run this hook adds the strategy, the protocol, the dataset when it is not the
release, and every solver argument the user set (``ablation=no_perturb``).
"""

from __future__ import annotations

from typing import Any

from inspect_ai.hooks import Hooks, TaskStart, hooks
from inspect_ai.log import EvalPlan

TASK_NAME = "causal_locomo"


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


@hooks(name="cmi_inspect_run_tags", description="Names a Causal-LoCoMo run's strategy in its tags")
class RunTags(Hooks):
    async def on_task_start(self, data: TaskStart) -> None:
        spec = data.spec
        if spec.task.split("/")[-1] != TASK_NAME:
            return
        extra = [t for t in run_tags(data.plan, spec.task_args or {}) if t not in (spec.tags or [])]
        spec.tags = [*(spec.tags or []), *extra]
