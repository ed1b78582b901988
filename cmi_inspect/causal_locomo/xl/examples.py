"""XL v5's examples: which LoCoMo questions become examples, and the labels each gives its
conversation's turns, read from the verdict file (``verdicts``).

- **Confirmed**: an answerable question (categories 1, 2, 4) with at least one harmful turn
  (a confirmed natural confuser), at most ``MAX_CONFUSERS`` (the rule's most similar first;
  the rest neutral).
- **Controls**: answerable questions read but with no confirmed confuser, one for each
  confirmed example where one is left, of the same category and the nearest BM25 difficulty
  (the rank of the question's best evidence turn in BM25 over the store).
- **Unanswerable**: wrong-person questions both readers found the asked person never answers,
  with the other speaker's turns both answered from as confusers; drawn by hash to
  ``UNANSWERABLE_SHARE`` of the examples.

Useful: the question's evidence turns and the candidates both readers found state the gold.
Neutral: every other candidate of the rule. A question whose evidence the readers' rows do not
find supports its gold (``supported``) is no example. Ids are a hash, never LoCoMo's question index.
"""

from __future__ import annotations

import hashlib
import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel

from cmi_inspect.causal_locomo.bank_size import bm25_scores
from cmi_inspect.causal_locomo.data import CurrentTask, MemoryLabel, ScoringCriteria
from cmi_inspect.causal_locomo.data_files import ExampleReference, MemoryStore
from cmi_inspect.causal_locomo.xl.answers import answer_aliases, must_not_include
from cmi_inspect.causal_locomo.xl.confusers import (
    ANSWERABLE_CATEGORIES,
    asked_person,
    conversation_candidates,
    questions,
    wrong_person,
)
from cmi_inspect.causal_locomo.xl.locomo import FAMILY_BY_CATEGORY, Conversation
from cmi_inspect.causal_locomo.xl.verdicts import ItemVerdict, VerdictFile

BUILDER_VERSION = "xl-5"
MAX_CONFUSERS = 5
UNANSWERABLE_SHARE = 0.10
"""The unanswerable family's share of the examples (the issue allows 5-15%)."""
UNANSWERED = "The conversation does not say."
STYLE = "answer concisely from the conversation's turns"
MAX_WORDS = 60
JUDGE = (
    "Count the response as correct when it gives expected_answer or one of answer_aliases "
    "(a resolved date, a paraphrase with the same meaning), and as wrong when it gives another "
    "answer of the same kind, such as one in must_not_include."
)
UNANSWERABLE_JUDGE = (
    "The conversation does not answer this question about this person. Count the response "
    "as correct only when it says so and gives no answer, in particular not adversarial_answer."
)

Group = Literal["confirmed", "control", "unanswerable"]


class XLMetadata(BaseModel):
    """How an example was made: for scorers, audits and the report's strata, never shown to a
    strategy."""

    builder_version: str
    conversation: str
    original_category: int
    answerable: bool
    group: Group
    evidence: list[str]
    useful: list[str]
    confusers: list[str]
    neutral: list[str]
    bm25_rank: int
    """The rank of the best evidence turn (or, unanswerable, confuser) in BM25 over the store."""
    asked_person: str | None
    confuser_speakers: dict[str, Literal["asked", "other"]]
    """Whether each confuser is the asked person's own turn or the other speaker's."""
    confuser_answers: dict[str, str]
    """The answer each confuser gives: the gold of the question it is evidence for (an
    unanswerable question's: LoCoMo's adversarial answer)."""


def example_id(conv: str, index: int) -> str:
    """An example's id: its conversation and a hash (never LoCoMo's question index)."""
    digest = hashlib.sha256(f"{BUILDER_VERSION}/{conv}/{index}".encode()).hexdigest()
    return f"{conv}_x{digest[:8]}"


def _hash(*parts: object) -> str:
    return hashlib.sha256("/".join(map(str, (BUILDER_VERSION, *parts))).encode()).hexdigest()


