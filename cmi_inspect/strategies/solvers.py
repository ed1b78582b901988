"""The strategy solvers: one ``@solver`` per built-in memory strategy, and ``memory_strategy``.

A strategy solver runs one memory strategy on each sample (``base.strategy_solver``), the
attribution baselines' too (``BASELINE_SOLVERS``). Each
takes its strategy's ``-S`` arguments, exactly as the strategy declares them
(``strategies.arguments``; ``tests/strategies/test_registry.py`` keeps the two in step),
then ``guard`` (``-S guard=evidence``: the memory guard filters its picks) and ``isolate``
(``-S isolate=true``: its ``select`` in a sandbox, ``isolation``). ``memory_strategy`` runs
any strategy by name, an installed one too. Installed, Inspect registers them as
``cmi_inspect/NAME``; the checkout's ``tasks/causal_locomo.py`` registers them again under
their bare names. Every one is built by ``make_strategy_solver``: the arguments checked, the
strategy built, and what it would read that the protocol hides refused, all before the run
starts, whichever way it was named (``-T strategy=`` or ``--solver``).
"""

from collections.abc import Callable, Mapping
from typing import Any

from inspect_ai.solver import Solver, solver

from cmi_inspect.causal_locomo.built import built_tasks, tag_runs
from cmi_inspect.causal_locomo.protocol import Protocol
from cmi_inspect.errors import UserError, flag
from cmi_inspect.inspect_private import active_model
from cmi_inspect.strategies import BASELINES, STRATEGIES, strategy_class
from cmi_inspect.strategies.arguments import build_strategy, strategy_arguments
from cmi_inspect.strategies.base import MemoryStrategy, strategy_solver
from cmi_inspect.strategies.guard import NO_GUARD, make_guard
from cmi_inspect.strategies.isolation import Isolated

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


def as_given(arguments: dict[str, Any]) -> dict[str, Any]:
    """A strategy solver's arguments as ``-S`` gave them, any ``unknown`` name among them,
    for ``make_strategy_solver`` to check."""
    named = {k: v for k, v in arguments.items() if k != "unknown"}
    return {**named, **arguments.get("unknown", {})}


