"""``cmi-inspect audit --dataset xl``: what XL v5 holds, whether a memory's text alone gives its
label away, and how far simple selectors keep its confusers.

- **Counts**: examples by conversation, group and family; confusers an example; examples
  *in pool* (a confuser in the top ``POOL_DEPTH`` of BM25 or e5 over the store); examples
  whose evidence holds no *rare question word* (a content word of the question found in
  at most ``baselines.RARE_TURNS`` turns of the conversation: LoCoMo's questions were
  written from their evidence's own words, which a real user cannot do).
- **Question-blind audit** on answerable examples, harmful against useful memories: each
  memory-only form feature's AUC, gradient-boosted trees on them and a word 1-3-gram
  classifier on the memory's text, each scored on a conversation the fit never read.
- **Selection rows** at k = 1, 3, 5 on the confirmed examples (and on the stratum without a
  rare question word): useful F1, confuser adoption (the share of confusers in the top k)
  and *excess* adoption (minus the adoption of never-labelled turns at the confusers' BM25
  ranks, so that keeping fewer memories is not read as avoiding harm), for BM25, e5, BM25
  over the asked person's turns, a rare-word match, a gold-word-overlap oracle and an
  evidence-likeness classifier; the unanswerable family split by who spoke the confuser.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from cmi_inspect.causal_locomo.audit import FEATURE
from cmi_inspect.causal_locomo.data import ExampleRecord
from cmi_inspect.causal_locomo.form_audit import FORM_FEATURES, form_items
from cmi_inspect.causal_locomo.xl.baselines import (
    Example,
    Ranked,
    Ranker,
    Store,
    e5_order,
    examples,
    rank_asked_speaker,
    rank_bm25,
    rank_gold_overlap,
    rank_rare_word,
    rare_words,
    selection_rows,
)
from cmi_inspect.causal_locomo.xl.locomo import Conversation, normalise_evidence
from cmi_inspect.extras import require

POOL_DEPTH = 20
SEED = 0
BLIND_FEATURES = tuple(f for f in FORM_FEATURES if f != "question_overlap")
"""The form features that read the memory (and its store) alone, not the question."""


def labelled_turns(convs: dict[str, Conversation], exs: Sequence[Example]) -> dict[str, set[str]]:
    """Per conversation, every turn any LoCoMo question rests on or any example labels."""
    out: dict[str, set[str]] = defaultdict(set)
    for name, conv in convs.items():
        for item in conv.qa:
            out[name] |= set(normalise_evidence(item.get("evidence", [])))
    for e in exs:
        out[e.conversation] |= set(e.meta["useful"] + e.meta["confusers"] + e.meta["neutral"])
    return out


def _auc(labels: np.ndarray, scores: np.ndarray) -> float | None:
    if labels.all() or not labels.any():
        return None
    metrics = require("fit", FEATURE, "sklearn.metrics")
    return round(float(metrics.roc_auc_score(labels, scores)), 4)


def _out_of_fold(
    groups: np.ndarray, labels: np.ndarray, fit: Callable[[np.ndarray, np.ndarray], Any]
) -> np.ndarray:
    """Each conversation's scores from a model fitted on the others (``fit`` returns a
    scorer of row indices)."""
    scores = np.full(len(labels), 0.5)
    for group in sorted(set(groups)):
        train, test = np.where(groups != group)[0], np.where(groups == group)[0]
        if len(set(labels[train])) < 2:
            continue
        scores[test] = fit(train, labels[train])(test)
    return scores


def ngram_scores(texts: Sequence[str], groups: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """A word 1-3-gram TF-IDF logistic regression on the text alone, one conversation out."""
    text = require("fit", FEATURE, "sklearn.feature_extraction.text")
    linear = require("fit", FEATURE, "sklearn.linear_model")

    def fit(train: np.ndarray, y: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
        vectors = text.TfidfVectorizer(ngram_range=(1, 3), min_df=2, sublinear_tf=True)
        x = vectors.fit_transform([texts[i] for i in train])
        model = linear.LogisticRegression(max_iter=2000, C=1.0).fit(x, y)
        return lambda test: model.predict_proba(vectors.transform([texts[i] for i in test]))[:, 1]

    return _out_of_fold(groups, labels, fit)


def tree_scores(design: np.ndarray, groups: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Gradient-boosted trees on ``design``, one conversation out."""
    ensemble = require("fit", FEATURE, "sklearn.ensemble")

    def fit(train: np.ndarray, y: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
        model = ensemble.HistGradientBoostingClassifier(random_state=SEED).fit(design[train], y)
        return lambda test: model.predict_proba(design[test])[:, 1]

    return _out_of_fold(groups, labels, fit)


def blind_audit(exs: Sequence[Example]) -> dict[str, Any]:
    """Harmful against useful memories of answerable examples, from the memory alone."""
    answerable = [e.record for e in exs if e.meta["answerable"]]
    items = form_items(answerable)
    labels = np.array([i.label == "harmful" for i in items])
    groups = np.array([i.group for i in items])
    columns = [FORM_FEATURES.index(f) for f in BLIND_FEATURES]
    design = np.array([i.features for i in items], dtype=float)[:, columns]
    texts = {(r.example_id, m.memory_id): m.content for r in answerable for m in r.memory_bank}
    memory_texts = [texts[(i.example_id, i.memory_id)] for i in items]
    return {
        "items": {"harmful": int(labels.sum()), "useful": int((~labels).sum())},
        "features": {f: _auc(labels, design[:, k]) for k, f in enumerate(BLIND_FEATURES)},
        "trees": _auc(labels, tree_scores(design, groups, labels)),
        "ngram": _auc(labels, ngram_scores(memory_texts, groups, labels)),
    }


def evidence_likeness(
    exs: Sequence[Example], labelled: dict[str, set[str]]
) -> tuple[Ranked, float | None]:
    """A memory-only classifier of evidence-of-any-question against never-labelled turns
    (word n-grams, one conversation out), re-ranking BM25's top ``POOL_DEPTH``; and its AUC."""
    stores = {e.conversation: e.record.memory_bank for e in exs}
    rows = [(c, m.memory_id, m.content) for c, bank in sorted(stores.items()) for m in bank]
    labels = np.array([m in labelled[c] for c, m, _ in rows])
    groups = np.array([c for c, _, _ in rows])
    scores = ngram_scores([t for _, _, t in rows], groups, labels)
    score = {(c, m): s for (c, m, _), s in zip(rows, scores, strict=True)}
    order = {}
    for e in exs:
        top = e.bm25[:POOL_DEPTH]
        top = sorted(top, key=lambda t: -score[(e.conversation, t)])
        order[e.id] = top + e.bm25[POOL_DEPTH:]
    return Ranked("evidence_likeness", order), _auc(labels, scores)


def xl_audit(
    records: Sequence[ExampleRecord], convs: dict[str, Conversation], e5: bool = True
) -> dict[str, Any]:
    """The whole v5 audit, JSON-ready."""
    exs = examples(records)
    labelled = labelled_turns(convs, exs)
    first = {e.conversation: e for e in reversed(exs)}
    by_conv = {c: Store(e, labelled[c]) for c, e in first.items()}
    stores = {e.id: by_conv[e.conversation] for e in exs}
    rankers: dict[str, Ranker] = {
        "bm25": rank_bm25,
        "asked_speaker": rank_asked_speaker,
        "rare_word": rank_rare_word,
        "gold_overlap_oracle": rank_gold_overlap,
    }
    ranked = [Ranked(n, {e.id: f(e, stores[e.id]) for e in exs}) for n, f in rankers.items()]
    if e5:
        ranked.insert(1, Ranked("e5", e5_order(exs)))
    likeness, likeness_auc = evidence_likeness(exs, labelled)
    ranked.append(likeness)
    confirmed = [e for e in exs if e.meta["group"] == "confirmed"]
    pool = {e.id for e in confirmed if in_pool(e, ranked)}
    no_rare = [e for e in confirmed if not evidence_has_rare_word(e, stores[e.id])]
    unanswerable = [e for e in exs if e.meta["group"] == "unanswerable"]
    by_speaker = {
        who: [e for e in unanswerable if who in e.meta["confuser_speakers"].values()]
        for who in ("asked", "other")
    }
    return {
        "counts": _counts(exs, confirmed, pool, no_rare),
        "blind": blind_audit(exs),
        "evidence_likeness_auc": likeness_auc,
        "selection": {
            "confirmed": selection_rows(confirmed, stores, ranked),
            "in_pool": selection_rows([e for e in confirmed if e.id in pool], stores, ranked),
            "no_rare_word": selection_rows(no_rare, stores, ranked),
            **{
                f"unanswerable_{who}": selection_rows(group, stores, ranked)
                for who, group in by_speaker.items()
                if group
            },
        },
    }


def in_pool(e: Example, ranked: Sequence[Ranked]) -> bool:
    """A confuser in the top ``POOL_DEPTH`` of BM25 or e5."""
    tops = [r.order[e.id][:POOL_DEPTH] for r in ranked if r.name in ("bm25", "e5")]
    return any(set(top) & set(e.meta["confusers"]) for top in tops)


def evidence_has_rare_word(e: Example, store: Store) -> bool:
    """Some evidence turn holds one of the question's rare words."""
    rare = rare_words(e.question, store.bags)
    return any(rare & store.bags[t] for t in e.meta["evidence"])


def _counts(
    exs: Sequence[Example], confirmed: Sequence[Example], pool: set[str], no_rare: Sequence[Example]
) -> dict[str, Any]:
    by_conv: dict[str, Counter[str]] = defaultdict(Counter)
    for e in exs:
        by_conv[e.conversation][e.meta["group"]] += 1
    return {
        "examples": len(exs),
        "groups": dict(sorted(Counter(e.meta["group"] for e in exs).items())),
        "families": dict(sorted(Counter(e.record.task_family for e in exs).items())),
        "by_conversation": {c: dict(sorted(v.items())) for c, v in sorted(by_conv.items())},
        "confusers_per_confirmed": dict(
            sorted(Counter(str(len(e.meta["confusers"])) for e in confirmed).items())
        ),
        "confirmed_in_pool": len(pool),
        "confirmed_no_rare_word": len(no_rare),
        "unanswerable_share": round(
            sum(e.meta["group"] == "unanswerable" for e in exs) / len(exs), 4
        )
        if exs
        else 0.0,
    }


def _table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    return lines + ["| " + " | ".join(str(v) for v in row) + " |" for row in rows]


def audit_table(result: dict[str, Any], title: str) -> str:
    """The audit as Markdown tables."""
    c, b = result["counts"], result["blind"]
    groups = sorted(c["groups"])
    lines = [
        f"## {title}",
        "",
        f"{c['examples']} examples: {c['groups']}; families {c['families']}.",
        f"Confirmed in pool (a confuser in the top {POOL_DEPTH} of BM25 or e5): "
        f"{c['confirmed_in_pool']}; evidence without a rare question word: "
        f"{c['confirmed_no_rare_word']}; unanswerable share {c['unanswerable_share']}.",
        "",
    ]
    by_conv = c["by_conversation"].items()
    lines += _table(
        ["conversation", *groups], [[k, *(v.get(g, 0) for g in groups)] for k, v in by_conv]
    )
    harmful, useful = b["items"]["harmful"], b["items"]["useful"]
    lines += ["", f"### Question-blind: harmful ({harmful}) against useful ({useful})", ""]
    rows = [*b["features"].items(), ("boosted trees", b["trees"]), ("word 1-3-grams", b["ngram"])]
    lines += _table(["measure (one conversation out where fitted)", "AUC"], rows)
    lines += [
        "",
        "Evidence-likeness (evidence of any question against never-labelled turns, text "
        f"alone): AUC {result['evidence_likeness_auc']}.",
    ]
    header = ["selector", "k", "useful F1", "confuser adoption", "excess", "kept a confuser"]
    keys = ["selector", "k", "useful_f1", "confuser_adoption", "excess_adoption", "kept_a_confuser"]
    for stratum, rows_ in result["selection"].items():
        count = rows_[0]["examples"] if rows_ else 0
        lines += ["", f"### Selection, {stratum} ({count} examples)", ""]
        lines += _table(header, [[r[k] for k in keys] for r in rows_])
    return "\n".join(lines)
