"""``inspect eval tasks/causal_locomo.py --solver NAME`` from a checkout.

A thin shim over the installed package (``cmi_inspect.causal_locomo.task``,
``cmi_inspect.strategies.solvers``): the same task and solvers, under the bare names the
checkout's commands use. Anywhere the
package is installed, ``inspect eval cmi_inspect/causal_locomo --solver cmi_inspect/NAME``
runs the same thing.
"""

from inspect_ai import Task, task

from cmi_inspect.causal_locomo import task as package
from cmi_inspect.strategies.solvers import bare_named

globals().update(bare_named(__name__))  # --solver cmi, vector_memory, ...


@task
def causal_locomo(
    protocol: str = "paper",
    task_families: str | list[str] | None = None,
    data_file: str | None = None,
    dataset: str = "release",
    scoring: str | None = None,
    split: str | None = None,
) -> Task:
    """The Causal-LoCoMo benchmark; the arguments are those of
    ``cmi_inspect.causal_locomo.task.causal_locomo``."""
    return package.causal_locomo(protocol, task_families, data_file, dataset, scoring, split)
