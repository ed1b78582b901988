"""Every memory strategy by name: the built-in ones, and those other packages install.

``STRATEGIES`` holds the built-ins in the paper's Table 1 order (CMI first; its ablations
are ``strategies.cmi.ABLATIONS``), what ``cmi-inspect run`` runs when no strategy is named;
``BASELINES`` the built-in attribution baselines a reviewer names against CMI (ContextCite,
eRAG's leave-one-in), run when named. A package of someone else's adds its own by an entry
point in the group ``cmi_inspect.strategies`` (``NAME = "module:Class"``, the class a
``MemoryStrategy``); ``strategy_class`` finds either kind by name, and the run, the strategy
solvers and the report all go through it."""

from __future__ import annotations

from functools import cache
from importlib.metadata import entry_points

from cmi_inspect.causal_locomo.strategies.base import MemoryStrategy
from cmi_inspect.causal_locomo.strategies.cmi import CMI
from cmi_inspect.causal_locomo.strategies.context_cite import ContextCite
from cmi_inspect.causal_locomo.strategies.full_history import FullHistory
from cmi_inspect.causal_locomo.strategies.graph import GraphMemory
from cmi_inspect.causal_locomo.strategies.leave_one_in import LeaveOneIn
from cmi_inspect.causal_locomo.strategies.no_memory import NoMemory
from cmi_inspect.causal_locomo.strategies.reflection import ReflectionMemory
from cmi_inspect.causal_locomo.strategies.summary import SummaryMemory
from cmi_inspect.causal_locomo.strategies.vector import VectorMemory
from cmi_inspect.errors import UserError

ENTRY_POINT_GROUP = "cmi_inspect.strategies"

STRATEGIES: dict[str, type[MemoryStrategy]] = {
    s.name: s
    for s in (
        CMI,
        ReflectionMemory,
        VectorMemory,
        GraphMemory,
        SummaryMemory,
        FullHistory,
        NoMemory,
    )
}
BASELINES: dict[str, type[MemoryStrategy]] = {s.name: s for s in (ContextCite, LeaveOneIn)}
"""Attribution baselines: built in, run only when named (``--strategies``, ``--solver``)."""
BUILT_IN: dict[str, type[MemoryStrategy]] = {**STRATEGIES, **BASELINES}
"""Every built-in strategy."""


@cache
def installed_strategies() -> dict[str, str]:
    """Strategies other packages install: entry-point name -> ``module:Class`` (not loaded)."""
    return {ep.name: ep.value for ep in entry_points(group=ENTRY_POINT_GROUP)}


def strategy_names() -> list[str]:
    """Every strategy that can run here: the built-ins, then the installed ones."""
    return [*BUILT_IN, *(n for n in sorted(installed_strategies()) if n not in BUILT_IN)]


def strategy_class(name: str) -> type[MemoryStrategy]:
    """The strategy called ``name``: built in, or loaded from its entry point."""
    if name in BUILT_IN:
        return BUILT_IN[name]
    found = next((ep for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.name == name), None)
    if found is None:
        installed = ", ".join(sorted(installed_strategies())) or "none"
        raise UserError(
            f"Unknown strategy {name!r}; built in: {', '.join(BUILT_IN)}; installed: {installed}."
        )
    try:
        loaded = found.load()
    except Exception as ex:  # a broken plugin names itself, not a traceback of ours
        raise UserError(f"Strategy {name!r} ({found.value}) could not be loaded: {ex}") from None
    if not (isinstance(loaded, type) and issubclass(loaded, MemoryStrategy)):
        raise UserError(f"Strategy {name!r} ({found.value}) is not a MemoryStrategy subclass.")
    return loaded
