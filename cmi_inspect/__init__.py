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
"""

from cmi_inspect.causal_locomo.prompts import memory_prompt
from cmi_inspect.guard import MemoryGuard, Session, Verdict
from cmi_inspect.strategies.base import MemoryStrategy, MemoryTask, Pick, Selection

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
