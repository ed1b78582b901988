"""Memory drafts, the useful and irrelevant ones, and the check that an example's useful
memories hold its answer.

Every memory, whatever its label, is made the same way from one turn's text: its
statements (``statements``), relative dates written out, in a phrasing drawn with a
generator seeded by the example and the memory's source (``phrasing``), so neither the
form nor the template words of a memory say anything of its label.
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Sequence
from dataclasses import dataclass

from cmi_inspect.causal_locomo.data import MemoryLabel, Turn
from cmi_inspect.dates import RESTATED, RelativeDate, date_mentions, relative_dates
from cmi_inspect.xl.answers import answer_items, stems
from cmi_inspect.xl.locomo import ExampleContext, Session
from cmi_inspect.xl.params import (
    HARDEST_DISTRACTORS,
    IRRELEVANT_PER_EXAMPLE,
    LENGTH_MATCHED_CHOICES,
    MIN_DISTRACTOR_WORDS,
    SOUND_COVERAGE,
    USEFUL_SESSION_BIAS,
    seeded,
)
from cmi_inspect.xl.phrasing import PHRASINGS, stated_words, statements


@dataclass
class Draft:
    """A memory before ids are assigned."""

    content: str
    label: MemoryLabel
    speaker: str
    session: int
    dia_ids: list[str]
    attack_kind: str | None = None


def restated_phrases(text: str, day: dt.date) -> list[RelativeDate]:
    """The relative phrases a memory of ``text``, said on ``day``, writes out, left to right."""
    return sorted(relative_dates(text, day, RESTATED), key=lambda p: p.start)


def resolve_dates(text: str, day: dt.date) -> str:
    """The text with each relative phrase followed by the date it means, in brackets."""
    resolved = text
    for phrase in reversed(restated_phrases(text, day)):
        resolved = f"{resolved[: phrase.end]} [{phrase.written()}]{resolved[phrase.end :]}"
    return resolved


def render_memory(ctx: ExampleContext, speaker: str, text: str, session: Session) -> str:
    """A memory of ``text``, said by ``speaker`` in ``session``: its statements, dates
    resolved, in a phrasing drawn from the example and the text (never from the label)."""
    rng = seeded(ctx.example_id, f"phrasing/{session.index}/{speaker}/{text}")
    phrasing = rng.choice(PHRASINGS)
    kept = resolve_dates(statements(text), session.day)
    return phrasing.render(speaker, ctx.conv.listener(speaker), kept, session)


def draft(
    ctx: ExampleContext,
    turn: Turn,
    text: str,
    session: int,
    label: MemoryLabel,
    attack_kind: str | None = None,
) -> Draft:
    """A memory of ``text`` said by the turn's speaker, dated to ``session``."""
    content = render_memory(ctx, turn.speaker, text, ctx.session(session))
    return Draft(content, label, turn.speaker, session, [turn.dia_id], attack_kind)


def draw_session(ctx: ExampleContext, rng: random.Random) -> int:
    """A session for a non-useful memory: mostly an evidence session, else any past one.

    Useful memories sit in evidence sessions (the history ends at the last one); drawing
    irrelevant and harmful timestamps the same way keeps timestamps label-free.
    """
    if rng.random() < USEFUL_SESSION_BIAS:
        return rng.choice(ctx.evidence).session
    return rng.choice(ctx.past).index


def mentions_answer(text: str, answer: str) -> bool:
    """True when the text states a date of the answer or all words of one of its items."""
    found = date_mentions(text)
    if any(a.span.covers(f.span) for a in date_mentions(answer) for f in found):
        return True
    words = stems(text)
    return any(stems(item) <= words for item in answer_items(answer))


def is_sound(useful: Sequence[str], answer: str) -> bool:
    """The useful memories resolve to every date the answer names, or contain its words.

    Dates compare at the answer's granularity (day, month or year); otherwise at least
    SOUND_COVERAGE of the answer's content words must occur in the memories (by stem).
    """
    mentions = date_mentions(answer)
    if mentions:
        found = [f for text in useful for f in date_mentions(text)]
        return all(any(a.span.covers(f.span) for f in found) for a in mentions)
    needed = stems(answer)
    covered = needed & stems(" ".join(useful))
    return bool(needed) and len(covered) >= SOUND_COVERAGE * len(needed)


def useful_drafts(ctx: ExampleContext) -> list[Draft]:
    """One memory per evidence turn, dated by its session."""
    return [draft(ctx, t, t.text, t.session, "useful") for t in ctx.evidence]


def _gap(turn: Turn, words: int) -> int:
    """How far the length of a turn's statements is from ``words``."""
    return abs(stated_words(turn.text) - words)


def irrelevant_drafts(ctx: ExampleContext, excluded: set[str]) -> list[Draft]:
    """Distractors in drawn sessions: the turns most like the question, then random ones.

    The hardest are the closest in length (of their statements) to an evidence turn among
    the few most like the question; random ones are drawn among the turns closest in
    length, so that length says little about the label.
    """
    rng = seeded(ctx.example_id, "irrelevant")
    question = stems(ctx.question)
    pool = [
        t
        for s in ctx.past
        for t in s.turns
        if t.dia_id not in excluded
        and stated_words(t.text) >= MIN_DISTRACTOR_WORDS
        and not mentions_answer(t.text, ctx.answer)
    ]
    drafts: list[Draft] = []
    for slot in range(IRRELEVANT_PER_EXAMPLE):
        session = draw_session(ctx, rng)
        in_session = [t for t in pool if t.session == session] or pool
        if not in_session:
            break
        target = stated_words(rng.choice(ctx.evidence).text)
        if slot < HARDEST_DISTRACTORS:
            alike = sorted(in_session, key=lambda t: -len(question & stems(t.text)))
            turn = min(
                alike[:LENGTH_MATCHED_CHOICES], key=lambda t: abs(stated_words(t.text) - target)
            )
        else:
            nearest = sorted(in_session, key=lambda t: abs(stated_words(t.text) - target))
            turn = rng.choice(nearest[:LENGTH_MATCHED_CHOICES])
        pool.remove(turn)
        drafts.append(draft(ctx, turn, turn.text, turn.session, "irrelevant"))
    return drafts
