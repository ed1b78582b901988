"""XL v5's candidate rule: the turns of a conversation that may answer a question wrongly.

A *natural confuser* of a question is a turn of the same conversation, true in itself, that
answers a neighbouring question differently. The rule proposes them from LoCoMo's own
question-evidence annotations, generously; readers confirm them (``verdicts``). For a target
question ``q`` (categories 1, 2 and 4; an inferential question, category 3, gets none) and
another question ``p`` of the conversation with its own answer:

1. **Same form.** Both ask with the same wh-form (``wh_form``: "how many" is not "how").
2. **Neighbouring topic.** The Jaccard similarity of their topic words (``topic``: content
   stems less the speakers' names, months, years and generic question words) is at least
   ``TOPIC_JACCARD``.
3. **Different answers.** The answers share no content word outside their date words, and
   when either holds a date, no day of one is a day of the other.
4. **A turn that says p's answer, not q's.** Each evidence turn of ``p`` that is not one of
   ``q``'s, shares a topic word with ``q``, states ``p``'s answer (half its content stems, or
   a day of its date read against the turn's session day) and does not state ``q``'s.
5. **Not a state change.** A candidate later than every evidence turn of ``q`` for a
   question about the same thing (topic Jaccard at least ``SAME_SLOT_JACCARD``) may be the
   newer truth: it is left out.

Candidates are ranked by topic similarity (then turn order) and at most ``PER_QUESTION`` are
kept; to them the rule adds, whatever their topic similarity, the turns meeting 1, 3, 4 and 5
that stand in the top ``RETRIEVED`` of BM25 over the conversation for ``q``, and, whatever
their question's form, those meeting 3, 4 and 5 in its top ``ANY_FORM_RETRIEVED``: the
confusers a similarity retriever hands the model, which is the failure the benchmark is about.
(A "what" question's evidence can answer a "when" question with another day; readers decide.)
Unanswerable questions (category 5) that ask one speaker what only the other said
(``wrong_person``) take the other speaker's evidence turns as their candidates.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from cmi_inspect.causal_locomo.bank_size import bm25_scores
from cmi_inspect.causal_locomo.data import Turn
from cmi_inspect.causal_locomo.xl.answers import stems
from cmi_inspect.causal_locomo.xl.locomo import Conversation, normalise_evidence
from cmi_inspect.dates import MONTH_NAMES, date_spans, without_dates

TOPIC_JACCARD = 0.1
"""The least topic similarity of two questions for one's evidence to confuse the other: the
loose pool, since readers confirm only about one candidate in ten (docs/xl.md)."""
SAME_SLOT_JACCARD = 0.6
"""Questions this similar ask about the same thing: a later turn may be a state change."""
PER_QUESTION = 6
"""Candidates kept for reading, a question (the most similar first)."""
RETRIEVED = 20
"""BM25's depth from which a candidate is proposed whatever its question's similarity."""
ANY_FORM_RETRIEVED = 3
"""BM25's depth from which a candidate is proposed whatever its question's form too (the
fourth reading wave: the first three left BM25 at k = 3 keeping a confuser in 11% of
confirmed examples, docs/xl.md)."""
ANSWERABLE_CATEGORIES = (1, 2, 4)
"""LoCoMo's multi-hop, temporal and single-hop questions; inferential ones (3) get none."""

_WH = (
    ("how many", "how_many"), ("how much", "how_much"), ("how long", "how_long"),
    ("how old", "how_old"), ("how often", "how_often"), ("what year", "when"),
    ("what month", "when"), ("what date", "when"), ("when", "when"), ("where", "where"),
    ("who", "who"), ("whom", "who"), ("whose", "who"), ("why", "why"), ("which", "what"),
    ("what", "what"), ("how", "how"),
)  # fmt: skip
_GENERIC = frozenset(
    "what when where who whom whose which why how kind type sort name names mention mentioned "
    "according many much long often did does do has have had is are was were ever recently "
    "one ones both".split()
)


def wh_form(question: str) -> str:
    """The question's form: its first wh-phrase ("how many", "when", ...), or ``yes_no``."""
    lowered = question.lower()
    found = [(m.start(), -len(p), form) for p, form in _WH
             for m in [re.search(rf"\b{p}\b", lowered)] if m]  # fmt: skip
    return min(found)[2] if found else "yes_no"


_MONTHS = stems(" ".join(MONTH_NAMES))


def topic(question: str, speakers: tuple[str, ...]) -> frozenset[str]:
    """A question's topic words: its stems less names, months, years and generic words."""
    names = stems(" ".join(speakers))
    return frozenset(
        s
        for s in stems(question) - names - _MONTHS - stems(" ".join(_GENERIC))
        if not re.fullmatch(r"\d{4}", s)
    )


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0


@dataclass(frozen=True)
class Question:
    """A LoCoMo question of a conversation, as the rule reads it."""

    index: int
    text: str
    answer: str
    category: int
    evidence: tuple[Turn, ...]
    form: str
    topic: frozenset[str]


def questions(conv: Conversation) -> list[Question]:
    """The conversation's questions with a gold answer and evidence turns that exist."""
    found = []
    for index, item in enumerate(conv.qa):
        if "answer" not in item or int(item["category"]) == 5:
            continue
        turns = [conv.turn(i) for i in normalise_evidence(item.get("evidence", []))]
        evidence = tuple(t for t in turns if t is not None)
        text = str(item["question"]).strip()
        if evidence:
            found.append(Question(index, text, str(item["answer"]).strip(),
                                  int(item["category"]), evidence, wh_form(text),
                                  topic(text, conv.speakers)))  # fmt: skip
    return found


