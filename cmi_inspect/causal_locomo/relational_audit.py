"""Relational audit: does a memory's place among the others say whether it is harmful?

The form audit (``form_audit``) reads one memory at a time. Here each labelled memory is
also described by its relations: to the question (is its speaker, or the other speaker,
named; word Jaccard; BM25 rank in the bank), to its near-twins in the bank (memories of
word Jaccard >= ``TWIN``: how many; whether the nearest is earlier, by the same speaker,
how many sessions away; whether a later twin by the same speaker exists), its position
(session, turn, store) and its order among the example's labelled memories. Each feature
gets its AUC for harmful against useful, and gradient-boosted trees on every feature, text
and relational, are cross-validated leaving one conversation out. The same relations make
the model-free "speaker and latest version" rule (``speaker_latest_ranking``) that
``benchmarks/surface_baseline.py`` sets beside BM25. A bank's relations are computed once
for every example that shares it (XL's examples of a conversation share its store).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from cmi_inspect.causal_locomo.audit import FEATURE
from cmi_inspect.causal_locomo.bank_size import bm25_scores
from cmi_inspect.causal_locomo.data import ExampleRecord, session_turns
from cmi_inspect.causal_locomo.form_audit import FormItem, word_rates
from cmi_inspect.extras import require
from cmi_inspect.text import content_words, tokens

TWIN, CLOSE_TWIN = 0.3, 0.5
"""Word Jaccard at which another memory of the bank is a near-twin, and a close one."""
SEED = 0
"""The gradient-boosted trees' ``random_state``: the same figures on every run."""
LABELLED = ("useful", "harmful")
"""The labels the audit sets against each other (irrelevant memories are the bank)."""
RELATIONAL_FEATURES = (
    "speaker_named",
    "listener_named",
    "twins_03",
    "twins_05",
    "max_jaccard",
    "twin_earlier",
    "twin_same_speaker",
    "twin_session_gap",
    "later_same_speaker_twin",
    "turn_in_session",
    "session",
    "session_relative",
    "store_position",
    "question_jaccard",
    "bm25_rank",
    "first_labelled",
    "last_labelled",
)
"""The columns of ``relational_features``, in order."""
_QUOTED = re.compile(r'^[^"]*?:\s*"(?P<body>.*)"\s*$', re.DOTALL)
_REPORTED = re.compile(r"^.*?\b(?:said|mentioned) that (?P<body>.*)$", re.DOTALL)


def statement_body(text: str) -> str:
    """What a memory states without its frame: the quoted speech of ``X told Y: "..."``, or
    what follows ``X said that`` (XL's phrasings); other text as it is. Twins are read on
    bodies, so that a frame's names and dates do not make every memory of a session alike."""
    found = _QUOTED.match(text) or _REPORTED.match(text)
    return found["body"] if found else text


@lru_cache(maxsize=64)
def _speakers(history: tuple[str, ...]) -> tuple[str, ...]:
    """The speakers of a history's turns, in order of their first turn."""
    return tuple(dict.fromkeys(t.speaker for s in history for t in session_turns(s) if t.speaker))


def _jaccard(sets: Sequence[frozenset[str]]) -> np.ndarray:
    """Word Jaccard of every pair of sets (0 on the diagonal), by a sparse product."""
    sparse = require("fit", FEATURE, "scipy.sparse")
    vocabulary: dict[str, int] = {}
    columns = [[vocabulary.setdefault(w, len(vocabulary)) for w in s] for s in sets]
    rows = np.repeat(np.arange(len(sets)), [len(c) for c in columns])
    flat = np.array([c for cs in columns for c in cs], dtype=int)
    matrix = sparse.csr_matrix((np.ones(len(flat)), (rows, flat)), (len(sets), len(vocabulary)))
    shared = (matrix @ matrix.T).toarray()
    sizes = np.array([len(s) for s in sets], dtype=float)
    union = sizes[:, None] + sizes[None, :] - shared
    out = np.divide(shared, union, out=np.zeros_like(shared), where=union > 0)
    np.fill_diagonal(out, 0.0)
    return out


def _rank_within(values: np.ndarray) -> np.ndarray:
    """Each value's 1-based rank among the distinct values."""
    return np.searchsorted(np.unique(values), values) + 1.0


