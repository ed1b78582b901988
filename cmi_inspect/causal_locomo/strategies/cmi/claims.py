"""The claim-level conflict relation: two memories conflict when they state the same slot
with another value, found without comparing every pair.

A memory's slot is its content words (``text.content_words``) less its dates, numbers and
words about sources ("mentioned", "said": ``evidence.META_WORDS``); each word weighs its
rarity, BM25's inverse document frequency over the history's windows and the memories
checked, so the speakers' names, a memory system's template and the words of the
conversation's every other turn count for little. Two memories state the same slot when
the weight of the words they share is at least ``overlap`` of each one's (of the heavier:
a short memory of common words does not share the slot of every longer one that has
them); they state another value when, besides, each states a date the other's dates do not overlap,
or each a number the other lacks, or one is negated and the other not, or each has a
slot word the other lacks (a name, a place, a thing swapped for another). A memory that
only adds to the other (its words a superset, no other date or number) restates it.

Pairs are found by prefix filtering: a memory's prefix is its words in one global order
(heaviest first), up to the fewest whose remaining weight is under ``overlap`` of its own.
Two memories that share ``overlap`` of each one's weight have the first word they share in
both prefixes (else the words they share would all lie in one's remainder, too light), so
each memory is compared only with those whose prefix shares a word with its own (an
inverted index of prefixes), and no pair that meets the threshold is missed.
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from cmi_inspect.causal_locomo.negation import NEGATOR
from cmi_inspect.causal_locomo.strategies.cmi.evidence import (
    META_WORDS,
    stated_dates,
    undated_words,
)
from cmi_inspect.dates import DaySpan

MARGIN = 1e-9
"""Relative slack on the prefix's bound, so that rounding never drops a pair at the threshold."""
MAX_PARTNERS = 256
"""The most later claims one claim is compared with (the nearest in the store's order that
share one of its heaviest words), so that a store of many near-copies is checked in time
linear in its size; a claim with more versions than this is compared with the nearest."""


@dataclass(frozen=True)
class Claim:
    """What the relation reads of one memory's text."""

    slot: frozenset[str]
    """Its content words, less dates, numbers and words about sources."""
    numbers: frozenset[str]
    dates: tuple[DaySpan, ...]
    """The dates it states outright (``dates.date_spans`` with no session to resolve against)."""
    negated: bool
    """It holds a negator (``negation.NEGATOR``: "not", "never", any "n't")."""

    @classmethod
    def of(cls, text: str) -> Claim:
        words = {w for w in undated_words(text) if w not in META_WORDS}
        numbers = frozenset(w for w in words if w.isdigit())
        return cls(
            slot=frozenset(words - numbers),
            numbers=numbers,
            dates=stated_dates(text),
            negated=NEGATOR.search(text) is not None,
        )

    def other_value(self, other: Claim) -> bool:
        """Whether the two state another value (see the module's docstring)."""
        return (
            (_own_date(self.dates, other.dates) and _own_date(other.dates, self.dates))
            or bool(self.numbers - other.numbers and other.numbers - self.numbers)
            or self.negated != other.negated
            or bool(self.slot - other.slot and other.slot - self.slot)
        )


def _own_date(dates: Sequence[DaySpan], others: Sequence[DaySpan]) -> bool:
    """Whether one of ``dates`` overlaps none of ``others``."""
    return any(not any(d.overlaps(o) for o in others) for d in dates)


def rarity(documents: Counter[str], count: int, claims: Sequence[Claim]) -> Callable[[str], float]:
    """Each word's BM25 inverse document frequency over ``count`` documents in which
    ``documents`` counts it (the history's windows) and the claims themselves."""
    frequency = documents.copy()
    for claim in claims:
        frequency.update(claim.slot)
    n = count + len(claims)
    return lambda word: math.log(1 + (n - frequency[word] + 0.5) / (frequency[word] + 0.5))


def claim_conflicts(
    claims: Sequence[Claim], weight: Callable[[str], float], overlap: float
) -> dict[int, dict[int, float]]:
    """For each claim (by index), the others it conflicts with and the share of slot
    weight they have in common; symmetric. Each claim is compared with the MAX_PARTNERS
    nearest later claims sharing one of its heaviest words (and so with the earlier ones
    that had it among theirs)."""
    weights = [{w: weight(w) for w in c.slot} for c in claims]
    mass = [sum(w.values()) for w in weights]
    pairs: Iterable[tuple[int, int]]
    if overlap <= 0:  # every pair shares enough, whatever its words
        pairs = itertools.combinations(range(len(claims)), 2)
    else:
        prefixes = [_prefix(w, m, overlap) for w, m in zip(weights, mass, strict=True)]
        index: dict[str, list[int]] = defaultdict(list)
        for i, prefix in enumerate(prefixes):
            for word in prefix:
                index[word].append(i)
        pairs = [(i, j) for i, prefix in enumerate(prefixes) for j in _next(i, prefix, index)]
    found: dict[int, dict[int, float]] = defaultdict(dict)
    for i, j in pairs:
        heavier = max(mass[i], mass[j])
        shared = sum(weights[i][w] for w in claims[i].slot & claims[j].slot)
        share = shared / heavier if heavier > 0 else 0.0
        if share >= overlap and claims[i].other_value(claims[j]):
            found[i][j] = found[j][i] = share
    return found


def _next(i: int, prefix: list[str], index: Mapping[str, list[int]]) -> list[int]:
    """The claims after claim ``i`` that share one of its prefix's words, the nearest
    MAX_PARTNERS of them: each word's list is read from ``i`` on and only that far."""
    found: set[int] = set()
    for word in prefix:
        posting = index[word]
        start = bisect.bisect_right(posting, i)
        found.update(posting[start : start + MAX_PARTNERS])
    return sorted(found)[:MAX_PARTNERS]


def _prefix(weights: Mapping[str, float], mass: float, overlap: float) -> list[str]:
    """A claim's heaviest words, in the one order every claim's are taken in (weight, then
    the word), up to the fewest whose remaining weight is under ``overlap`` of its own."""
    remaining, prefix = mass, []
    for word in sorted(weights, key=lambda w: (-weights[w], w)):
        if remaining < overlap * mass * (1 - MARGIN):
            break
        prefix.append(word)
        remaining -= weights[word]
    return prefix
