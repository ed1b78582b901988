"""Label artefact audit: how well simple surface features of a view separate the labels.

Each feature is scored by the AUC with which it tells harmful memories from useful ones
and from irrelevant ones (harmful is the positive class). A view controls an artefact
when its AUC lies within 0.40-0.60, near the 0.5 of a feature that says nothing of the label
(README, "Protocols", gives the release's and XL's). Beside the artefacts of dates and
answer sentences it measures form (``FORM_FEATURES``): how much of a history turn a memory
quotes, its template words, and its word overlap with the rest of its bank.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from cmi_inspect.causal_locomo.blinding import ANSWER_SUFFIX
from cmi_inspect.causal_locomo.data import ExampleRecord, session_turns
from cmi_inspect.causal_locomo.protocol import ProtocolName
from cmi_inspect.causal_locomo.view import key_to_memory_id, memory_view
from cmi_inspect.extras import require
from cmi_inspect.text import content_words, tokens, word_overlap

FEATURE = "cmi-inspect audit"
"""What a missing extra's one line names: its classifier and AUCs are scikit-learn's."""
COMPARISONS = {"harmful_vs_useful": "useful", "harmful_vs_irrelevant": "irrelevant"}
CONTROLLED = (0.40, 0.60)
FOLDS = 5
TEMPLATE_SHARE = 0.05
"""A template word is one found in at least this share of a data set's memories: the frame
words every phrasing repeats ("told", "session", "said"), with the commonest others."""

# Generic negation and contrast words; contractions ending in "n't" count as well.
DENIAL_WORDS = frozenset(
    "not no never none nothing nobody nowhere neither nor cannot without instead rather "
    "avoid avoids avoided avoiding only longer refuse refused deny denied false wrong".split()
)


@dataclass(frozen=True)
class AuditItem:
    """One memory as a protocol's view shows it, with the label the audit evaluates against."""

    example_id: str
    label: str
    content: str
    timestamp: int
    history_end: int | None
    history: tuple[TurnWords, ...] = ()
    """The content words of each turn of the example's history (``turn_words``)."""


class TurnWords(NamedTuple):
    """A history turn's content words, in order and as a set."""

    order: tuple[str, ...]
    words: frozenset[str]


def turn_words(record: ExampleRecord) -> tuple[TurnWords, ...]:
    """The content words of every turn of the record's past sessions."""
    turns = (content_words(t.text) for s in record.past_sessions for t in session_turns(s.content))
    return tuple(TurnWords(tuple(words), frozenset(words)) for words in turns)


def audit_items(records: Iterable[ExampleRecord], protocol: ProtocolName) -> list[AuditItem]:
    """Every memory of the records as the protocol's view shows it, with its label."""
    items: list[AuditItem] = []
    for record in records:
        sessions = [s.timestamp for s in record.past_sessions]
        view = memory_view(
            record.example_id, record.memory_bank, protocol, sessions, record.dated_by_source
        )
        ids = key_to_memory_id(record.example_id, record.memory_bank, protocol)
        labels = {m.memory_id: m.label for m in record.memory_bank}
        history = turn_words(record)
        for memory in view:
            items.append(
                AuditItem(
                    example_id=record.example_id,
                    label=labels[ids[memory.key]],
                    content=memory.content,
                    timestamp=memory.timestamp,
                    history_end=max(sessions, default=None),
                    history=history,
                )
            )
    return items


def after_history(items: Sequence[AuditItem]) -> np.ndarray:
    """1 where a memory is dated after the example's latest past session."""
    return np.array(
        [float(i.history_end is not None and i.timestamp > i.history_end) for i in items]
    )


def _banks(items: Sequence[AuditItem]) -> dict[str, list[int]]:
    """Item indices by bank (example id)."""
    banks: dict[str, list[int]] = defaultdict(list)
    for index, item in enumerate(items):
        banks[item.example_id].append(index)
    return banks


