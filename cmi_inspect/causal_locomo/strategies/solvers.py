"""The strategy solvers: one ``@solver`` per built-in memory strategy, and ``memory_strategy``.

A strategy solver runs one memory strategy on each sample (``base.strategy_solver``), the
attribution baselines' too (``BASELINE_SOLVERS``). Each is made from its strategy's one
declaration (``declared_solver``, ``strategies.arguments``): it takes the strategy's ``-S``
arguments, documented as the strategy documents them, then ``guard`` (``-S guard=evidence``:
the memory guard filters its picks) and ``isolate`` (``-S isolate=true``: its ``select`` in
a sandbox, ``isolation``). ``memory_strategy`` runs any strategy by name, an installed one
too. Installed, Inspect registers them as ``cmi_inspect/NAME``; the checkout's
``tasks/causal_locomo.py`` registers them again under their bare names. Every one is built
by ``make_strategy_solver``: the arguments checked, the strategy built, and what it would
read that the protocol hides refused, all before the run starts, whichever way it was named
(``-T strategy=`` or ``--solver``).
"""

import inspect
import textwrap
from collections.abc import Callable, Mapping
from inspect import Parameter
from typing import Any

from inspect_ai.solver import Solver, solver

from cmi_inspect.causal_locomo.built import built_tasks, tag_runs
from cmi_inspect.causal_locomo.protocol import Protocol
from cmi_inspect.causal_locomo.strategies import BASELINES, STRATEGIES, strategy_class
from cmi_inspect.causal_locomo.strategies.arguments import build_strategy, strategy_arguments
from cmi_inspect.causal_locomo.strategies.base import MemoryStrategy, strategy_solver
from cmi_inspect.causal_locomo.strategies.guard import NO_GUARD, make_guard
from cmi_inspect.causal_locomo.strategies.isolation import Isolated
from cmi_inspect.errors import UserError, flag
from cmi_inspect.inspect_private import active_model

GUARD = "guard"
"""The argument naming a guard (``strategies.guard.GUARDS``), beside a strategy's own."""
ISOLATE = "isolate"
"""The argument that runs the strategy's ``select`` in a sandbox (``isolation``)."""


def make_strategy_solver(
    cls: type[MemoryStrategy], given: Mapping[str, Any], protocol: Protocol | None = None
) -> Solver:
    """The strategy solver of ``cls`` with the arguments ``given``: one line, before the run,
    for an argument it does not take or of the wrong type, for a choice that reads what the
    task's ``protocol`` hides (``-T strategy=``; named apart, ``--solver``, that of each task
    already built, which it tags with its name: ``built``; each sample checks again), and
    for a response model it cannot call (the run's, when one is being set up). ``guard``
    and ``isolate`` are the benchmark's, not the strategy's."""
    for kept in (GUARD, ISOLATE):
        if kept in strategy_arguments(cls).names:
            raise UserError(
                f"Strategy {cls.name!r} declares -S {kept}, a name the benchmark keeps for "
                "itself (the guard of a strategy's picks, its sandbox); rename the argument."
            )
    own = dict(given)
    guard = make_guard(own.pop(GUARD, NO_GUARD))
    isolate = flag(ISOLATE, own.pop(ISOLATE, False))
    strategy = build_strategy(cls, own)
    # named apart (--solver), it is built after the eval's tasks: their protocols
    shown = [b.protocol for b in built_tasks()] if protocol is None else [protocol]
    for each in shown:
        strategy.check_protocol(each)
    model = active_model()
    if model is not None:
        strategy.check_model(model)
    if protocol is None:
        tag_runs(cls.name, arguments_set(cls, given))
    if isolate:
        strategy = Isolated(strategy, own)
    return strategy_solver(strategy, strategy.answer_scorer(), guard)


