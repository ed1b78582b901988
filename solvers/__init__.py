"""Inspect solvers for every memory strategy, registered under their bare names.

They live outside the installed package on purpose: Inspect prefixes the
registry names of objects defined inside an installed package
(``cmi_inspect/cmi``), and ``--solver cmi`` only resolves a bare name.
The task file imports this package; each solver is a thin factory over a
strategy in ``cmi_inspect.strategies``.
"""

from solvers.causal_locomo import (
    cmi,
    full_history,
    graph_memory,
    no_memory,
    reflection_memory,
    summary_memory,
    vector_memory,
)

__all__ = [
    "cmi",
    "full_history",
    "graph_memory",
    "no_memory",
    "reflection_memory",
    "summary_memory",
    "vector_memory",
]
