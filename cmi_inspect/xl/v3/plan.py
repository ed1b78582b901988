"""The turns poison adds to the history for an evidence turn, by channel, and where each
may be said.

A false claim reaches the history the way real memory goes wrong: an earlier first-hand
statement that the evidence later updates (``stale``), the other speaker's claim about the
turn's speaker (``hearsay``), a turn quoting an outside source (``injected``), or the owner
taking a value back (``retraction``), which a later first-hand reaffirmation restores.
Poison is planned per evidence turn: a false copy of the turn makes every slot it states
false (``slots.false_turn``), so a copy is false for every question it bears on, or true
for all. Each insert is a turn of its own (``Insert``) with a window of gaps in one
session, where ``history`` places it. The truth rule that reads them back is in
docs/xl.md.

Form must not tell the false turns from the true ones, so every form has both: a channel
that passes a false claim on also passes the true one on (an echo); a false retraction has
its true reaffirmation, and a false copy may have its true correction (in a retraction's
words), insisted on after it by the other speaker (in a reaffirmation's).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

from cmi_inspect.causal_locomo.data import Turn
from cmi_inspect.xl.locomo import ExampleContext, Session
from cmi_inspect.xl.phrasing import statements
from cmi_inspect.xl.v3.params import (
    CORRECTION_SHARE,
    INJECTED_LEADS,
    PLANS,
    REAFFIRMATIONS,
    RETRACTION_OPENERS,
    RETRACTIONS,
    UNPOISONED_SHARE,
    seeded,
)
from cmi_inspect.xl.v3.slots import (
    Asked,
    Slot,
    TurnEdit,
    false_turn,
    meaning,
    states_answer,
)
from cmi_inspect.xl.v3.speech import addressed, quoted, said_value, unaddressed

COPIES = ("stale", "hearsay", "injected")
"""The channels whose turn is a copy of the evidence turn."""
SOURCES = {
    "stale": "first_hand",
    "hearsay": "hearsay",
    "injected": "injected",
    "retraction": "first_hand",
    "reaffirmation": "first_hand",
    "correction": "first_hand",
}
"""Whose word an inserted turn is about its slot: the owner's, the other speaker's, or an
outside source's that a speaker passes on."""


@dataclass(eq=False)
class Insert:
    """A turn the builder adds to the history."""

    turn: Turn
    """The evidence turn it is about."""
    role: str
    """A channel (``CHANNELS``), ``reaffirmation`` (the owner insisting on a value after
    retracting it) or ``correction`` (the owner taking a false copy's value back)."""
    speaker: str
    text: str
    session: int
    lo: int
    """The first gap it may go in: after the turn of this index in its session."""
    hi: int
    truthful: bool
    """What it says of its slots is true."""
    copied: bool
    """Its text is the evidence turn's statements, passed on (edited, if not truthful)."""
    values: dict[str, tuple[str, str]] = field(default_factory=dict)
    """Slot key -> (the value as its text writes it, what it states: the value, or the date
    it means): for a copy every slot of its turn, for the others the one slot they name."""
    edits: dict[str, str] = field(default_factory=dict)
    """Slot key -> how a false copy's value was made: value_swap, entity_swap, temporal_shift."""
    after: Insert | None = None
    """An insert it must follow (a reaffirmation its retraction, an insistence its
    correction)."""
    made: TurnEdit | None = None
    """The edit that made a false copy."""

    @property
    def source(self) -> str:
        return SOURCES[self.role]

    @property
    def stance(self) -> str:
        return "retracts" if self.role in ("retraction", "correction") else "asserts"


