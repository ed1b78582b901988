"""Show one synthetic "summary" memory built from the bank; the whole bank counts as selected.

``llm`` (default) has the ``summarizer`` model role, or else the response model,
write the summary; ``concat`` joins the first eight memory contents as the
reference code did.
"""

from __future__ import annotations

from inspect_ai.model import GenerateConfig, get_model
from pydantic import BaseModel

from cmi_inspect.causal_locomo.prompts import memory_prompt
from cmi_inspect.errors import choose
from cmi_inspect.strategies.base import MemoryStrategy, MemoryTask, Pick, Selection

SUMMARY_MODES = ("llm", "concat")
CONCAT_LIMIT = 8
SUMMARY_MAX_TOKENS = 160


def summary_request(lines: list[str]) -> str:
    notes = "\n".join(f"- {line}" for line in lines)
    return (
        "Summarise the notes below in a short paragraph. Keep every name, date, "
        f"number and fact; add nothing.\n\nNotes:\n{notes}\n\nSummary:"
    )


class SummaryDetails(BaseModel):
    mode: str
    summary: str


class SummaryMemory(MemoryStrategy):
    """Answer from one summary of the bank.

    Its ``-S`` arguments are those of its strategy solver, ``strategies.solvers.summary_memory``.
    """

    name = "summary_memory"

    def __init__(self, mode: str = "llm") -> None:
        self.mode = choose("summary mode", mode, SUMMARY_MODES)

    async def select(self, task: MemoryTask) -> Selection:
        if self.mode == "concat":
            summary = " ".join(m.content for m in task.memories[:CONCAT_LIMIT])
        else:
            summarizer = get_model(role="summarizer", default=task.model)
            output = await summarizer.generate(
                summary_request([m.line() for m in task.memories]),
                config=GenerateConfig(max_tokens=SUMMARY_MAX_TOKENS),
            )
            summary = output.completion.strip()
        return Selection(
            picks=[Pick(m.key) for m in task.memories],
            prompt=memory_prompt(task.request, [f"[summary] {summary}"]),
            details=SummaryDetails(mode=self.mode, summary=summary),
        )
