"""One ``@solver`` per memory strategy; arguments are passed with ``-S name=value``."""

from __future__ import annotations

from inspect_ai.solver import Solver, solver

from cmi_inspect.retrieval import make_embedder
from cmi_inspect.strategies.base import strategy_solver
from cmi_inspect.strategies.cmi import CMI, CMIConfig, injected_scorer, refuse_for_blind_tasks
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
    tau_u: float = 0.0,
    tau_s: float = 0.0,
    budget: int | None = None,
    prefer: str = "utility",
    ablation: str = "full",
    risk_filter: str | None = None,
    lazy_perturb: bool = False,
    embedder: str | None = None,
    intervention: str | None = None,
) -> Solver:
    """Causal Memory Intervention: keep memories that improve the answer, stably.

    Args:
        k: Candidates proposed by the hybrid retriever.
        tau_u: Utility threshold (select if utility > tau_u).
        tau_s: Stability threshold (select if stability >= tau_s).
        budget: Most memories selected (default k).
        prefer: Which passing candidates fill the budget first: ``utility`` (highest
            utility, the reference) or ``proposal`` (best proposal rank).
        ablation: ``full`` or one of the ablations ``no_perturb``, ``utility_only``,
            ``stability_only``, ``oracle`` (see ``ABLATIONS``).
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
    )
    refuse_for_blind_tasks(config)
    strategy = CMI(make_embedder(embedder) if embedder else None, config)
    return strategy_solver(strategy, injected_scorer(intervention))
