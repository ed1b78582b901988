"""Form audit: does the surface of a memory say whether it is harmful or useful?

Each labelled memory of each example (useful or harmful; irrelevant ones are the bank) is
described by surface features that need no reading for meaning (``FORM_FEATURES``, and the
first word), and each is scored by its AUC for harmful against useful; a logistic regression
on all of them, cross-validated by conversation (each fold holds out whole conversations),
says how far they go together. A data set whose form gives nothing away has every AUC in
0.40-0.60 and the regression at or below 0.62 (XL v3's aim, docs/xl.md). The same features,
fitted on some conversations, make a surface selector (``surface_scores``):
``benchmarks/surface_baseline.py`` shows how far form alone selects.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from cmi_inspect.causal_locomo.audit import DENIAL_WORDS, FEATURE
from cmi_inspect.causal_locomo.data import ExampleRecord
from cmi_inspect.causal_locomo.dataset import conversation_of
from cmi_inspect.extras import require
from cmi_inspect.text import content_words, tokens

FORM_FEATURES = (
    "chars",
    "words",
    "sentences",
    "copy3",
    "question_overlap",
    "negators",
    "brackets",
    "bank_overlap",
)
"""The numeric features; ``first_word`` is the categorical one."""
AUC_BOUNDS = (0.40, 0.60)
CLASSIFIER_LIMIT = 0.62
FOLDS = 10
FIRST_WORD_MIN = 5
"""How many training items of the overall share a first word's rate is smoothed with."""
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)")


@dataclass(frozen=True)
class FormItem:
    """A memory of an example, described by its surface."""

    example_id: str
    group: str
    """The example's conversation (its own id when it names none): the unit of folds."""
    memory_id: str
    label: str
    attack_kind: str | None
    features: tuple[float, ...]
    """In ``FORM_FEATURES`` order."""
    first_word: str


@lru_cache(maxsize=1 << 17)
def _words(text: str) -> frozenset[str]:
    return frozenset(content_words(text))


@lru_cache(maxsize=1 << 17)
def _trigrams(text: str) -> frozenset[tuple[str, ...]]:
    words = tokens(text)
    return frozenset(zip(words, words[1:], words[2:], strict=False))


def _negators(text: str) -> int:
    words = tokens(text.replace("\u2019", "'"))
    return sum(w in DENIAL_WORDS or w.endswith("n't") for w in words)


def _overlap(a: frozenset[str], b: frozenset[str]) -> float:
    """``text.word_overlap`` on word sets: a share of the smaller set."""
    return len(a & b) / min(len(a), len(b)) if a and b else 0.0


class _Bank:
    """A bank's word sets, its history's 3-grams and its memories' largest overlaps, read
    once for all the examples that share it."""

    def __init__(self, record: ExampleRecord) -> None:
        self.words = [(m.memory_id, _words(m.content)) for m in record.memory_bank]
        self.history = frozenset().union(*(_trigrams(s.content) for s in record.past_sessions))
        self.overlaps: dict[str, float] = {}

    def largest_overlap(self, memory_id: str, words: frozenset[str]) -> float:
        if memory_id not in self.overlaps:
            self.overlaps[memory_id] = max(
                (_overlap(words, w) for i, w in self.words if i != memory_id), default=0.0
            )
        return self.overlaps[memory_id]


def _bank_key(record: ExampleRecord) -> tuple[object, ...]:
    """What a bank's features depend on: its memories' ids and texts, and its history
    (a stored file's examples of one conversation share one)."""
    memories = tuple((m.memory_id, hash(m.content)) for m in record.memory_bank)
    return memories, tuple(hash(s.content) for s in record.past_sessions)


def form_items(
    records: Iterable[ExampleRecord], labels: Sequence[str] = ("useful", "harmful")
) -> list[FormItem]:
    """The memories of the records that have one of ``labels``, with their features."""
    banks: dict[tuple[object, ...], _Bank] = {}
    items = []
    for record in records:
        key = _bank_key(record)
        if key not in banks:
            banks[key] = _Bank(record)
        bank = banks[key]
        question = _words(record.current_task.instruction)
        group = conversation_of(record.example_id) or record.example_id
        for memory in record.memory_bank:
            if memory.label not in labels:
                continue
            text = memory.content
            words = _words(text)
            grams = _trigrams(text)
            features = (
                float(len(text)),
                float(len(text.split())),
                float(len(_SENTENCE_END.split(text.strip()))),
                len(grams & bank.history) / len(grams) if grams else 0.0,
                len(question & words) / len(question) if question else 0.0,
                float(_negators(text)),
                float(text.count("[")),
                bank.largest_overlap(memory.memory_id, words),
            )
            first = (tokens(text) or [""])[0]
            items.append(FormItem(record.example_id, group, memory.memory_id, memory.label,
                                  memory.attack_kind, features, first))  # fmt: skip
    return items


