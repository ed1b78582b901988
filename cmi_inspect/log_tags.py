"""Names each Causal-LoCoMo run's strategy where Inspect View's log list shows it.

Inspect View lists logs by task name, model, task arguments and tags. Every run here is
the one task ``causal_locomo``, and ``--solver NAME`` is not a task argument, so without
this seven runs look alike. At the start of each run this hook sets the task's display
name to the strategy and protocol (``causal_locomo: cmi (blind)``) and adds tags: the
strategy, the protocol, the dataset when it is not the release, and every solver argument
the user set (``ablation=no_perturb``).
"""

from __future__ import annotations

from typing import Any

from inspect_ai.hooks import Hooks, TaskStart, hooks
from inspect_ai.log import EvalPlan

TASK_NAME = "causal_locomo"


def strategy_label(plan: EvalPlan) -> str:
    """The solver's name, with the CMI ablation when it is not the full method and every
    other solver argument the user set: ``cmi[utility_only, budget=1]``,
    ``vector_memory[embedder=hashing]``. Runs with different arguments stay apart."""
    step = plan.steps[-1]
    name = step.solver.split("/")[-1]
    passed = dict(step.params_passed or {})
    ablation = passed.pop("ablation", step.params.get("ablation", "full"))
    parts = [str(ablation)] if name == "cmi" and ablation != "full" else []
    parts += [f"{k}={v}" for k, v in sorted(passed.items())]
    return f"{name}[{', '.join(parts)}]" if parts else name


def display_name(plan: EvalPlan, task_args: dict[str, Any]) -> str:
    """``causal_locomo: STRATEGY (protocol[, dataset])``, short enough for View's list."""
    where = [str(task_args.get("protocol", "paper"))]
    if task_args.get("data_file"):
        where.append("data_file")
    elif task_args.get("dataset", "release") != "release":
        where.append(str(task_args["dataset"]))
    return f"{TASK_NAME}: {strategy_label(plan)} ({', '.join(where)})"


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


@hooks(name="cmi_inspect_run_tags", description="Names a Causal-LoCoMo run's strategy in its log")
class RunTags(Hooks):
    async def on_task_start(self, data: TaskStart) -> None:
        spec = data.spec
        if spec.task.split("/")[-1] != TASK_NAME:
            return
        task_args = spec.task_args or {}
        spec.task_display_name = display_name(data.plan, task_args)
        extra = [t for t in run_tags(data.plan, task_args) if t not in (spec.tags or [])]
        spec.tags = [*(spec.tags or []), *extra]
