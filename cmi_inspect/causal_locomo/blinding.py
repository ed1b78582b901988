"""Artefact control for the blind protocol: memory text and dates that carry no label.

The release encodes labels outside its label fields (README, "Protocols": the audit): useful
memories end with a sentence that copies the gold answer, and every harmful memory is
dated after the whole history. These pure functions remove both; they run when the
dataset is built, so they may read labels, but their output must not encode them.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

from cmi_inspect.causal_locomo.data import MemoryRecord
from cmi_inspect.text import tokens

# "Resolved temporal answer: X" / "Resolved answer for the current question: X", to the end.
ANSWER_SUFFIX = re.compile(
    r"\s*\bResolved (?:temporal answer|answer for the current question):.*\Z",
    re.DOTALL,
)


def strip_answer_suffix(content: str) -> str:
    """The memory text without its trailing answer sentence; other text is left unchanged."""
    if "Resolved " not in content:  # the pattern's one literal: skip the search (XL banks)
        return content
    return ANSWER_SUFFIX.sub("", content, count=1)


def blind_timestamps(
    example_id: str,
    bank: Sequence[MemoryRecord],
    session_timestamps: Sequence[int],
    keep_dates: bool = False,
) -> dict[str, int]:
    """The timestamp each memory is shown with under blind, by memory id.

    No memory is dated after the history: an agent's memory cannot postdate the
    conversations it came from, and in the release only harmful memories and four useful
    ones were. A harmful memory is redated by ``_harmful_date``, unless ``keep_dates``
    (every memory is dated by the turn it was made from, XL v3's: its date is no
    artefact, and its text says it); every other memory keeps its own date.
    """
    history_end = max(session_timestamps, default=None)
    shown = {m.memory_id: _within_history(m.timestamp, history_end) for m in bank}
    if keep_dates:
        return shown
    for memory in bank:
        if memory.label == "harmful":
            rng = random.Random(f"blind-timestamp/{example_id}/{memory.memory_id}")
            shown[memory.memory_id] = _harmful_date(memory, bank, shown, session_timestamps, rng)
    return shown


def _within_history(timestamp: int, history_end: int | None) -> int:
    return timestamp if history_end is None else min(timestamp, history_end)


def _harmful_date(
    memory: MemoryRecord,
    bank: Sequence[MemoryRecord],
    shown: dict[str, int],
    session_timestamps: Sequence[int],
    rng: random.Random,
) -> int:
    """A date for a harmful memory taken from its own bank, so that it reads like its peers.

    Half the time it is the date of the memory it paraphrases (a poison distorts that
    episode), otherwise the date of a memory drawn from the rest of the bank. Useful
    memories skew late, so copying only the twin would make poison look late next to
    irrelevant memories, and copying only the bank would make it look early next to
    useful ones; the even mix sits between. A bank with no other memory draws a session.
    """
    peers = sorted(
        (m for m in bank if m.memory_id != memory.memory_id and m.label != "harmful"),
        key=lambda m: m.memory_id,
    )
    if not peers:
        return rng.choice(sorted(session_timestamps)) if session_timestamps else memory.timestamp
    words = _words(memory)
    twin = max(peers, key=lambda m: _overlap(_words(m), words))
    source = twin if rng.random() < 0.5 else rng.choice(peers)
    return shown[source.memory_id]


def _words(memory: MemoryRecord) -> set[str]:
    return set(tokens(strip_answer_suffix(memory.content)))


def _overlap(a: set[str], b: set[str]) -> float:
    """Jaccard overlap of two word sets."""
    return len(a & b) / len(a | b) if a | b else 0.0
