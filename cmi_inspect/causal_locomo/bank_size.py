"""A smaller bank drawn from an example's, deterministically and label-blind (``-T bank_size=N``).

XL v3's bank is its conversation's whole memory store, about a thousand memories. A bank of
N is the N memories a label-blind retriever ranks highest for the request over the whole bank:
Okapi BM25 over content words (``text.content_words``, the scoring rule; each request word
counted once, inverse document frequencies read over the bank), ties broken by a hash of the
example's and the memory's ids. No labelled memory is forced in: the labels of the memories
left out leave the example with them, so a useful memory the retriever misses is lost (recall
against the whole bank has a ceiling) and a harmful one it misses is spared; ``DrawnBank``
counts both, and the scorers record the counts. Recall is still counted against every useful
memory of the whole bank (``gold_memory_ids`` is kept whole), so a lost useful memory is a
miss and selecting nothing is never right for an answerable example; poison adoption reads
the harmful memories the bank kept. The bank keeps its order.

Keeping every labelled memory and filling up with the closest others, as the draw once did,
gave the labels away: labelled memories were often the least like the request of the bank.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from cmi_inspect.causal_locomo.data import ExampleRecord
from cmi_inspect.errors import positive_int
from cmi_inspect.text import content_words

K1, B = 1.2, 0.75
"""BM25's term-frequency saturation and length normalisation (the usual constants, those of
the evidence scorer's BM25, ``strategies/cmi/bm25.py``)."""


@dataclass(frozen=True)
class DrawnBank:
    """A record with its bank drawn down, and how many labelled memories the draw left out."""

    record: ExampleRecord
    size: int
    """The size asked for (``-T bank_size``); a bank no larger is kept whole."""
    useful_lost: int
    """Memories of the example's ``gold_memory_ids`` outside the drawn bank."""
    harmful_lost: int
    """Memories labelled harmful outside the drawn bank."""


@lru_cache(maxsize=1 << 16)
def _bag(text: str) -> Mapping[str, int]:
    """A text's content words and how often each stands in it (read once a text)."""
    return Counter(content_words(text))


def check_bank_size(size: object) -> int | None:
    """``-T bank_size`` as given: None, or a whole number of memories of at least 1."""
    return None if size is None else positive_int("-T bank_size", size)


def _inverse_frequency(words: Sequence[str], bags: Sequence[Mapping[str, int]]) -> list[float]:
    """BM25's inverse document frequency of each word over the bags (never negative)."""
    n = len(bags)
    found = (sum(word in bag for bag in bags) for word in words)
    return [math.log(1 + (n - d + 0.5) / (d + 0.5)) for d in found]


def bm25_scores(query: str, texts: Sequence[str]) -> list[float]:
    """Okapi BM25 of each text to the query's content words, each counted once, with
    inverse document frequencies over ``texts``: the draw's label-blind retriever."""
    bags = [_bag(t) for t in texts]
    words = list(dict.fromkeys(content_words(query)))
    idf = _inverse_frequency(words, bags)
    lengths = [sum(bag.values()) for bag in bags]
    average = sum(lengths) / len(bags) if bags else 1.0
    return [
        sum(
            weight * bag[w] * (K1 + 1) / (bag[w] + K1 * (1 - B + B * length / average))
            for w, weight in zip(words, idf, strict=True)
            if w in bag
        )
        for bag, length in zip(bags, lengths, strict=True)
    ]


def _tie(example_id: str, memory_id: str) -> str:
    """The tie-break of a memory for an example: the same in every run, unrelated to labels."""
    return hashlib.sha256(f"{example_id}/{memory_id}".encode()).hexdigest()


def ranked_ids(record: ExampleRecord) -> list[str]:
    """The bank's memory ids, the best by BM25 to the request first, ties by hash."""
    bank = record.memory_bank
    scores = bm25_scores(record.current_task.instruction, [m.content for m in bank])
    order = sorted(
        range(len(bank)), key=lambda i: (-scores[i], _tie(record.example_id, bank[i].memory_id))
    )
    return [bank[i].memory_id for i in order]


def draw_bank(record: ExampleRecord, size: int) -> DrawnBank:
    """The record with a bank of its ``size`` memories the retriever ranks highest, in bank
    order, its labels those of the memories kept (see the module's docstring)."""
    if len(record.memory_bank) <= size:
        return DrawnBank(record, size, useful_lost=0, harmful_lost=0)
    keep = set(ranked_ids(record)[:size])
    drawn = record.model_copy(
        update={
            "memory_bank": [m for m in record.memory_bank if m.memory_id in keep],
            "bad_memory_ids": [i for i in record.bad_memory_ids if i in keep],
        }
    )
    lost = [m for m in record.memory_bank if m.memory_id not in keep]
    return DrawnBank(
        drawn,
        size,
        useful_lost=sum(i not in keep for i in record.gold_memory_ids),
        harmful_lost=sum(m.label == "harmful" for m in lost),
    )


def smaller_bank(record: ExampleRecord, size: int) -> ExampleRecord:
    """The record with a bank of ``size`` memories drawn by the retriever (``draw_bank``)."""
    return draw_bank(record, size).record
