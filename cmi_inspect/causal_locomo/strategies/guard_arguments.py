"""What ``MemoryGuard``'s public call takes, checked before any work: one ``TypeError`` or
``ValueError`` naming the argument (and the item) that is wrong, never an error from deep
inside the evidence or the embedder.

``memories`` is a sequence of texts (keyed ``m1``, ``m2``, ...) or a mapping of key to
text; a plain string is refused, not read as one text per character. ``sessions`` is a
sequence of ``Session`` (a date or None, and (speaker, text) turns) or the benchmark's
``PastSession``. Every text must be one Unicode can encode: a lone surrogate is refused.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from cmi_inspect.causal_locomo.data import PastSession

TEXTS = (str, bytes, bytearray)
"""What is a sequence but not a sequence of texts."""


def text(name: str, value: object, optional: bool = False) -> str:
    """``value``, a str Unicode can encode (None too when ``optional``)."""
    if value is None and optional:
        return value  # type: ignore[return-value]
    if not isinstance(value, str):
        raise TypeError(f"MemoryGuard: {name} must be a str, not {type(value).__name__}.")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as ex:
        raise ValueError(
            f"MemoryGuard: {name} holds a lone surrogate ({value[ex.start]!r} at {ex.start}), "
            "which is no text Unicode can encode."
        ) from None
    return value


def sequence(name: str, value: object, of: str) -> Sequence[Any]:
    """``value``, a list or tuple (not a string, bytes or a mapping)."""
    if isinstance(value, TEXTS) or isinstance(value, Mapping) or not isinstance(value, Sequence):
        hint = (
            " (a plain string would be read one character at a time)"
            if isinstance(value, str)
            else ""
        )
        raise TypeError(
            f"MemoryGuard: {name} must be a list of {of}, not {type(value).__name__}{hint}."
        )
    return value


def memories(value: object) -> dict[str, str]:
    """The memories by key: a mapping's, or a sequence's keyed ``m1``, ``m2``, ..."""
    if isinstance(value, Mapping):
        return {
            text(f"memories key {k!r}", k): text(f"memories[{k!r}]", v) for k, v in value.items()
        }
    given = sequence("memories", value, "texts (or a dict of key -> text)")
    return {f"m{i + 1}": text(f"memories[{i}]", t) for i, t in enumerate(given)}


def sessions(value: object, session_type: type) -> list[Any]:
    """The sessions, each a ``session_type`` (the guard's ``Session``) or a ``PastSession``,
    their texts checked."""
    checked = []
    for i, session in enumerate(sequence("sessions", value, "Session")):
        where = f"sessions[{i}]"
        if isinstance(session, PastSession):
            text(f"{where}.content", session.content)
            text(f"{where}.date_time", session.date_time, optional=True)
        elif isinstance(session, session_type):
            given: Any = session
            text(f"{where}.date", given.date, optional=True)
            for j, turn in enumerate(sequence(f"{where}.turns", given.turns, "(speaker, text)")):
                pair = sequence(f"{where}.turns[{j}]", turn, "two texts")
                if len(pair) != 2:
                    raise ValueError(
                        f"MemoryGuard: {where}.turns[{j}] must be (speaker, text): it has "
                        f"{len(pair)} items."
                    )
                text(f"{where}.turns[{j}][0]", pair[0])
                text(f"{where}.turns[{j}][1]", pair[1])
        else:
            raise TypeError(
                f"MemoryGuard: {where} must be a Session (or a PastSession), "
                f"not {type(session).__name__}."
            )
        checked.append(session)
    return checked