@solver
def cmi(
    *,
    k: int = 3,
    tau_u: float | None = None,
    tau_s: float | None = None,
    budget: int | None = None,
    prefer: str | None = None,
    ablation: str = "full",
    risk_filter: str | None = None,
    lazy_perturb: bool = False,
    intervention: str | None = None,
    effect: str | None = None,
    conflict_kind: str = "claim",
    conflict_similarity: float = 0.88,
    conflict_overlap: float = 0.5,
    selector: str | None = None,
    embedder: str | None = None,
    guard: str = NO_GUARD,
    isolate: bool = False,
    **unknown: Any,
) -> Solver:
    """Causal Memory Intervention: keep memories that improve the answer, stably.

    What it does unless told otherwise follows the protocol's profile and its preset
    (``strategies.cmi.config``): the ``rule`` (thresholds and a risk filter; paper's) or
    the ``learned`` selector (blind's).

    Args:
        k: Candidates proposed by the hybrid retriever.
        tau_u: The rule's utility threshold (select if utility > tau_u); default 0 under
            paper, 0.05 under blind with ``selector=rule`` (chosen on the development sets).
        tau_s: The rule's stability threshold (select if stability >= tau_s); default 0
            under paper, -1 under blind with ``selector=rule`` (logged, never vetoes).
        budget: Most memories selected (default: k, save 1 for a learned selector that
            keeps its top candidate, as the shipped ones do; the rule and a selector
            that keeps every candidate above its threshold decide how many).
        prefer: Which of the rule's passing candidates fill the budget first: ``utility``
            (highest utility, the reference; default under paper) or ``proposal`` (best
            proposal rank; blind with ``selector=rule``). A learned selector keeps its most
            probable candidates.
        ablation: ``full`` or one of the ablations ``no_perturb``, ``utility_only``,
            ``stability_only``, ``non_causal`` (no intervention: the top candidates the
            risk filter keeps), ``learned_non_causal`` (no intervention: the learned
            selector without the features that read answers), ``oracle`` (see
            ``strategies.cmi.ABLATIONS``).
        risk_filter: ``label`` (drop memories labelled harmful; paper protocol),
            ``evidence`` (drop a memory that conflicts with a candidate the history
            supports better) or ``none``; default: ``label`` under paper, ``none`` with a
            learned selector (it weighs support and conflicts itself), ``evidence`` under
            blind with ``selector=rule``.
        lazy_perturb: Skip a perturbed call when utility already rules the memory out.
        intervention: How interventions are scored: ``gold`` (the paper's: reads the
            gold answer, refused under the blind protocol) or ``evidence`` (agreement
            with the agent's own history, label-free); default: ``gold`` under paper,
            ``evidence`` under blind.
        effect: How answers become a memory's effect: ``answer`` (each context scored
            by its generated answer, the paper's) or ``graded`` (by the expected answer
            score under the model's likelihood of the candidate's answers in each
            context) or ``logprob`` (by the log-probability of the candidate's
            with-memory answer in each context, forced decoding alone: utility and
            stability in nats, so set ``tau_u`` and ``tau_s`` for it; a model without
            forced decoding is refused); default: ``answer``, save ``graded`` under blind
            with ``selector=rule`` (the rule's frozen setting; ``answer`` with
            ``lazy_perturb``, which reads the answer utility). A learned selector reads
            the answers, which neither likelihood effect changes.
        conflict_kind: When the evidence risk filter counts two candidates as versions
            of one claim: ``claim`` (the default: they state the same slot with another
            value, ``strategies.cmi.claims``) or ``topic`` (the relation of earlier figures:
            close in embedding cosine or in shared words).
        conflict_similarity: Under ``topic``, the embedding cosine from which two
            candidates count as versions of one claim (a poison is most often a close
            paraphrase of the memory it distorts); above 1, no pair does.
        conflict_overlap: The share of the slot weight the two memories share (``claim``),
            or under ``topic`` of the shorter memory's content words the other has too
            (``text.word_overlap``), from which they count as versions of one claim (not
            reflection's ``CONFLICT_WORDING_JACCARD``, a Jaccard of wordings without their
            dates and numbers).
        selector: What decides, the preset: ``rule`` (the thresholds above and the risk
            filter; default under paper), ``learned`` (the shipped learned selector, which
            ranks the candidates by their probability of being useful from label-free
            features and keeps the top one above its threshold; default under blind),
            the path of a selector file (``cmi-inspect fit-selector``; one fitted now
            keeps every candidate above its threshold) or of a cross-fit file
            (``--cross-fit``: each sample ranked by the fold that never read its
            conversation, refused where none holds it out), or ``crossfit`` /
            ``crossfit_non_causal`` once they ship. A selector fitted on another model's
            answers gives way, in one logged line, to the learned non_causal one; a
            cross-fitted one is refused before the run.
        embedder: Embedder for the proposal score (``e5``, ``hashing`` or ``openai``);
            default: ``hashing`` under paper (the reproduction's exact selections), ``e5``
            under blind.
        guard: ``evidence``: the memory guard filters its picks; ``none`` (the default).
        isolate: Run its ``select`` in a sandboxed process of its own.
        **unknown: Refused, in one line naming every argument it takes.
    """
    return make_strategy_solver(STRATEGIES["cmi"], as_given(locals()))


@solver
def reflection_memory(
    *, top_k: int = 3, guard: str = NO_GUARD, isolate: bool = False, **unknown: Any
) -> Solver:
    """Answer from the top-k reflections on the bank, by bag-of-words score.

    Args:
        top_k: Reflections (and so source memories) to select.
        guard: ``evidence``: the memory guard filters its picks; ``none`` (the default).
        isolate: Run its ``select`` in a sandboxed process of its own.
        **unknown: Refused, in one line naming every argument it takes.
    """
    return make_strategy_solver(STRATEGIES["reflection_memory"], as_given(locals()))


@solver
def vector_memory(
    *,
    top_k: int = 3,
    embedder: str = "e5",
    guard: str = NO_GUARD,
    isolate: bool = False,
    **unknown: Any,
) -> Solver:
    """Answer from the top-k memories by embedding cosine similarity.

    Args:
        top_k: Memories to select.
        embedder: ``e5`` (multilingual-e5-small, embedded, offline), ``hashing``
            (character n-grams, no model) or ``openai`` (text-embedding-3-large).
        guard: ``evidence``: the memory guard filters its picks; ``none`` (the default).
        isolate: Run its ``select`` in a sandboxed process of its own.
        **unknown: Refused, in one line naming every argument it takes.
    """
    return make_strategy_solver(STRATEGIES["vector_memory"], as_given(locals()))


@solver
def graph_memory(
    *, top_k: int = 3, guard: str = NO_GUARD, isolate: bool = False, **unknown: Any
) -> Solver:
    """Answer from the top-k memories of the memory / scope / concept graph.

    Args:
        top_k: Memories to select.
        guard: ``evidence``: the memory guard filters its picks; ``none`` (the default).
        isolate: Run its ``select`` in a sandboxed process of its own.
        **unknown: Refused, in one line naming every argument it takes.
    """
    return make_strategy_solver(STRATEGIES["graph_memory"], as_given(locals()))