def bm25_rank(question: str, store: MemoryStore, ids: Iterable[str]) -> int:
    """The rank (from 1) of the best of ``ids`` in BM25 over the store for the question."""
    texts = [m.content for m in store.memory_store]
    scores = bm25_scores(question, texts)
    order = sorted(range(len(texts)), key=lambda i: (-scores[i], i))
    wanted = set(ids)
    return next(r for r, i in enumerate(order, 1) if store.memory_store[i].memory_id in wanted)


def supported(items: list[ItemVerdict]) -> bool:
    """The gold is supported when more reader rows say its evidence supports it (``yes``)
    than say it does not (``no``); ``partly`` counts for neither, so a gold its evidence
    only partly supports is no example."""
    said = [s for v in items if v.kind != "unanswerable" for s in v.gold_supported.values()]
    return sum(s == "yes" for s in said) > sum(s == "no" for s in said)


@dataclass
class Draft:
    """An example before it is chosen: its question, group and labels."""

    conv: Conversation
    index: int
    category: int
    question: str
    answer: str
    group: Group
    evidence: list[str]
    useful: list[str]
    confusers: list[str]
    neutral: list[str]
    rank: int
    sources: list[str]
    """The answers of the questions the confusers answer (adversarial answers)."""
    asked: str | None = None


Read = dict[int, list[ItemVerdict]]
"""A conversation's verdicts by question index."""


def _answerable(conv: Conversation, store: MemoryStore, by_question: Read) -> list[Draft]:
    """Every read answerable question of the conversation whose gold is supported."""
    qs = {q.index: q for q in questions(conv)}
    ranked: dict[int, list[str]] = defaultdict(list)
    sources: dict[tuple[int, str], int] = {}
    for c in conversation_candidates(conv):
        ranked[c.question].append(c.turn.dia_id)
        sources[(c.question, c.turn.dia_id)] = c.source
    drafts = []
    for index, items in sorted(by_question.items()):
        q = qs.get(index)
        if q is None or q.category not in ANSWERABLE_CATEGORIES or not supported(items):
            continue
        label = {v.dia_id: v.label for v in items if v.kind == "candidate"}
        harmful = [d for d in ranked[index] if label.get(d) == "harmful"][:MAX_CONFUSERS]
        evidence = [t.dia_id for t in q.evidence]
        stated = [d for d in ranked[index] if label.get(d) == "useful" and d not in evidence]
        useful = evidence + stated
        neutral = [d for d in ranked[index] if d not in harmful and d not in useful]
        drafts.append(Draft(
            conv, index, q.category, q.text, q.answer, "confirmed" if harmful else "control",
            evidence, useful, harmful, neutral, bm25_rank(q.text, store, evidence),
            [_answer(conv, sources[(index, d)]) for d in harmful], asked_person(conv, q.text),
        ))  # fmt: skip
    return drafts


def _answer(conv: Conversation, index: int) -> str:
    return str(conv.qa[index].get("answer", "")).strip()


def _unanswerable(conv: Conversation, store: MemoryStore, by_question: Read) -> list[Draft]:
    """The wrong-person questions both readers confirmed unanswerable, with a confuser."""
    drafts = []
    for w in wrong_person(conv):
        items = [v for v in by_question.get(w.index, []) if v.kind == "unanswerable"]
        if not items or any(a is not False for v in items for a in v.answerable.values()):
            continue
        harmful = [v.dia_id for v in items if v.label == "harmful"]
        if not harmful:
            continue
        drafts.append(Draft(
            conv, w.index, 5, w.text, UNANSWERED, "unanswerable", [], [], harmful,
            [v.dia_id for v in items if v.dia_id not in harmful],
            bm25_rank(w.text, store, harmful), [w.adversarial] * len(harmful), w.asked,
        ))  # fmt: skip
    return drafts


def _matched(confirmed: list[Draft], controls: list[Draft]) -> list[Draft]:
    """One control for each confirmed draft, of its category and the nearest BM25 rank."""
    left = sorted(controls, key=lambda d: _hash("control", d.conv.sample_id, d.index))
    chosen = []
    for draft in sorted(confirmed, key=lambda d: _hash("confirmed", d.conv.sample_id, d.index)):
        same = [c for c in left if c.category == draft.category]
        if not same:
            continue
        best = min(same, key=lambda c: abs(math.log2(c.rank) - math.log2(draft.rank)))
        left.remove(best)
        chosen.append(best)
    return chosen


