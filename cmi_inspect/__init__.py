"""Causal-LoCoMo and Causal Memory Intervention (CMI) for Inspect AI.

The public strategy API, for memory systems of your own (keep these names stable: outside
code depends on them): subclass ``MemoryStrategy`` with a ``name`` and ``async
select(task: MemoryTask) -> Selection``; read ``task.request``, ``task.memories`` (each with
``key``, ``content``, ``timestamp``), ``task.sessions`` and ``task.model``; return
``Selection(picks=[Pick(key=..., score=...)], prompt=...)``, the prompt usually
``memory_prompt(task.request, [texts])``. Expose the class in the entry-point group
``cmi_inspect.strategies``; README, "Evaluate your own memory system".
"""

from cmi_inspect.causal_locomo.prompts import memory_prompt
from cmi_inspect.strategies.base import MemoryStrategy, MemoryTask, Pick, Selection

__all__ = ["MemoryStrategy", "MemoryTask", "Pick", "Selection", "memory_prompt"]