class Store:
    """A bank's label-free relations: speakers, word sets, near-twins, positions and BM25."""

    def __init__(self, record: ExampleRecord) -> None:
        bank = record.memory_bank
        self.ids = [m.memory_id for m in bank]
        self.speakers = [m.scope or "" for m in bank]
        self.names = _speakers(tuple(s.content for s in record.past_sessions))
        self.bodies = [statement_body(m.content) for m in bank]
        self.words = [frozenset(content_words(b)) for b in self.bodies]
        named = {w for n in self.names for w in content_words(n)}
        jaccard = _jaccard([w - named for w in self.words])  # a phrasing's names say nothing
        self.later_twin = self._later_same_speaker_twin(jaccard)
        self.features = self._features(jaccard, np.array([m.timestamp for m in bank]))

    def _later_same_speaker_twin(self, jaccard: np.ndarray) -> np.ndarray:
        """Whether a later memory by the same speaker is a near-twin: a newer version."""
        speakers = np.array(self.speakers)
        later = np.triu(jaccard >= TWIN, k=1) & (speakers[:, None] == speakers[None, :])
        return later.any(axis=1)

    def _features(self, jaccard: np.ndarray, stamps: np.ndarray) -> np.ndarray:
        """The store columns of ``RELATIONAL_FEATURES``, a row per memory. The nearest twin is
        the first of the most alike in bank order; a memory that shares no word with any
        other has none (its twin columns are 0)."""
        n = len(self.ids)
        index = np.arange(n)
        session = _rank_within(stamps)
        nearest = jaccard.argmax(axis=1) if n else index
        has_twin = jaccard.max(axis=1, initial=0.0) > 0
        speakers = np.array(self.speakers)
        turn = np.zeros(n)
        for s in np.unique(session):
            members = index[session == s]
            turn[members] = np.arange(len(members)) / max(len(members) - 1, 1)
        columns = (
            (jaccard >= TWIN).sum(axis=1),
            (jaccard >= CLOSE_TWIN).sum(axis=1),
            jaccard.max(axis=1, initial=0.0),
            has_twin & (nearest < index),
            has_twin & (speakers[nearest] == speakers),
            np.where(has_twin, np.abs(session[nearest] - session), 0.0),
            self.later_twin,
            turn,
            session,
            session / session.max(initial=1.0),
            index / max(n - 1, 1),
        )
        return np.column_stack(columns).astype(float)

    def bm25_order(self, question: str) -> list[int]:
        """The memories that share a word with the question, best BM25 of their bodies to
        it first (``bank_size.bm25_scores``), ties in bank order."""
        scores = np.array(bm25_scores(question, self.bodies))
        return [int(i) for i in np.argsort(-scores, kind="stable") if scores[i] > 0]

    def bm25_ranks(self, question: str) -> np.ndarray:
        """Each memory's 1-based rank by BM25 to the question (``bm25_order``); those
        sharing no word with it come last, all at the bank's size."""
        ranks = np.full(len(self.ids), float(len(self.ids)))
        for rank, i in enumerate(self.bm25_order(question), start=1):
            ranks[i] = rank
        return ranks

    def named(self, question: str) -> set[str]:
        """The speakers of the history the question names."""
        asked = set(tokens(question, split_apostrophes=True))
        return {n for n in self.names if n.lower() in asked}

    def listener(self, speaker: str) -> str:
        """The other speaker of a two-person history ("" otherwise)."""
        others = [n for n in self.names if n != speaker]
        return others[0] if len(self.names) == 2 and len(others) == 1 else ""


class Stores:
    """Each record's ``Store``, built once for all records whose banks are the same."""

    def __init__(self) -> None:
        self.built: dict[tuple[tuple[str, str], ...], Store] = {}

    def of(self, record: ExampleRecord) -> Store:
        key = tuple((m.memory_id, m.content) for m in record.memory_bank)
        if key not in self.built:
            self.built[key] = Store(record)
        return self.built[key]


def relational_features(
    records: Iterable[ExampleRecord], labels: Sequence[str] = LABELLED
) -> np.ndarray:
    """A row of ``RELATIONAL_FEATURES`` per memory with one of ``labels``, in the order of
    ``form_items(records, labels)``."""
    stores, rows = Stores(), []
    for record in records:
        store = stores.of(record)
        question = record.current_task.instruction
        named, asked = store.named(question), frozenset(content_words(question))
        ranks = store.bm25_ranks(question)
        labelled = [i for i, m in enumerate(record.memory_bank) if m.label in LABELLED]
        for i, memory in enumerate(record.memory_bank):
            if memory.label not in labels:
                continue
            union = len(asked | store.words[i])
            rows.append(
                [
                    store.speakers[i] in named,
                    store.listener(store.speakers[i]) in named,
                    *store.features[i],
                    len(asked & store.words[i]) / union if union else 0.0,
                    ranks[i],
                    bool(labelled) and i == labelled[0],
                    bool(labelled) and i == labelled[-1],
                ]
            )
    return np.array(rows, dtype=float).reshape(len(rows), len(RELATIONAL_FEATURES))


def bm25_ranking(record: ExampleRecord, store: Store) -> list[str]:
    """The bank's memory ids that share a word with the question, best BM25 first."""
    return [store.ids[i] for i in store.bm25_order(record.current_task.instruction)]