def drafts(
    conversations: list[Conversation], stores: dict[str, MemoryStore], verdicts: VerdictFile
) -> list[Draft]:
    """Every example of the build: confirmed, matched controls and unanswerable questions."""
    by_question: dict[tuple[str, int], list[ItemVerdict]] = defaultdict(list)
    for v in verdicts.items:
        by_question[(v.conversation, v.question)].append(v)
    answerable: list[Draft] = []
    unanswerable: list[Draft] = []
    for conv in conversations:
        mine = {i: v for (c, i), v in by_question.items() if c == conv.sample_id}
        answerable += _answerable(conv, stores[conv.sample_id], mine)
        unanswerable += _unanswerable(conv, stores[conv.sample_id], mine)
    confirmed = [d for d in answerable if d.group == "confirmed"]
    controls = _matched(confirmed, [d for d in answerable if d.group == "control"])
    kept = confirmed + controls
    wanted = round(len(kept) * UNANSWERABLE_SHARE / (1 - UNANSWERABLE_SHARE))
    unanswerable.sort(key=lambda d: _hash("unanswerable", d.conv.sample_id, d.index))
    return kept + unanswerable[:wanted]


def _criteria(draft: Draft) -> ScoringCriteria:
    if draft.group == "unanswerable":
        return ScoringCriteria(
            expected_answer=UNANSWERED, adversarial_answer=draft.sources[0],
            must_not_include=draft.sources[:1], style=STYLE, max_words=MAX_WORDS,
            judge_instructions=UNANSWERABLE_JUDGE, answer_rule="abstains",
        )  # fmt: skip
    wrong = must_not_include(draft.sources, draft.answer)
    return ScoringCriteria(
        expected_answer=draft.answer, answer_aliases=answer_aliases(draft.answer),
        adversarial_answer=wrong[0] if wrong else None, must_not_include=wrong, style=STYLE,
        max_words=MAX_WORDS, judge_instructions=JUDGE,
    )  # fmt: skip


def reference(draft: Draft) -> ExampleReference:
    """The example as a line of the stored file."""
    answerable = draft.group != "unanswerable"
    labels: dict[str, MemoryLabel] = {d: "useful" for d in draft.useful}
    labels |= {d: "harmful" for d in draft.confusers}
    speakers: dict[str, Literal["asked", "other"]] = {}
    for d in draft.confusers:
        turn = draft.conv.turn(d)
        speakers[d] = "asked" if turn is not None and turn.speaker == draft.asked else "other"
    metadata = XLMetadata(
        builder_version=BUILDER_VERSION, conversation=draft.conv.sample_id,
        original_category=draft.category, answerable=answerable, group=draft.group,
        evidence=draft.evidence, useful=draft.useful, confusers=draft.confusers,
        neutral=draft.neutral, bm25_rank=draft.rank, asked_person=draft.asked,
        confuser_speakers=speakers,
        confuser_answers=dict(zip(draft.confusers, draft.sources, strict=False)),
    )  # fmt: skip
    behavior = (
        f"Answer {draft.answer!r} from the turns that state it, leaving out turns that answer "
        "a similar question differently."
        if answerable
        else f"Say the conversation does not tell this of {draft.asked}, selecting no turn."
    )
    return ExampleReference(
        example_id=example_id(draft.conv.sample_id, draft.index),
        store_id=draft.conv.sample_id,
        source_dataset="LoCoMo",
        source_sample_id=draft.conv.sample_id,
        task_family=FAMILY_BY_CATEGORY[draft.category] if answerable else "unanswerable_memory_qa",
        current_task=CurrentTask(instruction=draft.question),
        scoring_criteria=_criteria(draft),
        gold_behavior=behavior,
        memory_labels=labels,
        attack_kinds={d: "natural_confuser" for d in draft.confusers},
        metadata=metadata.model_dump(mode="json"),
    )  # type: ignore[call-arg]
