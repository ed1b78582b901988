"""What an inserted turn says: a claim turned to the other speaker's mouth, a quoted
outside source, a retraction and its reaffirmation.

Each is plain turn text, said in the history like any LoCoMo turn; its memory is made from
it as every memory is (``store``), so nothing here writes a memory.
"""

from __future__ import annotations

import re
from collections.abc import Collection

_FIRST_TO_SECOND = {
    "i'm": "you're", "i've": "you've", "i'd": "you'd", "i'll": "you'll", "i am": "you are",
    "i was": "you were", "i": "you", "my": "your", "mine": "yours", "me": "you",
    "myself": "yourself",
}  # fmt: skip
_SECOND_TO_FIRST = {
    "you're": "I'm", "you've": "I've", "you'd": "I'd", "you'll": "I'll", "you are": "I am",
    "you were": "I was", "your": "my", "yours": "mine", "yourself": "myself",
}  # fmt: skip
_SUBJECT_AFTER = re.compile(r"(?:^|[.!?;:,]\s*|\b(?:and|but|so|that|if|when|because|as)\s+)$", re.I)
_PERSON = re.compile(
    r"\b(?:I'm|I've|I'd|I'll|I am|I was|I|my|mine|me|myself"
    r"|you're|you've|you'd|you'll|you are|you were|your|yours|yourself|you)\b",
    re.IGNORECASE,
)


def _swap(found: re.Match[str]) -> str:
    word, before = found[0], found.string[: found.start()]
    low = word.lower()
    if low == "you":  # the listener, now the speaker: "I" as a subject, else "me"
        out = "I" if _SUBJECT_AFTER.search(before) else "me"
    else:
        out = _FIRST_TO_SECOND.get(low) or _SECOND_TO_FIRST[low]
    if out == "I" or out.startswith(("I'", "I ")):
        return out
    starts = not before.strip() or before.rstrip()[-1:] in ".!?"
    capital = starts if low == "i" or low.startswith(("i'", "i ")) else word[:1].isupper()
    return out[:1].upper() + out[1:] if capital else out


def addressed(text: str) -> str:
    """The text as the listener would say it back to its speaker: "I went" becomes "you
    went", "my" "your", and the listener's own "you" becomes "I" or "me"."""
    out = _PERSON.sub(_swap, text)
    return out[:1].upper() + out[1:]


def quoted(lead: str, text: str, names: Collection[str]) -> str:
    """The text passed on from an outside source: ``lead`` ("I read in a post online
    that"), then the claim, its first letter lower-cased unless its first word is one of
    ``names`` (the conversation's) or "I"."""
    first = text.split(" ", 1)[0].strip(",.!?'")
    if first not in names and first != "I" and not first.startswith("I'"):
        text = text[:1].lower() + text[1:]
    return f"{lead} {text}"


def unaddressed(text: str, name: str) -> str:
    """The text without words at its start that answer or call the listener, ``name``
    ("Yes, ...", "Tomas, guess what, ..."), which another speaker would not say."""
    calls = rf"(?:(?:Hi|Hey|Oh|Wow|Thanks|Yes|Yeah|Haha),?\s+)?{re.escape(name)}[,!]\s+"
    found = re.match(rf"{calls}|(?:Yes|Yeah|Yep|Oh|Wow|Haha|Aw+),\s+", text)
    return text[found.end() :] if found else text


_DAY = re.compile(r"\d{1,2} [A-Z][a-z]+ \d{4}")


def said_value(value: str, dated: bool) -> str:
    """A value as a retraction says it: a day with "on" before it ("on 7 May 2023")."""
    return f"on {value}" if dated and _DAY.fullmatch(value) else value
