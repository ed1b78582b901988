"""Does an answer commit to one value, or hedge across several values of the kind asked for?

An answer listing fourteen dates contains the right one, so containment rules and an
alias match credit it: the LoCoMo judging failure this benchmark measures others by. The
kind of the expected answer (a date, a number, a name) is read from the answer key; the
response hedges when it names at least two more values of that kind than the key holds, or
one more with a disjunction ("7 May or 14 May"). One extra value without a disjunction is
context ("on 7 May 2023, a week after her birthday on 30 April"), not a hedge.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from cmi_inspect.dates import MONTHS, WEEKDAYS, explicit_spans, without_dates
from cmi_inspect.text import NUMBER_WORDS

AnswerKind = Literal["date", "number", "name"]

DISJUNCTION = re.compile(r"\b(?:or|either|maybe|perhaps|possibly|probably)\b", re.I)
_SPELLED = [w for w in NUMBER_WORDS if " " not in w and len(w) > 2] + [  # not "a", "an"
    "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
    "nineteen", "twenty", "hundred", "thousand",
]  # fmt: skip
_NUMBER = re.compile(r"\b(?:\d+(?:[.,]\d+)?|" + "|".join(_SPELLED) + r")\b", re.I)
_NAME = re.compile(r"\b[A-Z][a-z]+(?:\s+[A-Z][a-z]+)*\b")
_SENTENCE_START = re.compile(r"(?:^|[.!?:;]\s*|\n\s*)$")
_NOT_NAMES = {*MONTHS, *WEEKDAYS, "i"}


@dataclass(frozen=True)
class Hedge:
    """Whether a response hedged, and the values of the answer's kind it named."""

    hedged: bool
    kind: AnswerKind | None = None
    values: list[str] = field(default_factory=list)

    def describe(self) -> str:
        return f"hedged across {len(self.values)} {self.kind}s: {', '.join(self.values)}"


def answer_kind(expected: str) -> AnswerKind | None:
    """The kind of value an expected answer is, or None when it is none of them."""
    if explicit_spans(expected):
        return "date"
    if _NUMBER.search(expected):
        return "number"
    if len(expected.split()) <= 5 and names(expected, set(), in_sentences=False):
        return "name"
    return None


def names(text: str, exclude: set[str], in_sentences: bool = True) -> list[str]:
    """Capitalised words, months and days left out; with ``in_sentences`` (a response, not
    an answer key) not a sentence's first word, which any word may be."""
    found = [
        m.group(0)
        for m in _NAME.finditer(text)
        if not (in_sentences and _SENTENCE_START.search(text[max(0, m.start() - 3) : m.start()]))
    ]
    return [n for n in found if n.lower() not in _NOT_NAMES and n.lower() not in exclude]


def values(text: str, kind: AnswerKind, exclude: set[str], in_sentences: bool = True) -> list[str]:
    """The distinct values of ``kind`` in ``text``, in order."""
    if kind == "date":
        found = [span.describe() for span in explicit_spans(text)]
    elif kind == "number":
        found = [m.group(0).lower() for m in _NUMBER.finditer(without_dates(text))]
    else:
        found = names(text, exclude, in_sentences)
    return list(dict.fromkeys(found))


def hedge(response: str, expected: str, request: str = "") -> Hedge:
    """Whether ``response`` names more values of the expected answer's kind than it may."""
    kind = answer_kind(expected)
    if kind is None:
        return Hedge(False)
    asked = {w.lower() for w in names(request, set())}
    allowed = max(1, len(values(expected, kind, asked, in_sentences=False)))
    named = values(response, kind, asked)
    extra = len(named) - allowed
    hedged = extra >= 2 or (extra >= 1 and bool(DISJUNCTION.search(response)))
    return Hedge(hedged, kind, named)
