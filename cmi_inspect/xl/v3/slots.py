"""An answerable example's slot (the value one evidence turn states), what a copy of that
turn means when said elsewhere, and the edits that make a copy state a false value.

A slot is the evidence turn that states the answer, and the value as the turn writes it: a
word or phrase of the answer ("Porto"), or a date, as a relative phrase the session's day
resolves ("yesterday" said on 8 May 2023 means 7 May 2023) or, where the turn names none,
the session's day itself. The edits are v2's (``xl.attacks``) made to return text: another
answer of the same category (``value_swap``), another name of the conversation
(``entity_swap``), or another time (``temporal_shift``: the same words said on another
day, or another relative phrase of the conversation).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from cmi_inspect.causal_locomo.data import Turn
from cmi_inspect.dates import date_mentions, format_day
from cmi_inspect.text import NUMBER_WORDS, tokens
from cmi_inspect.xl.answers import answer_aliases, answer_pattern, same_value, stems
from cmi_inspect.xl.locomo import ExampleContext, Session
from cmi_inspect.xl.memories import is_sound, restated_phrases


@dataclass(frozen=True)
class Slot:
    """The value an example's answer rests on, as its evidence turn states it."""

    turn: Turn
    value: str
    """As the turn writes it; empty when the value is the day the turn was said on."""
    dated: bool
    """The value is a date its session's day resolves (a relative phrase, or the day)."""

    @property
    def key(self) -> str:
        """Examples whose slots share this key share the slot's claims."""
        return f"{self.turn.dia_id}/{self.value.lower()}/{self.dated}"


def find_slot(ctx: ExampleContext) -> Slot | None:
    """The first evidence turn that states the answer, and how; None when none does word
    for word (the answer is then read from several words, ``memories.is_sound``)."""
    dated = bool(date_mentions(ctx.answer))
    for turn in ctx.evidence:
        session = ctx.session(turn.session)
        if dated:
            for phrase in restated_phrases(turn.text, session.day):
                if states_answer(phrase.written(), ctx.answer, True):
                    return Slot(turn, turn.text[phrase.start : phrase.end], True)
        pattern = answer_pattern(turn.text, ctx.answer)
        if pattern is not None:
            found = pattern.search(turn.text)
            assert found is not None
            return Slot(turn, found[0], False)
        if dated and states_answer(format_day(session.day), ctx.answer, True):
            return Slot(turn, "", True)
    return None


def meaning(slot: Slot, text: str, session: Session) -> str | None:
    """What a turn of ``text`` said in ``session`` states for the slot: the value as the
    text writes it, or for a dated slot the date it means; None when it states none."""
    if not slot.dated:
        found = re.search(rf"(?<!\w){re.escape(slot.value)}(?!\w)", text, re.IGNORECASE)
        return found[0] if found else None
    if not slot.value:
        return format_day(session.day)
    for phrase in restated_phrases(text, session.day):
        if text[phrase.start : phrase.end].lower() == slot.value.lower():
            return phrase.written()
    return None


RELATIVE = re.compile(r"\b(?:before|after|ago|since|until)\b", re.IGNORECASE)
"""Words that make a dated answer a day counted from another ("The Friday before ...")."""


def states_answer(value: str | None, answer: str, dated: bool) -> bool:
    """True when a stated value (``meaning``) reads as the answer: a word value when it
    holds the answer or an alias or is held by one (``answers.same_value``); a date when it
    is the answer or an alias, or falls within an answer that counts from no other day
    ("7 May 2023" within "May 2023"; for "The Friday before 27 February 2022" only its
    alias, the day itself)."""
    if value is None:
        return False
    if not dated:
        return same_value(value, answer)
    said = " ".join(tokens(value))
    if any(said == " ".join(tokens(alias)) for alias in answer_aliases(answer)):
        return True
    return not RELATIVE.search(answer) and is_sound([value], answer)


@dataclass(frozen=True)
class Edit:
    """A text with one slot's value made false."""

    text: str
    value: str
    """The value as the text writes it (a relative phrase, or "" for the day it is said)."""
    means: str
    """What it states (``meaning``): the value, or the date it means for a dated slot."""
    edit: str
    """value_swap, entity_swap or temporal_shift."""


