"""One ``@solver`` per memory strategy; arguments are passed with ``-S name=value``.

Registered as ``cmi_inspect/NAME`` (Inspect namespaces what an installed package
registers); ``tasks/causal_locomo.py`` in a checkout adds the bare names ``--solver NAME``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from inspect_ai.solver import Solver, solver

from cmi_inspect.errors import UserError
from cmi_inspect.protocol import BUILT_TASKS
from cmi_inspect.retrieval import make_embedder
from cmi_inspect.strategies import strategy_class
from cmi_inspect.strategies.base import strategy_solver
from cmi_inspect.strategies.cmi import CMI, CMIConfig, injected_scorer
from cmi_inspect.strategies.full_history import FullHistory
from cmi_inspect.strategies.graph import GraphMemory
from cmi_inspect.strategies.no_memory import NoMemory
from cmi_inspect.strategies.reflection import ReflectionMemory
from cmi_inspect.strategies.summary import SummaryMemory
from cmi_inspect.strategies.vector import VectorMemory


@solver
def no_memory() -> Solver:
    """Answer from the request alone."""
    return strategy_solver(NoMemory())


@solver
def full_history() -> Solver:
    """Answer from all past sessions (most recent that fit the context window)."""
    return strategy_solver(FullHistory())


@solver
def summary_memory(mode: str = "llm") -> Solver:
    """Answer from one summary of the bank.

    Args:
        mode: ``llm`` (written by the ``summarizer`` role, else the response model)
            or ``concat`` (the reference code's first eight memories joined).
    """
    return strategy_solver(SummaryMemory(mode))


@solver
def vector_memory(top_k: int = 3, embedder: str = "e5") -> Solver:
    """Answer from the top-k memories by embedding cosine similarity.

    Args:
        top_k: Memories to select.
        embedder: ``e5`` (multilingual-e5-small, embedded, offline), ``hashing``
            (character n-grams, no model) or ``openai`` (text-embedding-3-large).
    """
    return strategy_solver(VectorMemory(make_embedder(embedder), top_k))


@solver
def graph_memory(top_k: int = 3) -> Solver:
    """Answer from the top-k memories of the memory / scope / concept graph.

    Args:
        top_k: Memories to select.
    """
    return strategy_solver(GraphMemory(top_k))


@solver
def reflection_memory(top_k: int = 3) -> Solver:
    """Answer from the top-k reflections on the bank, by bag-of-words score.

    Args:
        top_k: Reflections (and so source memories) to select.
    """
    return strategy_solver(ReflectionMemory(top_k))


@solver
def cmi(
    k: int = 3,
    tau_u: float | None = None,
    tau_s: float | None = None,
    budget: int | None = None,
    prefer: str | None = None,
    ablation: str = "full",
    risk_filter: str | None = None,
    lazy_perturb: bool = False,
    embedder: str | None = None,
    intervention: str | None = None,
    effect: str | None = None,
) -> Solver:
    """Causal Memory Intervention: keep memories that improve the answer, stably.

    Args:
        k: Candidates proposed by the hybrid retriever.
        tau_u: Utility threshold (select if utility > tau_u); default 0 under paper,
            0.05 under blind (chosen on the development sets).
        tau_s: Stability threshold (select if stability >= tau_s); default 0 under
            paper, -1 under blind (stability is logged but never vetoes).
        budget: Most memories selected (default: k under paper, 1 under blind).
        prefer: Which passing candidates fill the budget first: ``utility`` (highest
            utility, the reference; default under paper) or ``proposal`` (best proposal
            rank; default under blind).
        ablation: ``full`` or one of the ablations ``no_perturb``, ``utility_only``,
            ``stability_only``, ``non_causal`` (no intervention: the top candidates the
            risk filter keeps), ``oracle`` (see ``ABLATIONS``).
        risk_filter: ``label`` (drop memories labelled harmful; paper protocol),
            ``evidence`` (drop a memory that conflicts with a candidate the history
            supports better) or ``none``; default: ``label`` under paper, ``evidence``
            under blind.
        lazy_perturb: Skip a perturbed call when utility already rules the memory out.
        embedder: Embedder for the proposal score (``e5``, ``hashing`` or ``openai``);
            default: ``hashing`` under paper (the reproduction's exact selections), ``e5``
            under blind.
        intervention: How interventions are scored: ``gold`` (the paper's: reads the
            gold answer, refused under the blind protocol) or ``evidence`` (agreement
            with the agent's own history, label-free); default: ``gold`` under paper,
            ``evidence`` under blind.
        effect: How answers become a memory's effect: ``answer`` (each context scored
            by its generated answer, the paper's) or ``graded`` (by the expected answer
            score under the model's likelihood of the candidate's answers in each
            context); default: ``answer`` under paper, ``graded`` under blind
            (``answer`` with ``lazy_perturb``, which reads the answer utility).
    """
    config = CMIConfig(
        k=k,
        tau_u=tau_u,
        tau_s=tau_s,
        budget=budget,
        prefer=prefer,
        ablation=ablation,
        risk_filter=risk_filter,
        lazy_perturb=lazy_perturb,
        intervention=intervention,
        effect=effect,
    )
    strategy = CMI(make_embedder(embedder) if embedder else None, config)
    protocol = BUILT_TASKS.for_solver()
    if protocol is not None:
        strategy.check_protocol(protocol)
    return strategy_solver(strategy, injected_scorer(intervention))


SOLVERS: dict[str, Callable[..., Solver]] = {
    "no_memory": no_memory,
    "full_history": full_history,
    "summary_memory": summary_memory,
    "vector_memory": vector_memory,
    "graph_memory": graph_memory,
    "reflection_memory": reflection_memory,
    "cmi": cmi,
}
"""The package's solver factory for each built-in strategy, by the strategy's name."""


def bare_named(module: str) -> dict[str, Callable[..., Solver]]:
    """Each built-in solver registered again under its bare name, on behalf of ``module``.

    Inspect namespaces what an installed package registers (``cmi_inspect/cmi``) by the
    module that defines it, so a checkout's task file (``tasks/causal_locomo.py``) calls
    this to give ``--solver cmi`` its bare name: the same factory, signature and docs.
    """
    factories = {**SOLVERS, "memory_strategy": memory_strategy}
    return {name: _alias(name, factory, module) for name, factory in factories.items()}


def _alias(name: str, factory: Callable[..., Solver], module: str) -> Callable[..., Solver]:
    raw = factory.__wrapped__  # type: ignore[attr-defined]  # @solver keeps it (functools.wraps)

    def alias(*args: Any, **kwargs: Any) -> Solver:
        return raw(*args, **kwargs)

    functools.update_wrapper(alias, raw)
    alias.__module__ = module
    return solver(name=name)(alias)


@solver
def memory_strategy(strategy: str, **kwargs: Any) -> Solver:
    """Any strategy by name: a built-in one, or one another package installs (entry point
    group ``cmi_inspect.strategies``), built with the other ``-S`` arguments.

    Args:
        strategy: The strategy's name (``cmi-inspect run --help`` lists them).
        **kwargs: The strategy's own arguments, passed to its constructor.
    """
    if strategy in SOLVERS:
        return SOLVERS[strategy](**kwargs)
    cls = strategy_class(strategy)
    try:
        instance = cls(**kwargs)
    except UserError:  # the strategy's own one-line message
        raise
    except (TypeError, ValueError) as ex:
        raise UserError(f"Strategy {strategy!r} does not take these -S arguments: {ex}") from None
    return strategy_solver(instance)
