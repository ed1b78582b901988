"""Answer from the raw past sessions; the memories of the sessions the prompt held count as
selected (the whole bank when every session fits).

When the sessions do not fit the response model's context window, the most
recent sessions that fit are kept (found by binary search, a few token counts
per sample) (the newest one cut from its start if even
it alone is too long) and the sample records the truncation; the selection is then the
memories dated at or after the oldest session kept, not the whole bank.
"""

from __future__ import annotations

from inspect_ai.model import ChatMessageUser, Model, get_model_info
from pydantic import BaseModel

from cmi_inspect.causal_locomo.prompts import history_prompt
from cmi_inspect.causal_locomo.strategies.base import MemoryStrategy, MemoryTask, Pick, Selection

FALLBACK_CONTEXT = 128_000
"""Window assumed for a model Inspect has no information about."""
ANSWER_RESERVE = 160
"""Tokens kept free for the answer and the chat template."""


def window(model: Model, max_tokens: int | None = None) -> int:
    """Tokens a prompt to ``model`` may take: its context window less what its answer
    (``max_tokens``, else the model's own setting) and the chat template need."""
    info = get_model_info(model)
    context = info.context_length if info and info.context_length else FALLBACK_CONTEXT
    answer = max_tokens or model.config.max_tokens or model.api.max_tokens() or 0
    return context - max(ANSWER_RESERVE, answer + 32)


async def fits(model: Model, prompt: str, budget: int) -> bool:
    """Whether ``prompt`` takes at most ``budget`` tokens of ``model``."""
    # a token is at least one character, so short prompts need no tokenizer
    if len(prompt) <= budget:
        return True
    return await model.count_tokens([ChatMessageUser(content=prompt)]) <= budget


class HistoryWindow(BaseModel):
    """Which sessions fitted the response model's window."""

    sessions_total: int
    sessions_kept: int
    truncated: bool
    clipped_chars: int
    token_budget: int


async def fit_history(
    model: Model, request: str, texts: list[str], budget: int
) -> tuple[str, HistoryWindow]:
    """The history prompt with the most recent sessions whose prompt fits ``budget`` tokens
    of ``model`` (the newest session cut from its start if even it alone is too long)."""

    def recent(n: int) -> str:
        return history_prompt(request, "\n\n".join(texts[len(texts) - n :]))

    # fewer sessions never make a longer prompt: binary-search the most that fit
    lo, hi = 1, len(texts)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if await fits(model, recent(mid), budget) else (lo, mid - 1)
    kept = hi
    prompt = recent(kept)
    clipped_chars = 0
    newest = texts[-1] if texts else ""
    while newest and not await fits(model, prompt, budget):
        cut = max(len(newest) // 10, 1)
        newest, clipped_chars = newest[cut:], clipped_chars + cut
        prompt = history_prompt(request, newest)
    window = HistoryWindow(
        sessions_total=len(texts),
        sessions_kept=kept,
        truncated=kept < len(texts) or clipped_chars > 0,
        clipped_chars=clipped_chars,
        token_budget=budget,
    )
    return prompt, window


class FullHistory(MemoryStrategy):
    """Answer from all past sessions (most recent that fit the context window)."""

    name = "full_history"

    async def select(self, task: MemoryTask) -> Selection:
        texts = [s.content for s in task.sessions]
        prompt, details = await fit_history(task.model, task.request, texts, window(task.model))
        oldest = task.sessions[-details.sessions_kept].timestamp if task.sessions else 0
        picks = [Pick(m.key) for m in task.memories if m.timestamp >= oldest]
        return Selection(picks=picks, prompt=prompt, details=details)
