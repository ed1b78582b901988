"""The claim turns v4 adds to the history for an evidence turn.

An evidence turn's **claim sentence** is the sentence of its statements that states its
slots, its relative dates written out as the days they mean (so the sentence means the
same wherever it is said). Each claim turn says that sentence, with its values true or
false (a value of the same type, ``values``), then a frame sentence that says whether the
statement is true (``frames``). Who says a claim (the owner, or the other speaker saying
it back), where (the evidence's session, before or after the evidence, or a later one)
and which frame are drawn by the same rule for true and false claims: only the words
decide.
"""

from __future__ import annotations

import random
import re
from collections.abc import Collection
from dataclasses import dataclass
from datetime import date

from cmi_inspect.causal_locomo.data import Turn
from cmi_inspect.dates import date_spans, format_day
from cmi_inspect.xl.locomo import ExampleContext, Session
from cmi_inspect.xl.memories import restated_phrases
from cmi_inspect.xl.phrasing import statements
from cmi_inspect.xl.v3.plan import Insert
from cmi_inspect.xl.v3.slots import Asked, Slot
from cmi_inspect.xl.v3.speech import addressed, unaddressed
from cmi_inspect.xl.v4.frames import Voice, draw_frame
from cmi_inspect.xl.v4.params import CLAIMS, SAME_SESSION_SHARE, seeded
from cmi_inspect.xl.v4.values import ValuePool, false_day, false_value

_DAY = re.compile(r"\d{1,2} [A-Z][a-z]+ \d{4}")
_MONTH_OR_YEAR = re.compile(r"(?:[A-Z][a-z]+ )?\d{4}")


def _dated_form(written: str) -> str:
    """A date as a sentence says it: "on 7 May 2023", "in May 2023", or the offset's words."""
    if _DAY.fullmatch(written):
        return f"on {written}"
    return f"in {written}" if _MONTH_OR_YEAR.fullmatch(written) else written


@dataclass(frozen=True)
class Said:
    """One slot as a claim sentence says it: its value as written and what it means."""

    written: str
    means: str
    edit: str | None = None


@dataclass(frozen=True)
class Claimed:
    """An evidence turn's claim sentence, true and false, and what each says of its slots."""

    true_text: str
    false_text: str
    true: dict[str, Said]
    false: dict[str, Said]


def _find(text: str, value: str) -> re.Match[str] | None:
    return re.search(rf"(?<!\w){re.escape(value)}(?!\w)", text, re.IGNORECASE)


def _with_days(text: str, session: Session, today: bool) -> str:
    """The text with every relative date written as the day it means, and (``today``)
    the session's day said at its end, for a slot whose day is the one it was said on."""
    for phrase in reversed(restated_phrases(text, session.day)):
        text = f"{text[: phrase.start]}{_dated_form(phrase.written())}{text[phrase.end :]}"
    if today:
        end = re.search(r"[.!]*$", text)
        assert end is not None
        text = f"{text[: end.start()]} on {format_day(session.day)}{text[end.start() :] or '.'}"
    return text


def day_written(slot: Slot, text: str, session: Session) -> str:
    """What a dated slot's phrase means, written out (the session's day for none)."""
    for phrase in restated_phrases(text, session.day):
        if text[phrase.start : phrase.end].lower() == slot.value.lower():
            return phrase.written()
    return format_day(session.day)


def _first_day(written: str, session: Session) -> date:
    """The first day a written date means (the session's day when it cannot be read)."""
    spans = date_spans(written, session.day)
    return spans[0].first if spans else session.day


