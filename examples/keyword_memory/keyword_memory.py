"""An example of a memory system of someone else's, put through Causal-LoCoMo.

It uses only the public API (``from cmi_inspect import ...``) and is found by its entry
point in ``pyproject.toml``; ``cmi-inspect run LOG_DIR --strategies keyword_memory`` runs it.
It keeps the ``top_k`` memories that share the most words with the request.
"""

from __future__ import annotations

import re

from cmi_inspect import MemoryStrategy, MemoryTask, Pick, Selection, memory_prompt

WORD = re.compile(r"[a-z0-9']+")


def words(text: str) -> set[str]:
    return set(WORD.findall(text.lower()))


class KeywordMemory(MemoryStrategy):
    """The memories sharing most words with the request (``-S top_k=N``, default 2)."""

    name = "keyword_memory"

    def __init__(self, top_k: int = 2, fail: bool = False) -> None:
        self.top_k = int(top_k)
        self.fail = fail in (True, "true", "True", "1")

    async def select(self, task: MemoryTask) -> Selection:
        if self.fail:
            raise RuntimeError("keyword_memory was asked to fail")
        asked = words(task.request)
        ranked = sorted(task.memories, key=lambda m: -len(asked & words(m.content)))
        kept = ranked[: self.top_k]
        picks = [Pick(key=m.key, score=float(len(asked & words(m.content)))) for m in kept]
        return Selection(picks=picks, prompt=memory_prompt(task.request, [m.content for m in kept]))
