"""Causal-LoCoMo and Causal Memory Intervention (CMI) for Inspect AI.

The public strategy API, for memory systems of your own (keep these names stable: outside
code depends on them): subclass ``MemoryStrategy`` with a ``name`` and ``async
select(task: MemoryTask) -> Selection``; read ``task.request``, ``task.memories`` (each with
``key``, ``content``, ``timestamp``), ``task.sessions`` and ``task.model``; return
``Selection(picks=[Pick(key=..., score=...)], prompt=...)``, the prompt usually
``memory_prompt(task.request, [texts])``. Expose the class in the entry-point group
``cmi_inspect.strategies``; README, "Evaluate your own memory system".

``MemoryGuard`` (with ``Session`` and ``Verdict``) is the label-free poison filter as a plain
call, for any memory system: README, "A memory guard".

The names load on first use, so that importing one module of the package (its error type,
a strategy's base) loads no other strategy, CMI or their libraries.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cmi_inspect.causal_locomo.prompts import memory_prompt
    from cmi_inspect.causal_locomo.strategies.base import (
        MemoryStrategy,
        MemoryTask,
        Pick,
        Selection,
    )
    from cmi_inspect.causal_locomo.strategies.guard import MemoryGuard, Session, Verdict

_MODULES = {
    "MemoryGuard": "cmi_inspect.causal_locomo.strategies.guard",
    "MemoryStrategy": "cmi_inspect.causal_locomo.strategies.base",
    "MemoryTask": "cmi_inspect.causal_locomo.strategies.base",
    "Pick": "cmi_inspect.causal_locomo.strategies.base",
    "Selection": "cmi_inspect.causal_locomo.strategies.base",
    "Session": "cmi_inspect.causal_locomo.strategies.guard",
    "Verdict": "cmi_inspect.causal_locomo.strategies.guard",
    "memory_prompt": "cmi_inspect.causal_locomo.prompts",
}
"""Each public name's module."""

__all__ = [
    "MemoryGuard",
    "MemoryStrategy",
    "MemoryTask",
    "Pick",
    "Selection",
    "Session",
    "Verdict",
    "memory_prompt",
]


def __getattr__(name: str) -> Any:
    """A public name, imported from its module on first use (PEP 562)."""
    if name not in _MODULES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_MODULES[name]), name)
    globals()[name] = value
    return value
