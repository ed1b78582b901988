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
_CAPTION = re.compile(r"\s*\[shares [^\]]*\]")
"""A shared photo's caption (``locomo.turn_text``): what a claim leaves out, as a speaker
would not say it and a value swapped into it reads as nonsense ("walking on the waterfall")."""
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
        said = _dated_form(phrase.written())
        if not text[: phrase.start].strip() or text[: phrase.start].rstrip()[-1] in ".!?":
            said = said[:1].upper() + said[1:]  # a sentence's first word
        text = f"{text[: phrase.start]}{said}{text[phrase.end :]}"
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


def true_claim(turn: Turn, slots: list[Slot], session: Session) -> tuple[str, dict[str, Said]]:
    """The turn's statements as a claim (no photo's caption), its relative dates written out
    as the days they mean (the session's day said at its end for a slot that is that day),
    and what it states of each slot it holds (a slot said only in a question or a caption
    is not held)."""
    said = statements(_CAPTION.sub("", turn.text))
    text = _with_days(said, session, any(s.dated and not s.value for s in slots))
    held = {}
    for slot in slots:
        if slot.dated:
            written = day_written(slot, said, session)
            if (match := _find(text, _dated_form(written))) is not None:
                held[slot.key] = Said(match[0], written)
        elif (match := _find(text, slot.value)) is not None:
            held[slot.key] = Said(match[0], slot.value)
    return text, held


_CLAUSE_END = re.compile(r"(?<=[.!?])\s+(?=\S)|\s*[-\u2013\u2014]\s+")


def _clauses_holding(text: str, values: list[str]) -> str:
    """The clauses of ``text`` that hold one of ``values`` (the whole text when none does):
    what the other speaker says back, so that it keeps no words the owner meant for the
    listener ("Sorry about your job, Jon") or left without a subject ("Just wanted to give
    you the heads up")."""
    kept = [c for c in _CLAUSE_END.split(text) if any(_find(c, v) for v in values)]
    if not kept:
        return text
    return " ".join(_capital(c) if c.endswith((".", "!", "?")) else f"{_capital(c)}." for c in kept)


def _capital(clause: str) -> str:
    return clause[:1].upper() + clause[1:]


def claimed(
    turn: Turn, asked: list[Asked], session: Session, pool: ValuePool, avoid: Collection[str],
    rng: random.Random,
) -> Claimed:  # fmt: skip
    """The turn's claim (``true_claim``), true and with every slot it holds made false (a
    value of the slot's type, a day outside the answer's period); ``false_text`` empty when
    a slot has no false value that fits."""
    true_text, true = true_claim(turn, [slot for _, slot in asked], session)
    false_text, false = true_text, {}
    for ctx, slot in sorted(asked, key=lambda a: a[1].dated):
        if slot.key not in true or not false_text:
            continue
        form = true[slot.key].written
        if slot.dated:
            fake = format_day(false_day(ctx.answer, _first_day(true[slot.key].means, session), rng))
            value: str | None = _dated_form(fake)
            made = Said(_dated_form(fake), fake, "temporal_shift")
        else:
            value = false_value(
                pool, ctx.question, ctx.answer, slot.value, rng, avoid, sentence=false_text
            )
            made = Said(value or "", value or "", "value_swap")
        found = _find(false_text, form)
        if value and found and found[0][:1].isupper():
            value = value[:1].upper() + value[1:]
        if value is None or found is None:
            false_text = ""
            continue
        false[slot.key] = made
        false_text = f"{false_text[: found.start()]}{value}{false_text[found.end() :]}"
    return Claimed(true_text, false_text if false else "", true, false)


_WE = re.compile(r"\b(?:we're|we've|we'd|we'll|we|us|our|ours|ourselves)\b", re.IGNORECASE)
_WE_TO_YOU = {
    "we're": "you're", "we've": "you've", "we'd": "you'd", "we'll": "you'll", "we": "you",
    "us": "you", "our": "your", "ours": "yours", "ourselves": "yourselves",
}  # fmt: skip


def _said_back(text: str, listener: str, values: list[str]) -> str:
    """The claim as the other speaker says it to the owner ("you went ...", "your pup"):
    only its clauses that hold ``values`` (``_clauses_holding``)."""
    back = addressed(unaddressed(_clauses_holding(text, values), listener))
    return _WE.sub(lambda m: _cased(_WE_TO_YOU[m[0].lower()], m[0]), back)


def _cased(word: str, like: str) -> str:
    return _capital(word) if like[:1].isupper() else word


def _said_back_whole(made: Claimed, listener: str) -> bool:
    """Every value of the claim survives its saying back (a call of the listener's name
    at its start is dropped)."""
    pairs = [(made.true_text, made.true), (made.false_text, made.false)]
    return all(
        _find(_said_back(text, listener, _written(held)), _value_back(said.written))
        for text, held in pairs if text
        for said in held.values()
    )  # fmt: skip


def _written(held: dict[str, Said]) -> list[str]:
    return [x.written for x in held.values()]


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


def claim_of(
    ctx: ExampleContext, turn: Turn, asked: list[Asked], pool: ValuePool, avoid: Collection[str]
) -> Claimed:
    """The evidence turn's claim, true and false (``claimed``), drawn by the turn's name."""
    name = f"{ctx.conv.sample_id}/{turn.dia_id}"
    return claimed(turn, asked, ctx.session(turn.session), pool, avoid, seeded(name, "values"))


def plan_turn(ctx: ExampleContext, turn: Turn, made: Claimed, owner_only: bool) -> list[Insert]:
    """The claim turns for an evidence turn whose claim is ``made`` (with a false version):
    as many by each voice, true and false, as CLAIMS says; the other speaker's left out
    when ``owner_only`` (so that an unanswerable question's asked person never says its
    answer) or when saying the claim back loses a value."""
    session = ctx.session(turn.session)
    owner, listener = turn.speaker, ctx.conv.listener(turn.speaker)
    rng = seeded(f"{ctx.conv.sample_id}/{turn.dia_id}", "claims")
    inserts = []
    voice: Voice
    for voice, (true, false) in CLAIMS.items():
        if voice == "other" and (owner_only or not _said_back_whole(made, listener)):
            continue
        for truthful in [True] * true + [False] * false:
            text = made.true_text if truthful else made.false_text
            said = made.true if truthful else made.false
            speaker = owner if voice == "owner" else listener
            words, written = text, {k: x.written for k, x in said.items()}
            if voice == "other":
                words = _said_back(text, listener, list(written.values()))
                written = {k: _value_back(w) for k, w in written.items()}
            frame = draw_frame(voice, rng)
            where, lo, hi = _placed(ctx, session, rng)
            inserts.append(
                Insert(
                    turn,
                    f"{voice}:{frame.name}",
                    speaker,
                    f"{words} {frame.says(truthful)}",
                    where.index,
                    lo,
                    hi,
                    truthful,
                    True,
                    {k: (written[k], x.means) for k, x in said.items()},
                    {k: x.edit for k, x in said.items() if x.edit},
                )  # fmt: skip
            )
    return inserts


def framed_evidence(made: Claimed, name: str) -> str:
    """An evidence turn as v4's history says it: its true claim, so that its memory holds
    what every true claim about it holds, and an owner's true frame after it, drawn by
    ``name``."""
    return f"{made.true_text} {draw_frame('owner', seeded(name, 'evidence')).true}"
