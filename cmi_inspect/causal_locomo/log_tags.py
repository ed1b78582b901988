"""How a Causal-LoCoMo run is named where Inspect View's log list shows it.

Inspect View lists logs by task name, display name, model, task arguments and tags. Every
run here is the one task ``causal_locomo``; a run whose strategy is the task's own
(``-T strategy=NAME``, as ``cmi-inspect run`` runs every row) is displayed after its
strategy, the solver arguments set, its protocol and the dataset when it is not the release
(``causal_locomo: cmi[no_perturb] (blind, xl)``, ``run_name``) and tagged with the same
label (``cmi[no_perturb] (blind, xl)``, ``run_tags``), both set when the task is made; a run of
``--solver NAME`` is tagged so by its solver, built next (``built``). No log header is
rewritten afterwards. The report names a row by its plan (``strategy_label``). A run's own
page lists its samples with the columns ``VIEWER`` names.
"""

from __future__ import annotations

from typing import Any

from inspect_ai.log import EvalPlan, EvalSpec
from inspect_ai.viewer import SampleScoreView, TaskSamplesColumn, TaskSamplesView, ViewerConfig

TASK_NAME = "causal_locomo"

VIEWER = ViewerConfig(
    task_samples_view=TaskSamplesView(
        name="answers and selections",
        columns=[
            *(TaskSamplesColumn(id=c) for c in ("sampleStatus", "sampleId", "input", "target")),
            TaskSamplesColumn(id="answer"),
            TaskSamplesColumn.score("task_score", "score"),
            TaskSamplesColumn.score("task_score", "success"),
            *(
                TaskSamplesColumn.score("memory_selection", key)
                for key in ("useful_f1", "poison_adoption", "n_selected")
            ),
            *(TaskSamplesColumn(id=c) for c in ("tokens", "duration", "error")),
            # the other figures, a click away under View's Columns menu
            *(
                TaskSamplesColumn.score("task_score", key, visible=False)
                for key in ("deterministic", "judge", "judge_error", "hedged", "negated")
            ),
            *(
                TaskSamplesColumn.score("memory_selection", key, visible=False)
                for key in ("recall", "precision", "bad_rejection", "f1_at_1", "f1_at_3")
            ),
        ],
    ),
    sample_score_view=SampleScoreView(default="grid"),
)
"""How View lays out a run (``Task(viewer=)``): its sample list shows the question, the
expected answers (the target), the answer, the task score, success and the selection's
headline figures, the others hidden; a sample's scores come as a grid. ``ViewerConfig`` has
no place for a table of one's own, so the per-memory decision table stays in
``memory_selection``'s explanation, which View renders as Markdown on each sample's Scoring
tab."""


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


def data_tags(task_args: dict[str, Any]) -> list[str]:
    """What a run read, beyond the release: ``dataset=xl`` or ``data_file``, and
    ``bank_size=N`` when banks were drawn down."""
    tags = []
    if task_args.get("data_file"):
        tags.append("data_file")
    elif task_args.get("dataset", "release") != "release":
        tags.append(f"dataset={task_args['dataset']}")
    if task_args.get("bank_size"):
        tags.append(f"bank_size={task_args['bank_size']}")
    return tags


def run_label(solver: str, passed: dict[str, Any], task_args: dict[str, Any]) -> str:
    """``STRATEGY[ARGUMENTS] (protocol[, dataset ...])``, short enough for View's list (a
    ``data_file`` shows in the task arguments beside it)."""
    where = [str(task_args.get("protocol", "paper"))]
    where += [
        t.split("=", 1)[-1] if t.startswith("dataset=") else t
        for t in data_tags(task_args)
        if t != "data_file"
    ]
    return f"{solver_label(solver, passed)} ({', '.join(where)})"


def run_name(solver: str, passed: dict[str, Any], task_args: dict[str, Any]) -> str:
    """``causal_locomo: `` and the ``run_label``: the run's display name."""
    return f"{TASK_NAME}: {run_label(solver, passed, task_args)}"


def is_causal_locomo(spec: EvalSpec) -> bool:
    """Whether a log's task is this benchmark's, whatever name its run was given."""
    return (spec.task_registry_name or spec.task).split("/")[-1] == TASK_NAME


def run_tags(strategy: str, passed: dict[str, Any], task_args: dict[str, Any]) -> list[str]:
    """One tag, the ``run_label``: View's list shows a run's tags in a narrow column, in no
    fixed order (Inspect merges them as a set), so one tag that starts with the strategy is
    what it reliably shows."""
    return [run_label(strategy, passed, task_args)]
