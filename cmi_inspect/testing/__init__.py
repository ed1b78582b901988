"""A conformance check for a memory strategy of your own: ``check_strategy(MyStrategy)``.

It runs the strategy through the real task (Inspect, the harness around ``select``, the
scorers) on the three hand-made examples shipped here, under both protocols, with a
scripted model (``fixed_latency/0``: no key, no network), and checks the contract the
benchmark relies on: every sample is selected for and scored, the picks are keys of the
bank the strategy was shown, none twice, no more than ``max_picks``; a failure names the
strategy; and under the blind protocol nothing reachable from the ``MemoryTask`` the
strategy is handed carries a label, a gold answer, an alias or a memory's real id.
"""

from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import Iterator
from functools import wraps
from pathlib import Path
from types import FunctionType, MethodType, ModuleType
from typing import Any

from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog
from inspect_ai.solver import Solver, solver

from cmi_inspect.causal_locomo.causal_locomo import causal_locomo
from cmi_inspect.causal_locomo.data import ExampleRecord
from cmi_inspect.causal_locomo.data_files import load_records
from cmi_inspect.causal_locomo.protocol import PROTOCOLS, ProtocolName
from cmi_inspect.causal_locomo.strategies.arguments import build_strategy
from cmi_inspect.causal_locomo.strategies.base import (
    MemorySelection,
    MemoryStrategy,
    MemoryTask,
    Selection,
    strategy_solver,
)

SYNTHETIC = Path(__file__).with_name("synthetic.jsonl")
"""Three hand-made examples in the Causal-LoCoMo schema (``datasets/fixtures/build_synthetic.py``
writes them)."""

LABELS = frozenset({"useful", "harmful", "irrelevant"})
SCRIPTED = "fixed_latency/0"
"""The default response model: scripted answers, no key, no network."""


class StrategyCheckError(AssertionError):
    """The strategy broke the contract; the message lists every fault, one a line."""


def check_strategy(
    strategy: type[MemoryStrategy],
    *,
    max_picks: int | None = None,
    model: str = SCRIPTED,
    **arguments: Any,
) -> None:
    """Run ``strategy``, built with ``arguments`` (as ``-S`` would give them), on the shipped
    examples under both protocols; raise ``StrategyCheckError`` naming every fault found.

    Args:
        strategy: The ``MemoryStrategy`` subclass to check.
        max_picks: The most memories it may pick for one request with these arguments
            (None: not checked).
        model: The response model of the runs: the scripted one by default; a strategy
            whose library calls the response model's endpoint (``openai-api/SERVICE/NAME``)
            needs one that answers it, such as a fake endpoint of your tests.
        **arguments: Its arguments, checked against what it declares.
    """
    records = load_records(SYNTHETIC)
    faults: list[str] = []
    for name, protocol in PROTOCOLS.items():
        built = build_strategy(strategy, arguments)
        built.check_protocol(protocol)  # a refusal is the user's one line
        seen = _observe(built)
        faults += [f"{name}: {fault}" for fault in _run(built, name, max_picks, model)]
        if protocol.label_free:
            faults += [f"{name}: {fault}" for task in seen for fault in _leaks(task, records)]
    if faults:
        raise StrategyCheckError(f"strategy {strategy.name!r}:\n" + "\n".join(faults))


def _observe(strategy: MemoryStrategy) -> list[MemoryTask]:
    """Record every ``MemoryTask`` the strategy is handed (its ``select`` wrapped in place)."""
    seen: list[MemoryTask] = []
    select = strategy.select

    @wraps(select)
    async def observed(task: MemoryTask) -> Selection:
        seen.append(task)
        return await select(task)

    strategy.select = observed  # type: ignore[method-assign]
    return seen


@solver(name="checked_strategy")
def checked_strategy(strategy: MemoryStrategy) -> Solver:
    """The strategy solver of an already built strategy, as the benchmark runs every strategy."""
    return strategy_solver(strategy, strategy.answer_scorer())


def _run(
    strategy: MemoryStrategy, protocol: ProtocolName, max_picks: int | None, model: str
) -> list[str]:
    """The faults of one run of ``strategy``, read from its log while the log exists."""
    with tempfile.TemporaryDirectory() as logs:
        [log] = inspect_eval(
            causal_locomo(protocol=protocol, data_file=str(SYNTHETIC)),
            solver=checked_strategy(strategy),
            model=model,
            display="none",
            log_dir=logs,
            fail_on_error=False,
            score_display=False,
        )
        return list(_log_faults(log, strategy.name, max_picks))


def _log_faults(log: EvalLog, name: str, max_picks: int | None) -> Iterator[str]:
    if log.status != "success" and not log.samples:
        yield f"the run ended {log.status}: {log.error.message if log.error else 'no error'}"
    for sample in log.samples or []:
        if sample.error is not None:
            message = sample.error.message
            yield f"{sample.id} failed: {message}"
            if repr(name) not in message and f"strategy {name}" not in message:
                yield f"{sample.id}: its failure does not name the strategy"
            continue
        if not sample.scores:
            yield f"{sample.id} was not scored"
        picked = sample.store_as(MemorySelection).selected
        if max_picks is not None and len(picked) > max_picks:
            yield f"{sample.id}: {len(picked)} picks, more than max_picks={max_picks}"


def _leaks(task: MemoryTask, records: list[ExampleRecord]) -> Iterator[str]:
    """What the blind protocol hides that is reachable from ``task`` anyway."""
    found = set(_strings(task))
    for record in records:
        hidden = {
            "a gold answer": [record.scoring_criteria.expected_answer, record.gold_behavior],
            "an alias": record.scoring_criteria.answer_aliases,
            "a memory's real id": [m.memory_id for m in record.memory_bank],
            "a label": list(LABELS),
        }
        for what, values in hidden.items():
            for value in sorted(found.intersection(values)):
                yield f"{record.example_id}: {what} ({value!r}) is reachable from its MemoryTask"


def _strings(root: object, limit: int = 200_000) -> Iterator[str]:
    """Every string reachable from ``root`` through attributes, items and closures (not
    through modules, classes or a function's globals, which reach everything)."""
    stack: list[object] = [root]
    visited: set[int] = set()
    while stack and len(visited) < limit:
        value = stack.pop()
        if id(value) in visited or isinstance(value, type | ModuleType | int | float | bytes):
            continue
        visited.add(id(value))
        if isinstance(value, str):
            yield value
        else:
            stack.extend(_children(value))


def _children(value: object) -> list[object]:
    if isinstance(value, dict):
        return [*value.keys(), *value.values()]
    if isinstance(value, list | tuple | set | frozenset):
        return list(value)
    if isinstance(value, MethodType):
        return [value.__self__, value.__func__]
    if isinstance(value, FunctionType):
        return [_contents(c) for c in value.__closure__ or ()]
    if dataclasses.is_dataclass(value):
        return [getattr(value, f.name, None) for f in dataclasses.fields(value)]
    slots = [getattr(value, s) for s in getattr(type(value), "__slots__", ()) if hasattr(value, s)]
    return [*slots, *getattr(value, "__dict__", {}).values()]


def _contents(cell: Any) -> object:
    try:
        return cell.cell_contents
    except ValueError:  # a cell not yet assigned
        return None


__all__ = ["SYNTHETIC", "StrategyCheckError", "check_strategy"]
