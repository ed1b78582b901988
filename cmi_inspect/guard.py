"""The memory guard's public module: ``MemoryGuard`` (with ``Session`` and ``Verdict``), the
label-free poison filter as a plain call for any memory system, and the names the benchmark
picks a guard by. It is built from CMI's evidence filter, so it lives in
``strategies/guard.py``; ``from cmi_inspect import MemoryGuard`` is the usual import."""

from cmi_inspect.causal_locomo.strategies.guard import (
    CMI_CONFLICTS,
    DEFAULT_CONFLICTS,
    GUARDS,
    NO_GUARD,
    TOPIC_CONFLICTS,
    EvidenceGuard,
    MemoryGuard,
    Session,
    Verdict,
    make_guard,
)

__all__ = [
    "CMI_CONFLICTS",
    "DEFAULT_CONFLICTS",
    "GUARDS",
    "NO_GUARD",
    "TOPIC_CONFLICTS",
    "EvidenceGuard",
    "MemoryGuard",
    "Session",
    "Verdict",
    "make_guard",
]
