"""How a sentence uses a value (its article, its head noun), read before a false value goes in."""

from __future__ import annotations

import re

from cmi_inspect.xl.answers import stems
from cmi_inspect.xl.v4.kinds import _COURSE_HEADS, _words
from cmi_inspect.xl.v4.shapes import Shape, _plural, shape

_DETERMINERS = frozenset(
    {"a", "an", "the", "my", "your", "his", "her", "our", "their", "its", "this", "that",
     "these", "those", "some", "one", "every", "each", "another", "any"}
)  # fmt: skip
"""Words before a counted thing ("this candle"); without one, a thing is a mass."""

_ATTRIBUTIVE = frozenset(
    {"session", "sessions", "class", "classes", "lesson", "lessons", "club", "group", "team",
     "gear", "routine", "practice", "workshop", "course", "tour", "competition", "event"}
)  # fmt: skip
"""Nouns an activity may stand before as a modifier ("a painting session")."""
_OUTINGS = frozenset({"trip", "trips", "getaway", "vacation", "holiday"})
"""Nouns an outing stands before ("a camping trip"), which not every activity makes."""
_PERSON = frozenset(
    {"i", "i'm", "we", "we're", "he", "he's", "she", "she's", "they", "they're", "you",
     "you're", "me", "us", "him", "them", "feel", "feels", "felt", "customers", "people"}
)  # fmt: skip
"""Words by which a feeling is said of someone ("they were so confused", "make my
customers feel cozy"); without one it is said of a thing and is a description."""
_COUNTING = frozenset({"a", "an", "this", "that", "their", "his", "her", "its"})
"""Words that make an activity a thing ("an awesome painting", "their grooming")."""
MASS = frozenset({"activity", "cause", "topic", "quality", "emotion", "genre", "music_genre",
                  "writing"})  # fmt: skip
"""Types whose values take no "a" ("a toy drive" is no cause)."""
TITLES = frozenset({"book_or_title", "song", "game"})
"""Types whose values a turn may quote."""


def _kind_in(kind: str, sentence: str, value: str) -> str | None:
    """The type as the sentence uses the value: a feeling said of a thing ("it was totally
    surreal", "the atmosphere was really electric") is a description, an activity before
    "trip" an outing ("a camping trip"); None where no value of the type fits: a mass noun
    counted ("an awesome painting!", "a toy drive"), a thing without a determiner ("I made
    vegan ice cream"), which a counted thing cannot replace, or a part of a quoted title."""
    found = re.search(rf"(?<!\w){re.escape(value)}(?!\w)", sentence, re.IGNORECASE)
    if found is None:
        return kind
    head, tail = sentence[: found.start()], sentence[found.end() :]
    before, after = _words(head)[-2:], _words(tail)[:1]
    said_of_thing = r"\b(?:it|that|this)(?:'s| was| is| felt)\s+(?:\w+\s+)?$"
    spoken = _words(head)  # none: "Glad to be part of it", an "I'm" left out
    of_thing = re.search(said_of_thing, head, re.IGNORECASE) or spoken and not _PERSON & set(spoken)
    if kind == "feeling" and of_thing:  # "The atmosphere was really electric"
        return "description"
    if kind == "activity" and set(after) & _OUTINGS:
        return "outing"
    counting = _COUNTING if kind == "activity" else {"a", "an"}
    if kind in MASS and counting & set(before) and not set(after) & _ATTRIBUTIVE:
        return None
    counted = kind in ("object", "scene") and not _plural(value)
    bare = not shape(value, kind).article and not _DETERMINERS & set(before)
    if counted and (bare or before[-1:] == ["some"]):  # "some money": a mass noun
        return None
    if kind in TITLES and _inside_quotes(head, tail):
        return None
    return kind


def _inside_quotes(head: str, tail: str) -> bool:
    """True when the value is a part of a longer quoted text ("Harry Potter" in "Harry
    Potter and the Philosopher's Stone")."""
    opened = head.count('"') % 2 == 1 or head.count("“") > head.count("”")
    if not opened:
        return False
    inside_before = re.split(r'["“]', head)[-1]
    inside_after = re.split(r'["”]', tail)[0]
    return bool(_words(inside_before) or _words(inside_after))


def _apart(core: str, question: str, answer: str, head: str | None) -> bool:
    """True when the core (but a head it keeps) shares no content word with the answer or
    the question (a count, a duration or a date keeps its unit, so only its number must
    differ)."""
    varied = core[: -len(head)] if head else core
    return not stems(varied) & (stems(answer) | stems(question))


def _kept_head(form: Shape, kind: str) -> str | None:
    """The head noun a course keeps ("gardening class": "class"), so that only what is
    taught changes."""
    words = form.core.split()
    return words[-1] if kind == "course" and len(words) > 1 and words[-1] in _COURSE_HEADS else None