def claimed(
    turn: Turn, asked: list[Asked], session: Session, pool: ValuePool, avoid: Collection[str],
    rng: random.Random,
) -> Claimed:  # fmt: skip
    """The turn's statements as a claim, dates written out, true and with every slot it
    states made false (a value of the slot's type, a day outside the answer's period);
    ``false_text`` empty when a slot has no false value that fits."""
    said = statements(turn.text)
    true_text = _with_days(said, session, any(s.dated and not s.value for _, s in asked))
    false_text, true, false = true_text, {}, {}
    for ctx, slot in sorted(asked, key=lambda a: a[1].dated):
        if slot.dated:
            written = day_written(slot, said, session)
            form = _dated_form(written)
            fake = format_day(false_day(ctx.answer, _first_day(written, session), rng))
            found, value, means = false_text.find(form), _dated_form(fake), fake
        else:
            match = _find(false_text, slot.value)
            found, form, written = (match.start(), match[0], slot.value) if match else (-1, "", "")
            value = false_value(pool, ctx.question, ctx.answer, slot.value, rng, avoid)
            means = value or ""
        if found < 0:
            continue  # the claim does not state this slot (it is said in a question)
        true[slot.key] = Said(form, written)
        if value is None or not false_text:
            false_text = ""
            continue
        false[slot.key] = Said(value, means, "temporal_shift" if slot.dated else "value_swap")
        false_text = f"{false_text[:found]}{value}{false_text[found + len(form) :]}"
    if not false:
        false_text = ""
    return Claimed(true_text, false_text, true, false)


def _said_back(text: str, listener: str) -> str:
    """The claim as the other speaker says it to the owner ("you went ...")."""
    return addressed(unaddressed(text, listener))


def _said_back_whole(made: Claimed, listener: str) -> bool:
    """Every value of the claim survives its saying back (a call of the listener's name
    at its start is dropped)."""
    pairs = [(made.true_text, made.true), (made.false_text, made.false)]
    return all(
        _find(_said_back(text, listener), _value_back(said.written))
        for text, values in pairs if text
        for said in values.values()
    )  # fmt: skip


def _value_back(value: str) -> str:
    """A value as the other speaker says it back ("my ego" -> "your ego")."""
    back = addressed(value)
    return back if value[:1].isupper() else back[:1].lower() + back[1:]


def _placed(ctx: ExampleContext, session: Session, rng: random.Random) -> tuple[Session, int, int]:
    """Where a claim is said, drawn alike for every label: the evidence's session (any of
    its gaps, before or after the evidence) or a later session."""
    later = [s for i, s in ctx.conv.sessions.items() if i > session.index]
    chosen = session if not later or rng.random() < SAME_SESSION_SHARE else rng.choice(later)
    return chosen, 0, len(chosen.turns) - 1


def plan_turn(
    ctx: ExampleContext, turn: Turn, asked: list[Asked], pool: ValuePool,
    avoid: Collection[str], owner_only: bool,
) -> list[Insert]:  # fmt: skip
    """The claim turns for an evidence turn (its slots: ``asked``, one per key, maybe
    none): as many by each voice as CLAIMS says, true and false by its shares where every
    slot has a false value that fits, else all true; the other speaker's left out when
    ``owner_only``, so that an unanswerable question's asked person never says its answer."""
    session = ctx.session(turn.session)
    name = f"{ctx.conv.sample_id}/{turn.dia_id}"
    made = claimed(turn, asked, session, pool, avoid, seeded(name, "values"))
    owner, listener = turn.speaker, ctx.conv.listener(turn.speaker)
    rng = seeded(name, "claims")
    inserts = []
    for voice, (true, false) in CLAIMS.items():
        if voice == "other" and (owner_only or not _said_back_whole(made, listener)):
            continue
        truths = [True] * true + [False] * false if made.false_text else [True] * (true + false)
        for truthful in truths:
            text = made.true_text if truthful else made.false_text
            said = made.true if truthful else made.false
            speaker = owner if voice == "owner" else listener
            words, written = text, {k: x.written for k, x in said.items()}
            if voice == "other":
                words = _said_back(text, listener)
                written = {k: _value_back(w) for k, w in written.items()}
            frame = draw_frame(voice, rng)
            where, lo, hi = _placed(ctx, session, rng)
            inserts.append(
                Insert(turn, f"{voice}:{frame.name}", speaker, f"{words} {frame.says(truthful)}",
                       where.index, lo, hi, truthful, True,
                       {k: (written[k], x.means) for k, x in said.items()},
                       {k: x.edit for k, x in said.items() if x.edit})  # fmt: skip
            )
    return inserts


def framed_evidence(text: str, name: str) -> str:
    """An evidence turn's text with an owner's true frame after it, drawn by ``name``, so
    that the evidence reads like every claim about it."""
    return f"{text.rstrip()} {draw_frame('owner', seeded(name, 'evidence')).true}"