def arguments_set(cls: type[MemoryStrategy], given: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments of ``given`` that differ from their defaults (a run's tags show them)."""
    defaults = {p.name: p.default for p in strategy_arguments(cls).parameters}
    defaults |= {GUARD: NO_GUARD, ISOLATE: False}
    return {k: v for k, v in given.items() if k not in defaults or defaults[k] != v}


SOLVER_ARGUMENTS = (
    Parameter(GUARD, Parameter.KEYWORD_ONLY, default=NO_GUARD, annotation=str),
    Parameter(ISOLATE, Parameter.KEYWORD_ONLY, default=False, annotation=bool),
)
"""What every strategy solver takes after its strategy's own arguments."""
SOLVER_DOCS = {
    GUARD: "``evidence``: the memory guard filters its picks; ``none`` (the default).",
    ISOLATE: "Run its ``select`` in a sandboxed process of its own.",
    "**unknown": "Refused, in one line naming every argument it takes.",
}


def declared_solver(cls: type[MemoryStrategy]) -> Callable[..., Solver]:
    """The strategy solver of ``cls``, registered under its name: its signature and docstring
    are the strategy's own (``strategies.arguments``), then ``guard`` and ``isolate``; any
    other name is taken, to be refused in one line (not Python's ``TypeError``)."""
    declared = strategy_arguments(cls)

    def factory(**given: Any) -> Solver:
        return make_strategy_solver(cls, given)

    factory.__name__ = factory.__qualname__ = cls.name
    unknown = Parameter("unknown", Parameter.VAR_KEYWORD, annotation=Any)
    parameters = [*declared.parameters, *SOLVER_ARGUMENTS, unknown]
    factory.__signature__ = inspect.Signature(parameters, return_annotation=Solver)  # type: ignore[attr-defined]
    factory.__doc__ = solver_doc(cls, declared.docs)
    return solver(factory)


def solver_doc(cls: type[MemoryStrategy], docs: Mapping[str, str]) -> str:
    """``cls``'s docstring, its ``Args:`` section that of its strategy solver."""
    text = inspect.cleandoc(cls.__doc__ or cls.name)
    described = text.split("\nArgs:\n")[0].rstrip()
    entries = [
        textwrap.fill(
            f"{name}: {doc}", width=92, initial_indent="    ", subsequent_indent="        "
        )
        for name, doc in {**docs, **SOLVER_DOCS}.items()
    ]
    return "\n".join([described, "", "Args:", *entries])


@solver
def memory_strategy(
    strategy: str, *, guard: str = NO_GUARD, isolate: bool = False, **kwargs: Any
) -> Solver:
    """Any strategy by name: a built-in one, or one another package installs (entry point
    group ``cmi_inspect.strategies``), built with the other ``-S`` arguments.

    Args:
        strategy: The strategy's name (``cmi-inspect run --help`` lists them).
        guard: ``evidence``: the memory guard filters its picks; ``none`` (the default).
        isolate: Run its ``select`` in a sandboxed process of its own.
        **kwargs: The strategy's own arguments, checked against what it declares.
    """
    given = {**kwargs, GUARD: guard, ISOLATE: isolate}
    return make_strategy_solver(strategy_class(strategy), given)


cmi = declared_solver(STRATEGIES["cmi"])
reflection_memory = declared_solver(STRATEGIES["reflection_memory"])
vector_memory = declared_solver(STRATEGIES["vector_memory"])
graph_memory = declared_solver(STRATEGIES["graph_memory"])
summary_memory = declared_solver(STRATEGIES["summary_memory"])
full_history = declared_solver(STRATEGIES["full_history"])
no_memory = declared_solver(STRATEGIES["no_memory"])
context_cite = declared_solver(BASELINES["context_cite"])
leave_one_in = declared_solver(BASELINES["leave_one_in"])


STRATEGY_SOLVERS: dict[str, Callable[..., Solver]] = {
    "cmi": cmi,
    "reflection_memory": reflection_memory,
    "vector_memory": vector_memory,
    "graph_memory": graph_memory,
    "summary_memory": summary_memory,
    "full_history": full_history,
    "no_memory": no_memory,
}
"""The strategy solver of each strategy of the paper's table, by the strategy's name."""
BASELINE_SOLVERS: dict[str, Callable[..., Solver]] = {
    "context_cite": context_cite,
    "leave_one_in": leave_one_in,
}
"""The strategy solver of each attribution baseline (``strategies.BASELINES``)."""


def strategy_solver_named(
    strategy: str, args: Mapping[str, Any], protocol: Protocol | None = None
) -> Solver:
    """The strategy solver a task given ``-T strategy=`` runs: a built-in one's own
    (``cmi_inspect/NAME``), else ``memory_strategy`` naming it; with ``protocol``, what it
    would read that the protocol hides is refused first, in one line."""
    if protocol is not None:
        make_strategy_solver(strategy_class(strategy), args, protocol)
    own = {**STRATEGY_SOLVERS, **BASELINE_SOLVERS}
    if strategy in own:
        return own[strategy](**args)
    return memory_strategy(strategy, **args)
