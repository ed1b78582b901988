"""The benchmark's one tokenisation rule, shared by its scoring and by retrieval."""

from __future__ import annotations

import re

_WORD = re.compile(r"[A-Za-z0-9']+")


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens (``[A-Za-z0-9']+``)."""
    return [t.lower() for t in _WORD.findall(text)]


def word_count(text: str) -> int:
    return len(_WORD.findall(text))
