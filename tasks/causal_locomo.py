"""``inspect eval tasks/causal_locomo.py --solver NAME`` (or ``-T strategy=NAME``) from a checkout.

A thin shim over the package (the eval's folder, ``cmi_inspect/causal_locomo/``): the same
task and strategy solvers, under the bare names the checkout's commands use. Inspect names
what an installed package registers ``cmi_inspect/NAME`` and looks a bare ``--solver NAME``
up only among bare names (and its own), so each strategy solver is registered here again, as
a function of this file: ``--solver cmi`` runs ``cmi_inspect/cmi``'s factory and the log
names it ``cmi``, as typed. Anywhere the package is installed, ``inspect eval
cmi_inspect/causal_locomo --solver cmi_inspect/NAME`` runs the same thing."""

import functools
from collections.abc import Callable
from typing import Any

from inspect_ai import Task, task
from inspect_ai.solver import Solver, solver

from cmi_inspect.causal_locomo import causal_locomo as package_task
from cmi_inspect.causal_locomo.strategies.solvers import (
    BASELINE_SOLVERS,
    STRATEGY_SOLVERS,
    memory_strategy,
)


@task
@functools.wraps(package_task, assigned=("__doc__",))  # its signature, by __wrapped__
def causal_locomo(**task_args: Any) -> Task:
    return package_task(**task_args)


def bare(factory: Callable[..., Solver]) -> Callable[..., Solver]:
    """``factory`` registered under its bare name, with its signature and docstring."""

    @functools.wraps(factory, assigned=("__name__", "__qualname__", "__doc__"))
    def same(*args: Any, **kwargs: Any) -> Solver:
        return factory(*args, **kwargs)

    return solver(same)


for _factory in (*STRATEGY_SOLVERS.values(), *BASELINE_SOLVERS.values(), memory_strategy):
    bare(_factory)  # --solver cmi, vector_memory, ..., context_cite, memory_strategy
