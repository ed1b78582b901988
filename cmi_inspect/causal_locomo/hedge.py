"""Does an answer commit to the expected answer, or hedge: across several values of the
kind asked for, or by offering it without committing to it?

An answer listing fourteen dates contains the right one, so containment rules and an
alias match credit it: the LoCoMo judging failure this benchmark measures others by. The
kind of the expected answer (a date, a number, a name) is read from the answer key; the
response hedges when it names at least two more values of that kind than the key holds, or
one more with a disjunction ("7 May or 14 May"). One extra value without a disjunction is
context ("on 7 May 2023, a week after her birthday on 30 April"), not a hedge.

It also hedges when no mention of the answer is committed to and one is offered in doubt
(``uncertain``): its sentence holds a word of uncertainty ("maybe", "perhaps", "might
have", "I guess", "not sure", "I don't know", "either ... or"), a short sentence of doubt
stands next to it ("I don't know. Maybe 7 May 2023." "Was it 7 May 2023? I'm not sure."),
or it is asked back as a question ("7 May 2023?") that no "yes" answers. A mention that is
denied (``negation``) is no commitment either. "I think it was 7 May 2023" commits.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from cmi_inspect.causal_locomo.negation import denial, mentions, sentences
from cmi_inspect.dates import MONTHS, WEEKDAYS, explicit_spans, without_dates
from cmi_inspect.text import NUMBER_WORDS

AnswerKind = Literal["date", "number", "name"]

DISJUNCTION = re.compile(r"\b(?:or|either|maybe|perhaps|possibly|probably)\b", re.I)
UNCERTAIN = re.compile(
    r"\b(?:maybe|perhaps|possibly|probably|presumably|likely|might|could\s+(?:have|be)"
    r"|may\s+(?:have|be)|i\s+guess|i\s+suppose|(?:my\s+|a\s+|best\s+)guess|if\s+i\s+had\s+to"
    r"|there(?:['’]s|\s+is)\s+a\s+chance|(?:it['’]s|it\s+is)\s+possible|unsure|uncertain"
    r"|not\s+(?:\d+\s*%\s+|entirely\s+|quite\s+|totally\s+|completely\s+)?(?:sure|certain)"
    r"|no\s+idea|(?:do\s+not|don['’]t)\s+(?:know|remember|recall)"
    r"|(?:can['’]t|cannot|could\s+not|couldn['’]t)\s+(?:say|tell|recall|remember|confirm|be\s+sure)"
    r"|hard\s+to\s+(?:say|tell)|wouldn['’]t\s+swear|either\b[^.!?]*\bor)\b",
    re.I,
)
"""Words that offer what they go with in doubt."""
SHORT_SENTENCE = 5
"""Most words of a sentence of doubt next to a mention that it reads into it ("I'm not
sure.", "Hard to say."): a longer one has a subject of its own."""
AFFIRMED_AFTER = re.compile(r"^\s*(?:yes|yeah|yep|indeed|correct|right)\b", re.I)
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
    """Whether a response hedged, the values of the answer's kind it named, and the
    sentences that offered the answer in doubt."""

    hedged: bool
    kind: AnswerKind | None = None
    values: list[str] = field(default_factory=list)
    doubts: list[str] = field(default_factory=list)
    """The sentences that offered it in doubt, when no mention committed to it."""

    def describe(self) -> str:
        if self.doubts:
            return "offers the expected answer in doubt: " + "; ".join(map(repr, self.doubts))
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


def uncertain(response: str, start: int, end: int) -> str | None:
    """The sentence that offers the mention at ``start:end`` in doubt (None: none does)."""
    spans = sentences(response)
    at = next((i for i, (s, e) in enumerate(spans) if s <= start < e), None)
    if at is None:
        return None
    s, e = spans[at]
    own = response[s:e].strip()
    if UNCERTAIN.search(own):
        return own
    for i in (at - 1, at + 1):
        if 0 <= i < len(spans):
            near = response[slice(*spans[i])].strip()
            if (
                len(near.split()) <= SHORT_SENTENCE
                and UNCERTAIN.search(near)
                and not mentions(near, [response[start:end]])
            ):
                return f"{near} {own}" if i < at else f"{own} {near}"
    answered = at + 1 < len(spans) and AFFIRMED_AFTER.match(response[slice(*spans[at + 1])])
    if own.endswith("?") and not answered:
        return own
    return None


def doubts(response: str, answers: Sequence[str]) -> list[str]:
    """The sentences offering the answer in doubt, when no mention of it commits to it (a
    denied mention is no commitment either); empty when one does, or none is offered."""
    found: list[str] = []
    for start, end in mentions(response, answers):
        if denial(response, start, end) is not None:
            continue
        doubt = uncertain(response, start, end)
        if doubt is None:
            return []
        found.append(doubt)
    return found


def hedge(response: str, expected: str, request: str = "", answers: Sequence[str] = ()) -> Hedge:
    """Whether ``response`` names more values of the expected answer's kind than it may, or
    offers the answer (``expected`` and ``answers``, its aliases) only in doubt."""
    offered = doubts(response, [expected, *answers])
    kind = answer_kind(expected)
    if kind is None:
        return Hedge(bool(offered), doubts=offered)
    asked = {w.lower() for w in names(request, set())}
    allowed = max(1, len(values(expected, kind, asked, in_sentences=False)))
    named = values(response, kind, asked)
    extra = len(named) - allowed
    spread = extra >= 2 or (extra >= 1 and bool(DISJUNCTION.search(response)))
    return Hedge(spread or bool(offered), kind, named, [] if spread else offered)
