"""``inspect eval tasks/causal_locomo.py --solver NAME`` (or ``-T strategy=NAME``) from a checkout.

A thin shim over the installed package (``cmi_inspect.causal_locomo.task``,
``cmi_inspect.strategies.solvers``): the same task and solvers, under the bare names the
checkout's commands use. Anywhere the package is installed, ``inspect eval
cmi_inspect/causal_locomo --solver cmi_inspect/NAME`` runs the same thing.
"""

import functools
from typing import Any

from inspect_ai import Task, task

from cmi_inspect.causal_locomo import task as package
from cmi_inspect.strategies.solvers import bare_named

globals().update(bare_named(__name__))  # --solver cmi, vector_memory, ...


@task
@functools.wraps(package.causal_locomo, assigned=("__doc__",))  # its signature, by __wrapped__
def causal_locomo(**task_args: Any) -> Task:
    return package.causal_locomo(**task_args)