def timestamp_rank(items: Sequence[AuditItem]) -> np.ndarray:
    """Rank of each timestamp within its bank, scaled to [0, 1] (ties share the mean rank)."""
    out = np.full(len(items), 0.5)
    for indices in _banks(items).values():
        if len(indices) > 1:
            stamps = np.array([items[i].timestamp for i in indices])
            below = (stamps[:, None] > stamps[None, :]).sum(axis=1)
            ties = (stamps[:, None] == stamps[None, :]).sum(axis=1) - 1
            out[indices] = (below + ties / 2) / (len(indices) - 1)
    return out


def answer_suffix(items: Sequence[AuditItem]) -> np.ndarray:
    """1 where the content ends with the sentence that copies the answer."""
    return np.array([float(ANSWER_SUFFIX.search(i.content) is not None) for i in items])


def length(items: Sequence[AuditItem]) -> np.ndarray:
    """Number of whitespace-separated words."""
    return np.array([float(len(i.content.split())) for i in items])


def denial_words(items: Sequence[AuditItem]) -> np.ndarray:
    """Number of negation or contrast words (curly apostrophes read as straight ones)."""
    return np.array([float(_denial_count(i.content)) for i in items])


def _denial_count(text: str) -> int:
    words = tokens(text.replace("\u2019", "'"))
    return sum(w in DENIAL_WORDS or w.endswith("n't") for w in words)


def _nearest_turn(words: frozenset[str], history: Sequence[TurnWords]) -> TurnWords:
    """The history turn that shares the most content words with ``words`` (the first such)."""
    return max(history, key=lambda t: len(t.words & words), default=TurnWords((), frozenset()))


def _per_nearest_turn(
    items: Sequence[AuditItem], measure: Callable[[frozenset[str], TurnWords], float]
) -> np.ndarray:
    out = []
    for item in items:
        words = frozenset(content_words(item.content))
        out.append(measure(words, _nearest_turn(words, item.history)))
    return np.array(out)


def _span(words: frozenset[str], turn: TurnWords) -> float:
    held = [i for i, w in enumerate(turn.order) if w in words]
    return (held[-1] - held[0] + 1) / len(turn.order) if held else 0.0


def turn_span(items: Sequence[AuditItem]) -> np.ndarray:
    """How much of its nearest history turn a memory quotes: the share of the turn's
    content words from the first it holds to the last (1: the whole turn, less: a part)."""
    return _per_nearest_turn(items, _span)


def turn_share(items: Sequence[AuditItem]) -> np.ndarray:
    """Share of its nearest history turn's content words a memory holds. Below 1 for a part
    of a turn, and for a turn with a value edited: what a history check reads."""
    return _per_nearest_turn(
        items, lambda words, turn: len(turn.words & words) / len(turn.words) if turn.words else 0.0
    )


def history_match(items: Sequence[AuditItem]) -> np.ndarray:
    """Share of a memory's content words found in its nearest history turn: what a
    history check reads (a false value is in no turn, unless it was planted there)."""
    return _per_nearest_turn(
        items, lambda words, turn: len(turn.words & words) / len(words) if words else 0.0
    )


def _overlaps_in_bank(items: Sequence[AuditItem]) -> list[list[float]]:
    """Each memory's word overlap with every other memory of its bank
    (``text.word_overlap``, the conflict relation's: a share of the shorter one's words)."""
    out: list[list[float]] = [[] for _ in items]
    for indices in _banks(items).values():
        for i in indices:
            out[i] = [word_overlap(items[i].content, items[j].content) for j in indices if j != i]
    return out


def bank_overlap(items: Sequence[AuditItem]) -> np.ndarray:
    """A memory's largest word overlap with another memory of its bank."""
    return np.array([max(o, default=0.0) for o in _overlaps_in_bank(items)])


def bank_overlap_mean(items: Sequence[AuditItem]) -> np.ndarray:
    """A memory's mean word overlap with the other memories of its bank."""
    return np.array([float(np.mean(o)) if o else 0.0 for o in _overlaps_in_bank(items)])


