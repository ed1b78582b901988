"""Answer from the request alone: the floor every memory strategy must beat."""

from __future__ import annotations

from cmi_inspect.causal_locomo.prompts import no_memory_prompt
from cmi_inspect.causal_locomo.strategies.base import MemoryStrategy, MemoryTask, Selection


class NoMemory(MemoryStrategy):
    """Answer from the request alone."""

    name = "no_memory"

    async def select(self, task: MemoryTask) -> Selection:
        return Selection(picks=[], prompt=no_memory_prompt(task.request))