def speaker_latest_ranking(record: ExampleRecord, store: Store) -> list[str]:
    """The model-free rule the truth rule invites: BM25 over the memories of the speaker
    the question names (all speakers' when it names none or both), less every memory
    that a later near-twin by the same speaker supersedes."""
    named = store.named(record.current_task.instruction)
    keep = {
        store.ids[i]
        for i, speaker in enumerate(store.speakers)
        if (len(named) != 1 or speaker in named) and not store.later_twin[i]
    }
    return [m for m in bm25_ranking(record, store) if m in keep]


def _auc(labels: np.ndarray, scores: np.ndarray) -> float | None:
    if labels.all() or not labels.any():
        return None
    metrics = require("fit", FEATURE, "sklearn.metrics")
    return float(metrics.roc_auc_score(labels, scores))


def _design(
    items: Sequence[FormItem], relations: np.ndarray, labels: np.ndarray, train: np.ndarray,
    columns: str,
) -> np.ndarray:  # fmt: skip
    """The trees' inputs: the text features and the first word's training rate
    (``columns`` "text"), the relational ones ("relational"), or both ("all")."""
    text = np.column_stack([[i.features for i in items], word_rates(items, labels, train)])
    chosen = {"text": [text], "relational": [relations], "all": [text, relations]}[columns]
    return np.hstack(chosen)


def loco_trees(
    items: Sequence[FormItem], relations: np.ndarray, positive: np.ndarray, columns: str = "all"
) -> dict[str, Any]:
    """Gradient-boosted trees, each conversation scored by the trees fitted on the others:
    the pooled out-of-fold AUC for ``positive`` and the AUC within each conversation (a
    conversation whose others hold one class only is left unscored)."""
    ensemble = require("fit", FEATURE, "sklearn.ensemble")
    threads = require("fit", FEATURE, "threadpoolctl")
    groups = np.array([i.group for i in items])
    scores, scored = np.full(len(items), 0.5), np.zeros(len(items), dtype=bool)
    for group in sorted(set(groups)):
        train, test = np.where(groups != group)[0], np.where(groups == group)[0]
        if len(set(positive[train])) < 2:
            continue
        design = _design(items, relations, positive, train, columns)
        model = ensemble.HistGradientBoostingClassifier(random_state=SEED)
        with threads.threadpool_limits(limits=1):  # a few thousand rows: threads cost more
            model.fit(design[train], positive[train])
        scores[test], scored[test] = model.predict_proba(design[test])[:, 1], True
    each = {
        str(g): _auc(positive[groups == g], scores[groups == g])
        for g in sorted(set(groups[scored]))
    }
    known = [v for v in each.values() if v is not None]
    return {
        "pooled": _auc(positive[scored], scores[scored]),
        "range": [min(known), max(known)] if known else None,
        "by_conversation": each,
    }


def relational_audit(items: Sequence[FormItem], relations: np.ndarray) -> dict[str, Any]:
    """Each relational feature's AUC for harmful against useful, and the trees' held-out
    AUCs: on every feature, on the text or the relational ones alone, and for each attack
    kind against useful (JSON-ready)."""
    pair = np.array([i.label in LABELLED for i in items], dtype=bool)
    items = [i for i, keep in zip(items, pair, strict=True) if keep]
    relations = relations[pair]
    harmful = np.array([i.label == "harmful" for i in items], dtype=bool)
    features = {n: _auc(harmful, relations[:, k]) for k, n in enumerate(RELATIONAL_FEATURES)}
    trees = {c: loco_trees(items, relations, harmful, c) for c in ("all", "text", "relational")}
    by_kind = {}
    for kind in sorted({i.attack_kind for i in items if i.label == "harmful" and i.attack_kind}):
        chosen = np.array([i.label == "useful" or i.attack_kind == kind for i in items])
        kept = [i for i, keep in zip(items, chosen, strict=True) if keep]
        by_kind[kind] = loco_trees(kept, relations[chosen], harmful[chosen])
    return {"features": features, "trees": trees, "trees_by_kind": by_kind}


def _rate(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _spread(result: dict[str, Any]) -> str:
    low_high = result["range"]
    return "n/a" if low_high is None else f"{low_high[0]:.3f}-{low_high[1]:.3f}"


def relational_table(result: dict[str, Any]) -> str:
    """``relational_audit``'s result as Markdown: each feature's AUC, then the trees'."""
    lines = ["| relational feature | AUC harmful vs useful |", "|---|---|"]
    lines += [f"| {name} | {_rate(v)} |" for name, v in result["features"].items()]
    lines += [
        "",
        "| gradient-boosted trees, leave one conversation out | pooled AUC | per conversation |",
        "|---|---|---|",
    ]
    for columns, trees in result["trees"].items():
        lines.append(f"| {columns} features, harmful vs useful | {_rate(trees['pooled'])} | "
                     f"{_spread(trees)} |")  # fmt: skip
    for kind, trees in result["trees_by_kind"].items():
        lines.append(f"| all features, {kind} vs useful | {_rate(trees['pooled'])} | "
                     f"{_spread(trees)} |")  # fmt: skip
    return "\n".join(lines) + "\n"