@solver
def summary_memory(
    *, mode: str = "llm", guard: str = NO_GUARD, isolate: bool = False, **unknown: Any
) -> Solver:
    """Answer from one summary of the bank.

    Args:
        mode: ``llm`` (written by the ``summarizer`` role, else the response model; a bank
            too large for one request is summarised in chunks) or ``concat`` (the reference
            code's first eight memories joined).
        guard: ``evidence``: the memory guard filters its picks; ``none`` (the default).
        isolate: Run its ``select`` in a sandboxed process of its own.
        **unknown: Refused, in one line naming every argument it takes.
    """
    return make_strategy_solver(STRATEGIES["summary_memory"], as_given(locals()))


@solver
def full_history(*, guard: str = NO_GUARD, isolate: bool = False, **unknown: Any) -> Solver:
    """Answer from all past sessions (most recent that fit the context window).

    Args:
        guard: ``evidence``: the memory guard filters its picks; ``none`` (the default).
        isolate: Run its ``select`` in a sandboxed process of its own.
        **unknown: Refused, in one line naming every argument it takes.
    """
    return make_strategy_solver(STRATEGIES["full_history"], as_given(locals()))


@solver
def no_memory(*, guard: str = NO_GUARD, isolate: bool = False, **unknown: Any) -> Solver:
    """Answer from the request alone.

    Args:
        guard: ``evidence``: the memory guard filters its picks; ``none`` (the default).
        isolate: Run its ``select`` in a sandboxed process of its own.
        **unknown: Refused, in one line naming every argument it takes.
    """
    return make_strategy_solver(STRATEGIES["no_memory"], as_given(locals()))


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


@solver
def context_cite(
    *,
    k: int = 3,
    ablations: int = 16,
    threshold: float | str = 0.0,
    alpha: float = 0.01,
    embedder: str | None = None,
    guard: str = NO_GUARD,
    isolate: bool = False,
    **unknown: Any,
) -> Solver:
    """ContextCite over CMI's candidates: keep those the answer is attributed to.

    The answer given with every candidate is scored, by forced decoding, in contexts that
    ablate random subsets of them; a LASSO of its log-probability on the inclusion mask
    gives each candidate's attribution. Needs forced decoding (``gguf/`` models) and the
    ``fit`` extra. ``ablations``, ``threshold`` and ``alpha`` are not tuned: choose them
    on development data (XL's dev split).

    Args:
        k: Candidates proposed, by CMI's proposal (its retriever and weights).
        ablations: Ablated contexts the surrogate is fitted on, each candidate kept with
            probability 1/2; with no more than that many subsets (2^k), every subset once.
        threshold: Kept: a candidate whose attribution (nats of the answer's
            log-probability) is above it; at least 0. Or a file of thresholds cross-fitted
            by conversation (``cmi-inspect fit-threshold``): each sample's fold's.
        alpha: The LASSO's penalty (scikit-learn's ``Lasso``), positive.
        embedder: The proposal's embedder (``e5``, ``hashing`` or ``openai``); default:
            CMI's under the protocol (``hashing`` under paper, ``e5`` under blind).
        guard: ``evidence``: the memory guard filters its picks; ``none`` (the default).
        isolate: Run its ``select`` in a sandboxed process of its own.
        **unknown: Refused, in one line naming every argument it takes.
    """
    return make_strategy_solver(BASELINES["context_cite"], as_given(locals()))


@solver
def leave_one_in(
    *,
    k: int = 3,
    threshold: float | str = 0.0,
    embedder: str | None = None,
    guard: str = NO_GUARD,
    isolate: bool = False,
    **unknown: Any,
) -> Solver:
    """eRAG's leave-one-in utility over CMI's candidates: keep those that help alone.

    Each candidate's utility is the log-probability, by forced decoding, of the answer given
    with every candidate, with that candidate alone in the context over with no memory.
    Needs forced decoding (``gguf/`` models). ``threshold`` is not tuned: choose it on
    development data (XL's dev split).

    Args:
        k: Candidates proposed, by CMI's proposal (its retriever and weights).
        threshold: Kept: a candidate whose utility (nats) is above it; at least 0. Or a
            file of thresholds cross-fitted by conversation (``cmi-inspect fit-threshold``).
        embedder: The proposal's embedder (``e5``, ``hashing`` or ``openai``); default:
            CMI's under the protocol (``hashing`` under paper, ``e5`` under blind).
        guard: ``evidence``: the memory guard filters its picks; ``none`` (the default).
        isolate: Run its ``select`` in a sandboxed process of its own.
        **unknown: Refused, in one line naming every argument it takes.
    """
    return make_strategy_solver(BASELINES["leave_one_in"], as_given(locals()))


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
