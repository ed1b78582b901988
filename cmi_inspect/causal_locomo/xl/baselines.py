"""XL's baseline selectors and the selection rows the audit reports for them.

Each selector ranks a conversation's whole store for a question without reading a label:
BM25, e5, BM25 over the asked person's own turns first, the question's rare words first
(``audit.RARE_TURNS``), and the gold-word-overlap oracle (it reads the gold answer: the
ceiling of a lexical selector). ``selection_rows`` scores the top k of each: useful F1,
confuser adoption, and excess adoption, adoption less the rate at which the selector keeps
never-labelled turns at the confusers' own BM25 ranks (``rank_baseline``), so that keeping
fewer memories, or ranking them deeper, is not read as avoiding harm.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from cmi_inspect.causal_locomo.bank_size import bm25_scores
from cmi_inspect.causal_locomo.data import ExampleRecord
from cmi_inspect.text import content_words

RARE_TURNS = 3
EXACT_RANKS = 50
"""BM25 ranks below this are compared rank by rank; deeper ones as one pool."""
KS = (1, 3, 5)


@dataclass
class Example:
    """A v5 example with what the audit reads of it."""

    record: ExampleRecord
    meta: dict[str, Any]

    @property
    def id(self) -> str:
        return self.record.example_id

    @property
    def conversation(self) -> str:
        return str(self.meta["conversation"])

    @property
    def question(self) -> str:
        return self.record.current_task.instruction

    @cached_property
    def turns(self) -> list[str]:
        return [m.memory_id for m in self.record.memory_bank]

    @cached_property
    def bm25(self) -> list[str]:
        scores = bm25_scores(self.question, [m.content for m in self.record.memory_bank])
        order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
        return [self.turns[i] for i in order]


def examples(records: Sequence[ExampleRecord]) -> list[Example]:
    """The records of a v5 file that carry its metadata."""
    return [
        Example(r, r.model_extra["metadata"])
        for r in records
        if r.model_extra and "group" in r.model_extra.get("metadata", {})
    ]


def rare_words(question: str, bags: dict[str, frozenset[str]]) -> frozenset[str]:
    """The question's content words found in at most ``RARE_TURNS`` turns."""
    words = set(content_words(question))
    return frozenset(w for w in words if sum(w in bag for bag in bags.values()) <= RARE_TURNS)


class Store:
    """A conversation's turns as bags of content words, and which turns any question labels."""

    def __init__(self, example: Example, labelled: set[str]) -> None:
        self.bags = {
            m.memory_id: frozenset(content_words(m.content)) for m in example.record.memory_bank
        }
        self.speaker = {m.memory_id: m.speaker for m in example.record.memory_bank}
        self.labelled = labelled


Ranker = Callable[[Example, Store], list[str]]


def rank_bm25(e: Example, store: Store) -> list[str]:
    return e.bm25


def rank_asked_speaker(e: Example, store: Store) -> list[str]:
    """BM25 over the asked person's own turns first (all turns when no one is asked)."""
    asked = e.meta.get("asked_person")
    own = [t for t in e.bm25 if not asked or store.speaker[t] == asked]
    return own + [t for t in e.bm25 if t not in set(own)]


def rank_rare_word(e: Example, store: Store) -> list[str]:
    """Turns holding the question's rare words first (the most of them first), then BM25."""
    rare = rare_words(e.question, store.bags)
    position = {t: i for i, t in enumerate(e.bm25)}
    hits = {t: len(rare & store.bags[t]) for t in e.turns}
    return sorted(e.turns, key=lambda t: (-hits[t], position[t]))


def rank_gold_overlap(e: Example, store: Store) -> list[str]:
    """The oracle: turns sharing the most of the gold answer's words first, then BM25."""
    gold = frozenset(content_words(e.record.scoring_criteria.expected_answer))
    position = {t: i for i, t in enumerate(e.bm25)}
    return sorted(e.turns, key=lambda t: (-len(gold & store.bags[t]), position[t]))


@dataclass(frozen=True)
class Ranked:
    """A selector's ranking of every example's store."""

    name: str
    order: dict[str, list[str]]


def _f1(picked: Sequence[str], useful: set[str]) -> float:
    hits = sum(p in useful for p in picked)
    if not hits:
        return 0.0
    precision, recall = hits / len(picked), hits / len(useful)
    return 2 * precision * recall / (precision + recall)


def rank_baseline(
    exs: Sequence[Example], stores: dict[str, Store], order: dict[str, list[str]], k: int
) -> dict[int, float]:
    """How often a selector keeps a never-labelled turn at each BM25 rank (ranks from
    ``EXACT_RANKS`` on pooled): what adopting a confuser at that rank is measured against."""
    kept: dict[int, list[bool]] = defaultdict(list)
    for e in exs:
        chosen = set(order[e.id][:k])
        for rank, turn in enumerate(e.bm25):
            if turn not in stores[e.id].labelled:
                kept[min(rank, EXACT_RANKS)].append(turn in chosen)
    return {rank: float(np.mean(v)) for rank, v in kept.items()}


def selection_rows(
    exs: Sequence[Example], stores: dict[str, Store], ranked: Sequence[Ranked]
) -> list[dict[str, Any]]:
    """Per selector and k: useful F1, confuser adoption, and excess adoption (adoption less
    the rate the selector keeps never-labelled turns at the confusers' BM25 ranks), means
    over examples."""
    rows = []
    for r in ranked:
        for k in KS:
            base = rank_baseline(exs, stores, r.order, k)
            f1, adopted, excess, kept = [], [], [], []
            for e in exs:
                picked = set(r.order[e.id][:k])
                f1.append(_f1(r.order[e.id][:k], set(e.meta["useful"])))
                confusers = e.meta["confusers"]
                kept.append(float(bool(picked & set(confusers))))
                if not confusers:
                    continue
                position = {t: i for i, t in enumerate(e.bm25)}
                expected = [base.get(min(position[c], EXACT_RANKS), 0.0) for c in confusers]
                mine = sum(c in picked for c in confusers) / len(confusers)
                adopted.append(mine)
                excess.append(mine - float(np.mean(expected)))
            rows.append({
                "selector": r.name, "k": k, "examples": len(exs),
                "useful_f1": _mean(f1), "confuser_adoption": _mean(adopted),
                "excess_adoption": _mean(excess), "kept_a_confuser": _mean(kept),
            })  # fmt: skip
    return rows


def _mean(values: Sequence[float]) -> float | None:
    return round(float(np.mean(values)), 4) if values else None


def e5_order(exs: Sequence[Example]) -> dict[str, list[str]]:
    """Each example's store ranked by e5 cosine to its question (cached on disk)."""
    from cmi_inspect.retrieval import E5Embedder

    embedder = E5Embedder()

    async def rank() -> dict[str, list[str]]:
        out = {}
        for e in exs:
            cos = await embedder.cosine(e.question, [m.content for m in e.record.memory_bank])
            order = sorted(range(len(cos)), key=lambda i: (-float(cos[i]), i))
            out[e.id] = [e.turns[i] for i in order]
        return out

    return asyncio.run(rank())