def _folds(groups: Sequence[str]) -> list[tuple[np.ndarray, np.ndarray]]:
    names = sorted(set(groups))
    fold_of = {g: i % FOLDS for i, g in enumerate(names)}
    index = np.array([fold_of[g] for g in groups])
    return [(np.where(index != f)[0], np.where(index == f)[0]) for f in sorted(set(index))]


def word_rates(items: Sequence[FormItem], labels: np.ndarray, train: np.ndarray) -> np.ndarray:
    """Each item's share of positives among the training items with its first word,
    smoothed towards the training share by FIRST_WORD_MIN items of it."""
    prior = labels[train].mean() if len(train) else 0.5
    counts: dict[str, list[float]] = {}
    for i in train:
        counts.setdefault(items[i].first_word, [0.0, 0.0])
        counts[items[i].first_word][0] += float(labels[i])
        counts[items[i].first_word][1] += 1.0
    rates = [counts.get(i.first_word, [0.0, 0.0]) for i in items]
    return np.array([(k + FIRST_WORD_MIN * prior) / (n + FIRST_WORD_MIN) for k, n in rates])


def first_word_scores(items: Sequence[FormItem], positive: str = "harmful") -> np.ndarray:
    """Out-of-fold share of ``positive`` among the items of the training conversations
    with the same first word (``word_rates``)."""
    out = np.full(len(items), 0.5)
    labels = np.array([i.label == positive for i in items])
    for train, test in _folds([i.group for i in items]):
        out[test] = word_rates(items, labels, train)[test]
    return out


def _design(items: Sequence[FormItem], labels: np.ndarray, train: np.ndarray) -> np.ndarray:
    """The numeric features standardised on the training items, and the first word's
    training rate (``word_rates``)."""
    numeric = np.array([i.features for i in items], dtype=float)
    mean, std = numeric[train].mean(axis=0), numeric[train].std(axis=0)
    scaled = (numeric - mean) / np.where(std > 0, std, 1.0)
    return np.hstack([scaled, word_rates(items, labels, train)[:, None]])


def surface_scores(
    items: Sequence[FormItem], positive: str = "harmful", train_mask: np.ndarray | None = None
) -> np.ndarray:
    """The probability of ``positive`` by a logistic regression on every form feature and
    the first word: out of fold by conversation, or, given ``train_mask``, fitted on those
    items alone and applied to all."""
    linear = require("fit", FEATURE, "sklearn.linear_model")
    labels = np.array([i.label == positive for i in items])
    out = np.full(len(items), 0.5)
    splits = (
        _folds([i.group for i in items])
        if train_mask is None
        else [(np.where(train_mask)[0], np.arange(len(items)))]
    )
    for train, test in splits:
        if len(set(labels[train])) < 2:
            continue
        design = _design(items, labels, train)
        model = linear.LogisticRegression(max_iter=2000, class_weight="balanced")
        model.fit(design[train], labels[train])
        out[test] = model.predict_proba(design[test])[:, 1]
    return out


def _auc(labels: np.ndarray, scores: np.ndarray) -> float | None:
    if labels.all() or not labels.any():
        return None
    metrics = require("fit", FEATURE, "sklearn.metrics")
    return float(metrics.roc_auc_score(labels, scores))


def form_audit(items: Sequence[FormItem]) -> dict[str, Any]:
    """AUC for harmful against useful of each feature, of the regression on all of them,
    and by attack kind; and whether each is within bounds (JSON-ready)."""
    pair = [i for i in items if i.label in ("harmful", "useful")]
    labels = np.array([i.label == "harmful" for i in pair])
    numeric = np.array([i.features for i in pair], dtype=float).reshape(len(pair), -1)
    features: dict[str, float | None] = {
        name: _auc(labels, numeric[:, k]) if len(pair) else None
        for k, name in enumerate(FORM_FEATURES)
    }
    features["first_word"] = _auc(labels, first_word_scores(pair)) if len(pair) else None
    classifier = _auc(labels, surface_scores(pair)) if len(pair) else None
    by_kind: dict[str, dict[str, float | None]] = {}
    for kind in sorted({i.attack_kind for i in pair if i.label == "harmful" and i.attack_kind}):
        chosen = np.array([i.label == "useful" or i.attack_kind == kind for i in pair])
        by_kind[kind] = {
            name: _auc(labels[chosen], numeric[chosen][:, k])
            for k, name in enumerate(FORM_FEATURES)
        }
    lo, hi = AUC_BOUNDS
    return {
        "items": {"harmful": int(labels.sum()), "useful": int((~labels).sum())},
        "groups": len({i.group for i in pair}),
        "features": features,
        "classifier": classifier,
        "within_bounds": all(v is None or lo <= v <= hi for v in features.values())
        and (classifier is None or classifier <= CLASSIFIER_LIMIT),
        "by_kind": by_kind,
    }