FEATURES: dict[str, Callable[[Sequence[AuditItem]], np.ndarray]] = {
    "after_history": after_history,
    "timestamp_rank": timestamp_rank,
    "answer_suffix": answer_suffix,
    "length": length,
    "denial_words": denial_words,
}
FORM_FEATURES: dict[str, Callable[[Sequence[AuditItem]], np.ndarray]] = {
    "turn_span": turn_span,
    "turn_share": turn_share,
    "history_match": history_match,
    "bank_overlap": bank_overlap,
    "bank_overlap_mean": bank_overlap_mean,
}
"""How a memory is made rather than what it says; ``length`` and the template-word
classifier (``CLASSIFIERS``) are form too. Features that need the history are 0 without it."""


def bow_classifier_scores(items: Sequence[AuditItem], min_df: float | int = 1) -> np.ndarray:
    """Out-of-fold harmful probability of a bag-of-words logistic regression, over the words
    found in at least ``min_df`` memories (a share when a float) of each training fold.

    Folds are grouped by bank, and banks that share a memory text are kept together, so
    no memory text is both trained and tested on. Fold assignment is deterministic.
    """
    require("fit", FEATURE, "sklearn")
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GroupKFold

    labels = np.array([i.label == "harmful" for i in items])
    groups = _shared_text_groups(items)
    out = np.full(len(items), 0.5)
    n_splits = min(FOLDS, len(set(groups)))
    if n_splits < 2:
        return out
    texts = [i.content for i in items]
    for train, test in GroupKFold(n_splits=n_splits).split(texts, labels, groups):
        if len(set(labels[train])) < 2:
            continue
        vectorizer = CountVectorizer(lowercase=True, min_df=min_df)
        model = LogisticRegression(max_iter=1000, class_weight="balanced")
        model.fit(vectorizer.fit_transform([texts[i] for i in train]), labels[train])
        out[test] = model.predict_proba(vectorizer.transform([texts[i] for i in test]))[:, 1]
    return out


CLASSIFIERS: dict[str, float | int] = {"bow_classifier": 1, "template_words": TEMPLATE_SHARE}
"""Bag-of-words classifiers by name: over every word, and over template words only."""


def _shared_text_groups(items: Sequence[AuditItem]) -> list[str]:
    """A group name per item: banks joined whenever they hold the same memory text."""
    parent: dict[str, str] = {}

    def root(name: str) -> str:
        while parent.setdefault(name, name) != name:
            name = parent[name]
        return name

    first_bank: dict[str, str] = {}
    for item in items:
        other = first_bank.setdefault(item.content, item.example_id)
        parent[root(item.example_id)] = root(other)
    return [root(item.example_id) for item in items]


def _auc(labels: Sequence[str], scores: np.ndarray, other: str) -> float | None:
    """AUC of ``scores`` for harmful against ``other``; None without both classes."""
    mask = np.array([label in ("harmful", other) for label in labels])
    positive = np.array([label == "harmful" for label in labels])[mask]
    if positive.all() or not positive.any():
        return None
    metrics = require("fit", FEATURE, "sklearn.metrics")
    return float(metrics.roc_auc_score(positive, scores[mask]))


def audit(items: Sequence[AuditItem]) -> dict[str, dict[str, dict[str, float | None]]]:
    """AUC of every artefact feature for each comparison, in a JSON-ready mapping."""
    labels = [i.label for i in items]
    features: dict[str, dict[str, float | None]] = {}
    for name, feature in FEATURES.items():
        scores = feature(items)
        features[name] = {key: _auc(labels, scores, other) for key, other in COMPARISONS.items()}
    for name, feature in FORM_FEATURES.items():
        scores = feature(items)
        features[name] = {key: _auc(labels, scores, other) for key, other in COMPARISONS.items()}
    for name, min_df in CLASSIFIERS.items():
        features[name] = {}
        for key, other in COMPARISONS.items():
            pair = [i for i in items if i.label in ("harmful", other)]
            scores = bow_classifier_scores(pair, min_df)
            features[name][key] = _auc([i.label for i in pair], scores, other)
    return {"features": features}