def _kind(value: str) -> str:
    """A value's kind, for a swap to keep: a number, a name, or a thing."""
    words = value.split()
    if any(w.strip(",.").isdigit() or w.lower() in NUMBER_WORDS for w in words):
        return "number"
    if words and all(w[:1].isupper() for w in words if w.lower() not in ("a", "an", "the")):
        return "name"
    return "thing"


def value_swap(ctx: ExampleContext, slot: Slot, text: str, rng: random.Random) -> Edit | None:
    """The slot's value in ``text`` replaced by another answer of the same category: of the
    same kind and about as long, where the category has one."""
    answer_words, question_words = stems(ctx.answer), stems(ctx.question)
    options = [
        a
        for a in ctx.same_category_answers
        if not stems(a) & answer_words
        and not stems(a) & question_words
        and len(a.split()) <= 6
        and a.lower() not in text.lower()
        and not same_value(a, ctx.answer)
    ]
    alike = [
        a
        for a in options
        if _kind(a) == _kind(slot.value) and abs(len(a.split()) - len(slot.value.split())) <= 1
    ]
    if not options:
        return None
    value = rng.choice(alike or options)
    return Edit(_replaced(text, slot.value, value), value, value, "value_swap")


def entity_swap(ctx: ExampleContext, slot: Slot, text: str, rng: random.Random) -> Edit | None:
    """A name of the slot's value in ``text`` replaced by another name of the conversation."""
    for name in re.findall(r"\b[A-Z][a-z]{2,}\b", slot.value):
        if name not in ctx.conv.entities:
            continue
        options = [e for e in ctx.conv.entities if e != name and e not in ctx.question + ctx.answer]
        if options:
            value = re.sub(rf"\b{name}\b", rng.choice(options), slot.value)
            return Edit(_replaced(text, slot.value, value), value, value, "entity_swap")
    return None


def _replaced(text: str, old: str, new: str) -> str:
    pattern = re.compile(rf"(?<!\w){re.escape(old)}(?!\w)", re.IGNORECASE)
    return pattern.sub(new.replace("\\", "\\\\"), text)


def temporal_shift(
    ctx: ExampleContext, slot: Slot, text: str, session: Session, rng: random.Random
) -> Edit | None:
    """``text`` said in ``session``: as it is when its words mean another date there, else
    with another relative phrase of the conversation in place of the slot's."""
    said = meaning(slot, text, session)
    if said is not None and not states_answer(said, ctx.answer, True):
        return Edit(text, slot.value, said, "temporal_shift")
    if not slot.value:
        return None
    options = []
    for phrase in spoken_phrases(ctx):
        if phrase == slot.value.lower():
            continue
        shifted_text = _replaced(text, slot.value, phrase)
        shifted = meaning(Slot(slot.turn, phrase, True), shifted_text, session)
        if shifted is not None and not states_answer(shifted, ctx.answer, True):
            options.append(Edit(shifted_text, phrase, shifted, "temporal_shift"))
    return rng.choice(options) if options else None


def spoken_phrases(ctx: ExampleContext) -> list[str]:
    """The relative phrases said in the conversation, lower-cased, sorted: a shift says
    one of them, so its words are as common in poison as in the turns."""
    return sorted(
        {
            t.text[p.start : p.end].lower()
            for s in ctx.conv.sessions.values()
            for t in s.turns
            for p in restated_phrases(t.text, s.day)
        }
    )


Asked = tuple[ExampleContext, Slot]
"""A slot, with the context of the (first) example that asks it."""


@dataclass(frozen=True)
class TurnEdit:
    """A turn's text with every slot it states made false."""

    text: str
    edits: dict[str, Edit]
    """Slot key -> the edit that made it false."""


def false_turn(asked: list[Asked], session: Session, rng: random.Random) -> TurnEdit | None:
    """The turn, said in ``session``, with every slot it states made false: each word
    value replaced by another answer or name (drawn among those it allows), each date
    meaning another day there (``temporal_shift``); None when one cannot be."""
    text, edits = asked[0][1].turn.text, {}
    for ctx, slot in sorted(asked, key=lambda a: a[1].dated):
        if slot.dated:
            edit = temporal_shift(ctx, slot, text, session, rng)
        else:
            drawn = [value_swap(ctx, slot, text, rng), entity_swap(ctx, slot, text, rng)]
            options = [e for e in drawn if e]
            edit = rng.choice(options) if options else None
        if edit is None:
            return None
        text, edits[slot.key] = edit.text, edit
    return TurnEdit(text, edits)
