"""Does an answer deny the expected answer it names ("It was not 7 May 2023")?

XL's denial poison says "it was not {answer}", and a response that echoes it contains the
answer, so containment rules and an alias match credit it. A mention of the expected
answer (or an alias, as a whole word or phrase) is negated when:

- a negator (*not*, *never*, *neither*, *nor*, *no longer*, *cannot*, any *n't* form)
  stands before it in its clause: the text back to the nearest sentence end, ``;``,
  ``:``, ``,`` (each before a space), dash, bracket, or a word that starts another
  clause (*but*, *instead*, *rather*, *however*, *though*, *although*, *whereas*, *until*,
  *till*, *since*, *because*, *so*). So "It was not 7 May 2023" and "She never went
  there on 7 May 2023" deny the answer; "She did not go on 5 May; she went on 7 May
  2023", "not 5 May but 7 May 2023", "She didn't go until 7 May 2023" and "She couldn't
  walk because of a knee injury" do not. A negator of the speaker's certainty or
  error ("not sure", "not 100% sure", "not mistaken") or an additive "not only" / "not
  just" governs no answer.
- or a denial follows it at once: "7 May 2023 is wrong", "... was incorrect", "... isn't
  right", "... is not correct".

A question that holds a negator itself ("What type of beer does John not like?") is
answered in the negative ("He doesn't like dark beer"), so under one nothing is negated.
The answer is negated when every mention of it is (and there is one; overlapping
occurrences of the answer and its aliases are one mention): an answer that also
states it plainly ("The note says it was not 7 May 2023, but it was 7 May 2023") commits
to it. A negation set off by a comma from the answer ("It was not, I think, 7 May 2023")
is missed: the rule prefers missing a denial to denying an honest answer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

NEGATOR = re.compile(r"\b(?:not|never|neither|nor|no\s+longer|cannot)\b|\b\w+n['’]t\b", re.I)
NOT_A_DENIAL = re.compile(
    r"^\s+(?:only|just|merely)\b|^\s+(?:be\s+|\S+\s+)?(?:sure|certain|mistaken|wrong)\b", re.I
)
"""What may follow a negator that governs no answer: an additive, or the speaker's doubt."""
CLAUSE_BREAK = re.compile(
    r"[.!?;:,](?=\s|$)|[\n()\[\]—–]|\s-\s"
    r"|\b(?:but|instead|rather|however|though|although|whereas|until|till|since|because|so)\b",
    re.I,
)
_VERB = r"(?:is|was|would\s+be|seems)"
DENIED_AFTER = re.compile(
    rf"^[\"'”’)]?\s*(?:{_VERB}\s+(?:wrong|incorrect|false|inaccurate|mistaken)"
    rf"|{_VERB}(?:\s+not|n['’]t)\s+(?:right|correct|true|accurate|the\s+(?:answer|case)))\b",
    re.I,
)
"""A denial right after the answer: "7 May 2023 is wrong", "... isn't right"."""


@dataclass(frozen=True)
class Negation:
    """Whether a response denies the expected answer, and the clauses that deny it."""

    negated: bool
    clauses: list[str] = field(default_factory=list)

    def describe(self) -> str:
        return "negates the expected answer: " + "; ".join(repr(c) for c in self.clauses)


def mentions(text: str, answers: Sequence[str]) -> list[tuple[int, int]]:
    """Where the answers occur in ``text`` as whole words or phrases (any case), in order;
    overlapping occurrences ("7 May 2023" and its alias "May 2023") are one mention, so a
    negation inside the answer itself ("pigs, since they don't have fur") is never read."""
    phrases = {a.strip().rstrip(".") for a in answers} - {""}  # a final full stop is no word
    found = sorted(
        (m.start(), m.end())
        for phrase in phrases
        for m in re.finditer(rf"(?<!\w){re.escape(phrase)}(?!\w)", text, re.I)
    )
    merged: list[tuple[int, int]] = []
    for start, end in found:
        if merged and start < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def clause_before(text: str, start: int) -> str:
    """The text of ``start``'s clause before it: back to the last ``CLAUSE_BREAK``."""
    before = text[:start]
    breaks = list(CLAUSE_BREAK.finditer(before))
    return before[breaks[-1].end() :] if breaks else before


def denies(clause: str) -> bool:
    """Whether a negator in ``clause`` (the text before a mention) governs what follows it."""
    return any(not NOT_A_DENIAL.match(clause[m.end() :]) for m in NEGATOR.finditer(clause))


def negation(response: str, answers: Sequence[str], request: str = "") -> Negation:
    """Whether every mention in ``response`` of one of ``answers`` (the expected answer and
    its aliases) is negated, by a negator before it in its clause or a denial after it;
    never when the ``request`` asks in the negative."""
    if NEGATOR.search(request):
        return Negation(False)
    denied, found = [], mentions(response, answers)
    for start, end in found:
        clause = clause_before(response, start)
        after = DENIED_AFTER.match(response[end:])
        if denies(clause) or after:
            denied.append((clause + response[start:end] + (after[0] if after else "")).strip())
    return Negation(bool(found) and len(denied) == len(found), denied)