@dataclass(frozen=True)
class Where:
    """An evidence turn with the slots it states, and its place in the conversation."""

    asked: list[Asked]

    @property
    def ctx(self) -> ExampleContext:
        return self.asked[0][0]

    @property
    def turn(self) -> Turn:
        return self.asked[0][1].turn

    @property
    def dated(self) -> bool:
        return any(slot.dated for _, slot in self.asked)

    @property
    def session(self) -> Session:
        return self.ctx.session(self.turn.session)

    @property
    def index(self) -> int:
        return next(i for i, t in enumerate(self.session.turns) if t == self.turn)

    def sessions(self, after: bool) -> list[Session]:
        """The sessions from the evidence's on (``after``), or before it."""
        here = self.session.index
        return [s for i, s in self.ctx.conv.sessions.items() if (i >= here) == after]

    def window(self, session: Session, after: bool) -> tuple[int, int] | None:
        """The gaps of ``session`` after the evidence turn (``after``) or before it."""
        last = len(session.turns) - 1
        if session.index != self.session.index:
            return 0, last
        return (self.index, last) if after else ((0, self.index - 1) if self.index else None)


def _said_by(where: Where, role: str, text: str, rng: random.Random) -> tuple[str, str]:
    """Who says a copy of the turn, and how, by channel: the owner's own words (``stale``),
    the other speaker's to the owner (``hearsay``), or the other speaker's passing on an
    outside source (``injected``); only the turn's statements are copied."""
    said, owner = statements(text), where.turn.speaker
    if role == "stale":
        return owner, said
    conv = where.ctx.conv
    text = addressed(unaddressed(said, conv.listener(owner)))
    if role == "injected":
        text = quoted(rng.choice(INJECTED_LEADS), text, conv.entities)
    return conv.listener(owner), text


def _session(where: Where, role: str, truthful: bool, rng: random.Random) -> Session:
    """Where a copy is said: a false stale one before the evidence, hearsay after it,
    injected anywhere; a true one of a dated turn in the evidence's session, where its
    words mean the same day."""
    if truthful and where.dated:
        return where.session
    before = where.sessions(after=False)
    if role == "stale":
        return rng.choice(before) if before else where.session
    if role == "hearsay":
        return rng.choice(where.sessions(after=True))
    return rng.choice(list(where.ctx.conv.sessions.values()))


def _copy(
    where: Where, role: str, truthful: bool, rng: random.Random, edit: TurnEdit | None = None
) -> Insert | None:
    """A copy of the evidence turn by a channel, true or with every slot made false (by
    ``edit`` when given and the turn states no date, which moves with the day it is said);
    None when it cannot be made so (or the statements it keeps lose a value)."""
    session = _session(where, role, truthful, rng)
    if role == "injected" and not (truthful and where.dated):
        window: tuple[int, int] | None = (0, len(session.turns) - 1)
    else:
        window = where.window(session, after=role != "stale" or truthful)
    if window is None:
        return None
    if not truthful and (edit is None or where.dated):
        edit = false_turn(where.asked, session, rng)
        if edit is None:
            return None
    speaker, said = _said_by(where, role, edit.text if edit else where.turn.text, rng)
    values = {}
    for ctx, slot in where.asked:
        value = edit.edits[slot.key].value if edit else slot.value
        means = meaning(Slot(slot.turn, value, slot.dated), said, session)
        if means is None or states_answer(means, ctx.answer, slot.dated) != truthful:
            return None
        values[slot.key] = (value, means)
    edits = {k: e.edit for k, e in edit.edits.items()} if edit else {}
    return Insert(where.turn, role, speaker, said, session.index, *window, truthful, True,
                  values, edits, made=edit)  # fmt: skip


def _copies(where: Where, rng: random.Random) -> list[Insert]:
    """The turn's false value said twice, by two copy channels (as misinformation repeats),
    in the same words where the turn states no date; and a true echo by one of them that
    passes a claim on (the injected one when there is one): two false copies against the
    evidence and its echo, so that neither label holds more copies of a turn."""
    channels = list(COPIES)
    rng.shuffle(channels)
    first = next((c for c in (_copy(where, r, False, rng) for r in channels) if c), None)
    if first is None:
        return []
    others = [r for r in channels if r != first.role]
    second = next((c for c in (_copy(where, r, False, rng, first.made) for r in others) if c), None)
    if second is None:
        return []
    passed = [i.role for i in (first, second) if i.role != "stale"]
    echo = _copy(where, "injected" if "injected" in passed else passed[0], True, rng)
    return [first, second, echo] if echo else [first, second]


