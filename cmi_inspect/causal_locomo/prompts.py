"""The answer prompts shared by every strategy (one per kind of context)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

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


def memory_line(
    key: str,
    content: str,
    scope: str | None = None,
    label: str | None = None,
    said: str | None = None,
) -> str:
    """One memory as a line of a prompt: its key, who said it and when (a turn's), its
    text, and the paper's scope and label."""
    text = f"[{key}] ({said}) {content}" if said else f"[{key}] {content}"
    if scope:
        text += f" [scope: {scope}]"
    if label:
        text += f" [label: {label}]"
    return text


_NOTE_LINE = re.compile(r"^- \[[^\]]+\] (.*?)(?: \[scope: [^\]]*\])?(?: \[label: [^\]]*\])?$", re.M)


def note_contents(prompt: str) -> list[str]:
    """The memory texts of a prompt built by ``memory_prompt``, in order."""
    return _NOTE_LINE.findall(prompt)


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


def prompt_version(*texts: str) -> str:
    """A version string that changes whenever any of the given prompt texts does."""
    return hashlib.sha256("\x00".join(texts).encode()).hexdigest()[:10]


PROMPT_VERSION = "answer-" + prompt_version(
    no_memory_prompt("{request}"),
    history_prompt("{request}", "{history}"),
    memory_prompt("{request}", [memory_line("{key}", "{content}", "{scope}", "{label}")]),
)
"""Changes with the text of any answer prompt; logged as task metadata."""
