"""One ``@solver`` per memory strategy, made from the strategy table; ``-S name=value``.

Each built-in strategy of ``strategies.STRATEGIES`` becomes the solver ``cmi_inspect/NAME``
(Inspect namespaces what an installed package registers), whose signature is the
strategy's arguments (``strategies.arguments``) and whose docstring is the strategy's;
``memory_strategy`` runs any strategy by name, an installed one too. Every solver here is
built by ``strategy_solver_for``: the ``-S`` arguments checked, the strategy built, what
it would read refused when the tasks just built are blind, all before the run starts. Every
solver also takes ``-S guard=evidence`` (``cmi_inspect.guard``), which filters the
strategy's picks; the run is then ``STRATEGY + guard``.
``tasks/causal_locomo.py`` in a checkout registers the same factories under bare names
(``bare_named``).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from typing import Any

from inspect_ai.solver import Solver, solver

from cmi_inspect.causal_locomo.protocol import Protocol
from cmi_inspect.errors import UserError, flag
from cmi_inspect.guard import NO_GUARD, make_guard
from cmi_inspect.inspect_private import active_model
from cmi_inspect.strategies import STRATEGIES, strategy_class
from cmi_inspect.strategies.arguments import build_strategy, strategy_arguments
from cmi_inspect.strategies.base import MemoryStrategy, strategy_solver
from cmi_inspect.strategies.isolation import Isolated


def strategy_solver_for(
    cls: type[MemoryStrategy], given: Mapping[str, Any], protocol: Protocol | None = None
) -> Solver:
    """The solver of strategy ``cls`` with the ``-S`` arguments ``given``: one line, before
    the run, for an argument it does not take or of the wrong type, and, when the task's
    ``protocol`` is known (the task builds its own solver), for a choice that reads what it
    hides (each sample checks that again against its own protocol), and for a response
    model it cannot call (the run's, when one is being set up). ``-S guard`` and ``-S
    isolate`` are the benchmark's, not the strategy's."""
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
    if protocol is not None:
        strategy.check_protocol(protocol)
    model = active_model()
    if model is not None:
        strategy.check_model(model)
    if isolate:
        strategy = Isolated(strategy, own)
    return strategy_solver(strategy, strategy.answer_scorer(), guard)


GUARD = "guard"
"""The solver argument naming a guard (``cmi_inspect.guard.GUARDS``), beside a strategy's own."""
ISOLATE = "isolate"
"""The solver argument that runs the strategy's ``select`` in a sandbox (``isolation``)."""


def solver_signature(cls: type[MemoryStrategy]) -> inspect.Signature:
    """The strategy's arguments, then ``guard``, then ``**kwargs`` for a strategy that takes
    any other name."""
    own = list(strategy_arguments(cls).signature.parameters.values())
    rest = [p for p in own if p.kind is inspect.Parameter.VAR_KEYWORD]
    named = [p for p in own if p.kind is not inspect.Parameter.VAR_KEYWORD]
    guard = inspect.Parameter(
        GUARD, inspect.Parameter.KEYWORD_ONLY, default=NO_GUARD, annotation=str
    )
    isolate = inspect.Parameter(
        ISOLATE, inspect.Parameter.KEYWORD_ONLY, default=False, annotation=bool
    )
    return inspect.Signature([*named, guard, isolate, *rest])


def _strategy_factory(cls: type[MemoryStrategy]) -> Callable[..., Solver]:
    """The solver factory of one strategy: its arguments' signature, its docstring."""

    def factory(**given: Any) -> Solver:
        return strategy_solver_for(cls, given)

    factory.__name__ = factory.__qualname__ = cls.name
    factory.__doc__ = cls.__doc__
    factory.__signature__ = solver_signature(cls)  # type: ignore[attr-defined]
    return factory


def any_strategy(strategy: str, **kwargs: Any) -> Solver:
    """Any strategy by name: a built-in one, or one another package installs (entry point
    group ``cmi_inspect.strategies``), built with the other ``-S`` arguments.

    Args:
        strategy: The strategy's name (``cmi-inspect run --help`` lists them).
        **kwargs: The strategy's own arguments, checked against what it declares, and
            ``guard`` (``evidence``: filter its picks; ``none``, the default).
    """
    return strategy_solver_for(strategy_class(strategy), kwargs)


FACTORIES: dict[str, Callable[..., Solver]] = {
    **{name: _strategy_factory(cls) for name, cls in STRATEGIES.items()},
    "memory_strategy": any_strategy,
}
"""Every solver factory by the name it is registered under."""


def registered(module: str) -> dict[str, Callable[..., Solver]]:
    """Every factory of ``FACTORIES`` as a ``@solver`` defined, for Inspect, in ``module``:
    Inspect names a solver after the package of the module that defines it, so the
    package's are ``cmi_inspect/NAME`` and a checkout's task file gets the bare names."""

    def register(name: str, factory: Callable[..., Solver]) -> Callable[..., Solver]:
        @functools.wraps(factory)  # the signature and docstring
        def named(*args: Any, **kwargs: Any) -> Solver:
            return factory(*args, **kwargs)

        named.__module__ = module
        return solver(name=name)(named)

    return {name: register(name, factory) for name, factory in FACTORIES.items()}


_PACKAGE = registered(__name__)
SOLVERS: dict[str, Callable[..., Solver]] = {name: _PACKAGE[name] for name in STRATEGIES}
"""The package's solver for each built-in strategy, by the strategy's name."""
memory_strategy = _PACKAGE["memory_strategy"]


def bare_named(module: str) -> dict[str, Callable[..., Solver]]:
    """Each solver registered again under its bare name, on behalf of ``module`` (the
    checkout's ``tasks/causal_locomo.py``): the same factories, signatures and docs."""
    return registered(module)


def solver_named(
    strategy: str, args: Mapping[str, Any], protocol: Protocol | None = None
) -> Solver:
    """The solver a task given ``-T strategy=`` runs: a built-in one's own
    (``cmi_inspect/NAME``), else ``memory_strategy`` naming it; with ``protocol``, what it
    would read that the protocol hides is refused first, in one line."""
    if protocol is not None:
        strategy_solver_for(strategy_class(strategy), args, protocol)
    if strategy in SOLVERS:
        return SOLVERS[strategy](**args)
    return memory_strategy(strategy, **args)


def __getattr__(name: str) -> Callable[..., Solver]:
    """The package's solvers by strategy name:
    ``from cmi_inspect.strategies.solvers import cmi``."""
    if name in SOLVERS:
        return SOLVERS[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