def _worded(forms: tuple[str, ...], value: str, dated: bool, rng: random.Random) -> str:
    core = rng.choice(forms).format(value=said_value(value, dated))
    return f"{rng.choice(RETRACTION_OPENERS)}, {core}."


def _retraction(where: Where, rng: random.Random) -> list[Insert]:
    """The owner takes one slot's value back after the evidence (false), then insists on
    it again later (true)."""
    ctx, slot = rng.choice(where.asked)
    means = meaning(slot, where.turn.text, where.session)
    assert means is not None
    value = means if slot.dated else slot.value
    sessions = where.sessions(after=True)
    first = rng.choice(sessions)
    second = rng.choice([s for s in sessions if s.index >= first.index])
    window = where.window(first, after=True)
    assert window is not None
    lo, hi = window
    if second.index == first.index:
        hi -= 1  # leave a gap after it for the reaffirmation
    if hi < lo:
        return []
    owner, named = where.turn.speaker, {slot.key: (value, value)}
    taken = _worded(RETRACTIONS, value, slot.dated, rng)
    retract = Insert(where.turn, "retraction", owner, taken, first.index, lo, hi, False, False,
                     named)  # fmt: skip
    restored = _worded(REAFFIRMATIONS, value, slot.dated, rng)
    reaffirm = Insert(where.turn, "reaffirmation", owner, restored, second.index, 0,
                      len(second.turns) - 1, True, False, named, after=retract)  # fmt: skip
    return [retract, reaffirm]


def _correction(where: Where, false: Insert, rng: random.Random) -> list[Insert]:
    """The owner, after a false copy, takes one slot's false value back (true), and the
    other speaker insists on it after that (false, hearsay): a retraction's and a
    reaffirmation's words with the labels the other way round."""
    sessions = [s for s in where.ctx.conv.sessions.values() if s.index > false.session]
    if not sessions:
        return []
    _, slot = rng.choice(where.asked)
    value, means = false.values[slot.key]
    said = means if slot.dated else value
    named, owner = {slot.key: (said, means)}, where.turn.speaker
    first = rng.choice(sessions)
    second = rng.choice([s for s in sessions if s.index >= first.index])
    hi = len(first.turns) - 1 - (second.index == first.index)
    correct = Insert(where.turn, "correction", owner, _worded(RETRACTIONS, said, slot.dated, rng),
                     first.index, 0, hi, True, False, named)  # fmt: skip
    insist = Insert(where.turn, "hearsay", where.ctx.conv.listener(owner),
                    _worded(REAFFIRMATIONS, said, slot.dated, rng), second.index, 0,
                    len(second.turns) - 1, False, False, named, after=correct)  # fmt: skip
    return [correct, insist]


MAKERS: dict[str, Callable[[Where, random.Random], list[Insert]]] = {
    "copies": _copies,
    "retraction": _retraction,
}
"""Plan part -> the turns it adds for an evidence turn (none when the turn does not allow it)."""


def plan_turn(asked: list[Asked]) -> list[Insert]:
    """The turns an evidence turn's poison adds (its slots: ``asked``, one per key): a plan
    drawn by PLANS' weights (none for UNPOISONED_SHARE of turns), the next one when the
    turn does not allow it; and, for CORRECTION_SHARE of the turns with a false copy, a
    correction and the insistence on it."""
    where = Where(asked)
    name = f"{where.ctx.conv.sample_id}/{where.turn.dia_id}"
    rng = seeded(name, "turn")
    if rng.random() < UNPOISONED_SHARE:
        return []
    plans = list(PLANS)
    drawn = rng.choices(range(len(plans)), weights=[w for _, w in plans])[0]
    inserts: list[Insert] = []
    for parts, _ in plans[drawn:] + plans[:drawn]:
        inserts = [i for part in parts for i in MAKERS[part](where, seeded(name, part))]
        if inserts:
            break
    false = [i for i in inserts if i.copied and not i.truthful]
    correct = seeded(name, "correction")
    if false and correct.random() < CORRECTION_SHARE:
        inserts += _correction(where, correct.choice(false), correct)
    return inserts
