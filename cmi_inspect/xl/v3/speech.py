"""What an inserted turn says: a claim turned to the other speaker's mouth, a quoted
outside source, a retraction and its reaffirmation.

Each is plain turn text, said in the history like any LoCoMo turn; its memory is made from
it as every memory is (``store``), so nothing here writes a memory.
"""

from __future__ import annotations

import re

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


_LOWER_START = re.compile(r"^(?:You|Your|I|My|The|A|An|It|We|Our|This|That|There)\b")


def quoted(lead: str, text: str) -> str:
    """The text passed on from an outside source: ``lead`` ("I read in a post online
    that"), then the claim, its first word lower-cased unless it is a name."""
    first = _LOWER_START.match(text)
    if first and first[0] != "I":
        text = text[:1].lower() + text[1:]
    return f"{lead} {text}"


def said_value(value: str, dated: bool) -> str:
    """A value as a retraction says it: a date with "on" before a day ("on 7 May 2023")."""
    return f"on {value}" if dated and value[:1].isdigit() else value
