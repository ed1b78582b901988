"""BM25 over the history's windows, each a bag of content words: the relevance the evidence
ranks windows by, for the request and for each memory's text.

``Postings`` scores many texts against every window at once: each word's term in every
window is computed once, and a text's scores are its words' rows added in its word order,
the same sums as ``score`` gives window by window (a window without a word adds 0), so the
evidence for a store of thousands of memories costs seconds, not minutes.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator, Sequence

import numpy as np

K1, B = 1.2, 0.75


def document_frequency(bags: Sequence[Counter[str]]) -> Counter[str]:
    """In how many bags each word stands."""
    df: Counter[str] = Counter()
    for bag in bags:
        df.update(bag.keys())
    return df


def inverse_frequency(df: Counter[str], n: int) -> dict[str, float]:
    """BM25's inverse document frequency of each word over ``n`` bags."""
    return {word: math.log(1 + (n - d + 0.5) / (d + 0.5)) for word, d in df.items()}


def term(idf: float, count: int, length: int, average: float) -> float:
    """One query word's term in a bag of ``length`` words that has it ``count`` times."""
    return idf * count * (K1 + 1) / (count + K1 * (1 - B + B * length / average))


def score(query: Sequence[str], bag: Counter[str], idf: dict[str, float], average: float) -> float:
    """BM25 of a bag to the query's words (each once, in a fixed order)."""
    length = sum(bag.values())
    return sum(term(idf.get(q, 0.0), bag[q], length, average) for q in query if q in bag)


def average_length(bags: Sequence[Counter[str]]) -> float:
    return sum(sum(b.values()) for b in bags) / len(bags) if bags else 1.0


class Postings:
    """Each word's term in every bag, computed on first use (see the module's docstring)."""

    def __init__(self, bags: Sequence[Counter[str]], idf: dict[str, float]) -> None:
        self.idf = idf
        self.average = average_length(bags)
        self.lengths = [sum(b.values()) for b in bags]
        self.postings: dict[str, list[tuple[int, int]]] = {}
        for i, bag in enumerate(bags):
            for word, count in bag.items():
                self.postings.setdefault(word, []).append((i, count))
        self.terms: dict[str, np.ndarray] = {}

    def ranked(self, query: Sequence[str]) -> Iterator[int]:
        """The bags that score above 0 for the query, best first, ties to the earlier bag."""
        scores = np.zeros(len(self.lengths))
        for q in query:
            if q in self.postings:
                scores = scores + self._terms(q)
        order = np.argsort(-scores, kind="stable")
        return (int(i) for i in order if scores[i] > 0)

    def _terms(self, word: str) -> np.ndarray:
        if word not in self.terms:
            row = np.zeros(len(self.lengths))
            for i, count in self.postings[word]:
                row[i] = term(self.idf.get(word, 0.0), count, self.lengths[i], self.average)
            self.terms[word] = row
        return self.terms[word]
