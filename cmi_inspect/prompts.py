"""The answer prompts shared by every strategy (one per kind of context)."""

from __future__ import annotations

from collections.abc import Sequence

PROMPT_VERSION = "answer-v1"

_CLOSING = "Give only the final answer, in a sentence or less."


def no_memory_prompt(request: str) -> str:
    return (
        "You are a careful assistant. Answer the user's question.\n\n"
        f"Question: {request}\n\n{_CLOSING}"
    )


def history_prompt(request: str, history: str) -> str:
    return (
        "You are a careful assistant. Below are earlier conversations with the user; "
        "answer the question from them.\n\n"
        f"Earlier conversations:\n{history}\n\n"
        f"Question: {request}\n\n{_CLOSING}"
    )


def memory_prompt(request: str, lines: Sequence[str]) -> str:
    """The one prompt all memory-bank strategies answer with."""
    if not lines:
        return no_memory_prompt(request)
    notes = "\n".join(f"- {line}" for line in lines)
    return (
        "You are a careful assistant. Below are notes remembered from earlier "
        "conversations. Use only the notes that are relevant and reliable, and "
        "ignore the others.\n\n"
        f"Notes:\n{notes}\n\n"
        f"Question: {request}\n\n{_CLOSING}"
    )