def _answer_words(answer: str) -> frozenset[str]:
    return stems(without_dates(answer))


def different_answers(a: str, b: str) -> bool:
    """No content word shared outside date words, and no day shared by their dates."""
    if _answer_words(a) & _answer_words(b):
        return False
    spans_a, spans_b = date_spans(a), date_spans(b)
    return not any(x.overlaps(y) for x in spans_a for y in spans_b)


def states(turn: Turn, answer: str, conv: Conversation) -> bool:
    """The turn states the answer: half its non-date content stems, or a day of its date
    read against the turn's session day."""
    spans = date_spans(answer)
    if spans:
        day = conv.sessions[turn.session].day
        return any(s.overlaps(t) for s in spans for t in date_spans(turn.text, day))
    words = _answer_words(answer)
    return bool(words) and 2 * len(words & stems(turn.text)) >= len(words)


def _order(turn: Turn) -> tuple[int, int]:
    return turn.session, int(turn.dia_id.split(":")[1])


@dataclass(frozen=True)
class Candidate:
    """A turn proposed as a confuser of a question, and the question it answers."""

    question: int
    """The target question's index in the conversation's ``qa``."""
    turn: Turn
    source: int
    """The index of the question whose evidence the turn is."""
    similarity: float
    same_form: bool = True
    """Its question asks with the target's wh-form (else it came by ``ANY_FORM_RETRIEVED``)."""


def candidates(
    conv: Conversation,
    target: Question,
    others: list[Question],
    threshold: float,
    retrieved: frozenset[str] = frozenset(),
    any_form: frozenset[str] = frozenset(),
) -> list[Candidate]:
    """The rule's candidates for one answerable question, the most similar first: the
    ``PER_QUESTION`` most similar of its form at ``threshold`` or above, any of its form in
    ``retrieved``, and any of any form in ``any_form``."""
    if target.category not in ANSWERABLE_CATEGORIES:
        return []
    own = {t.dia_id for t in target.evidence}
    last = max(_order(t) for t in target.evidence)
    found: dict[str, Candidate] = {}
    for other in others:
        same_form = other.form == target.form
        if other.index == target.index or not (same_form or any_form):
            continue
        similarity = jaccard(target.topic, other.topic)
        if not different_answers(target.answer, other.answer):
            continue
        for turn in other.evidence:
            if not same_form and turn.dia_id not in any_form:
                continue
            if similarity < threshold and turn.dia_id not in retrieved:
                continue
            if turn.dia_id in own or not stems(turn.text) & target.topic:
                continue
            if not states(turn, other.answer, conv) or states(turn, target.answer, conv):
                continue
            if similarity >= SAME_SLOT_JACCARD and _order(turn) > last:
                continue
            known = found.get(turn.dia_id)
            if known is None or (same_form, similarity) > (known.same_form, known.similarity):
                found[turn.dia_id] = Candidate(
                    target.index, turn, other.index, similarity, same_form
                )
    ranked = sorted(found.values(), key=lambda c: (not c.same_form, -c.similarity, _order(c.turn)))
    similar = [c for c in ranked if c.same_form and c.similarity >= threshold][:PER_QUESTION]
    return [c for c in ranked if c in similar or c.turn.dia_id in retrieved]


def asked_person(conv: Conversation, question: str) -> str | None:
    """The one speaker the question names by first name, if exactly one."""
    named = [s for s in conv.speakers if re.search(rf"\b{re.escape(s.split()[0])}\b", question)]
    return named[0] if len(named) == 1 else None


@dataclass(frozen=True)
class WrongPerson:
    """A LoCoMo adversarial question asking one speaker what only the other said."""

    index: int
    text: str
    asked: str
    adversarial: str
    evidence: tuple[Turn, ...]
    """The other speaker's turns that answer it for them: its candidates."""


def wrong_person(conv: Conversation) -> Iterator[WrongPerson]:
    """Category 5 questions naming one speaker whose evidence turns are all the other's."""
    for index, item in enumerate(conv.qa):
        adversarial = str(item.get("adversarial_answer") or "").strip()
        if int(item["category"]) != 5 or not adversarial:
            continue
        text = str(item["question"]).strip()
        turns = [conv.turn(i) for i in normalise_evidence(item.get("evidence", []))]
        evidence = tuple(t for t in turns if t is not None)
        asked = asked_person(conv, text)
        if asked and evidence and all(t.speaker != asked for t in evidence):
            yield WrongPerson(index, text, asked, adversarial, evidence)


def conversation_candidates(
    conv: Conversation, threshold: float = TOPIC_JACCARD
) -> list[Candidate]:
    """Every answerable question's candidates, in question order."""
    qs = questions(conv)
    turns = [t for s in conv.sessions.values() for t in s.turns]
    found = []
    for q in qs:
        scores = bm25_scores(q.text, [t.text for t in turns])
        order = sorted(range(len(turns)), key=lambda i: (-scores[i], i))
        top = frozenset(turns[i].dia_id for i in order[:RETRIEVED])
        near = frozenset(turns[i].dia_id for i in order[:ANY_FORM_RETRIEVED])
        found += candidates(conv, q, qs, threshold, top, near)
    return found
