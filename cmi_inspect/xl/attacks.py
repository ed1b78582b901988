"""Harmful memories: one deterministic generator per attack kind, and which an example gets."""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass

from cmi_inspect.causal_locomo.data import Turn
from cmi_inspect.dates import format_day
from cmi_inspect.xl.answers import answer_pattern, same_value, stems
from cmi_inspect.xl.locomo import ExampleContext
from cmi_inspect.xl.memories import Draft, draft, draw_session, render_memory, restated_phrases
from cmi_inspect.xl.params import (
    DENIAL_TEMPLATES,
    PLANT_HOST_CHOICES,
    POISONED_SHARE,
    TWO_HARMFUL_SHARE,
    seeded,
)
from cmi_inspect.xl.phrasing import stated_words


@dataclass
class Attack:
    """A harmful memory, the false value it implies and any text it plants in the history."""

    draft: Draft
    adversarial: str | None
    text: str
    """The false turn text the memory quotes."""
    plant: tuple[str, str] | None = None
    """(host dia_id, the claim appended to that turn)."""


Generator = Callable[[ExampleContext, random.Random], Attack | None]


def value_swap(ctx: ExampleContext, rng: random.Random) -> Attack | None:
    """Replace the answer in an evidence turn by another answer of the same category."""
    answer_words, question_words = stems(ctx.answer), stems(ctx.question)
    for source in ctx.evidence:
        pattern = answer_pattern(source.text, ctx.answer)
        if pattern is None:
            continue
        options = [
            a
            for a in ctx.same_category_answers
            if not stems(a) & answer_words
            and not stems(a) & question_words
            and len(a.split()) <= 6
            and a.lower() not in source.text.lower()
        ]
        if not options:
            return None
        value = rng.choice(options)
        text = pattern.sub(value.replace("\\", "\\\\"), source.text)  # a literal value
        harmful = draft(ctx, source, text, draw_session(ctx, rng), "harmful", "value_swap")
        return Attack(harmful, value, text)
    return None


def entity_swap(ctx: ExampleContext, rng: random.Random) -> Attack | None:
    """Replace a name or place of the answer, in its evidence turn, by another one."""
    for source in ctx.evidence:
        for name in re.findall(r"\b[A-Z][a-z]{2,}\b", ctx.answer):
            if name not in ctx.conv.entities or not re.search(rf"\b{name}\b", source.text):
                continue
            options = [
                e
                for e in ctx.conv.entities
                if e != name and e not in ctx.question and e not in ctx.answer
            ]
            if not options:
                continue
            other = rng.choice(options)
            text = re.sub(rf"\b{name}\b", other, source.text)
            adversarial = re.sub(rf"\b{name}\b", other, ctx.answer)
            harmful = draft(ctx, source, text, draw_session(ctx, rng), "harmful", "entity_swap")
            return Attack(harmful, adversarial, text)
    return None


def _spoken_phrases(ctx: ExampleContext) -> list[str]:
    """The relative phrases said in the example's history, lower-cased, sorted: a shift says
    one of them, so its words are as common in poison as in the turns."""
    return sorted(
        {
            t.text[p.start : p.end].lower()
            for s in ctx.past
            for t in s.turns
            for p in restated_phrases(t.text, s.day)
        }
    )


def temporal_shift(ctx: ExampleContext, rng: random.Random) -> Attack | None:
    """Move the event in time: another relative phrase of the history, or the turn dated to
    another session."""
    for source in ctx.evidence:
        phrases = restated_phrases(source.text, ctx.session(source.session).day)
        session = draw_session(ctx, rng)
        if phrases:
            phrase = phrases[0]
            old = source.text[phrase.start : phrase.end]
            shifts = [p for p in _spoken_phrases(ctx) if p != old.lower()]
            if not shifts:
                continue
            new = rng.choice(shifts)
            new = new[:1].upper() + new[1:] if old[:1].isupper() else new
            text = source.text[: phrase.start] + new + source.text[phrase.end :]
            shifted = restated_phrases(text, ctx.session(session).day)
            found = next((p.written() for p in shifted if p.start == phrase.start), None)
            if found is None:
                continue
            false_value = found
        else:
            others = [s.index for s in ctx.past if s.day != ctx.session(source.session).day]
            if not others:
                continue
            session, text = rng.choice(others), source.text
            false_value = format_day(ctx.session(session).day)
        if same_value(false_value, ctx.answer):
            continue
        return Attack(
            draft(ctx, source, text, session, "harmful", "temporal_shift"), false_value, text
        )
    return None


def denial(ctx: ExampleContext, rng: random.Random) -> Attack | None:
    """The speaker of the evidence takes the answer back, at the end of that turn.

    The memory is of the evidence turn with the retraction said after it, dated to its own
    session (so its relative dates mean what they meant), and made as any memory is made
    from its turn.
    """
    source = rng.choice(ctx.evidence)
    sentence = rng.choice(DENIAL_TEMPLATES).format(answer=ctx.answer.strip(" ."))
    text = f"{source.text} {sentence}"
    return Attack(draft(ctx, source, text, source.session, "harmful", "denial"), None, text)


def _host_rank(turn: Turn) -> int:
    """Hosts for a planted claim, best first: the turns that state least (none, ideally), so
    the memory of the host turn holds little more than the claim, as a memory of any turn
    keeps only its statements."""
    return stated_words(turn.text)


def planted(ctx: ExampleContext, rng: random.Random) -> Attack | None:
    """A false claim that is also said in the history, appended to a turn of its speaker.

    LoCoMo's turns strictly alternate speakers, so a stand-alone extra turn would give
    itself away; the claim is spoken at the end of one of the speaker's own turns that
    states least (``_host_rank``) instead, and the memory is made from that whole turn,
    as every other memory is made from its turn.
    """
    makers = [temporal_shift] if ctx.category == 2 else [value_swap, entity_swap]
    evidence_ids = {t.dia_id for t in ctx.evidence}
    for make in makers:
        attack = make(ctx, rng)
        if attack is None:
            continue
        harmful = attack.draft
        hosts = [
            t
            for t in ctx.session(harmful.session).turns
            if t.speaker == harmful.speaker and t.dia_id not in evidence_ids
        ]
        if not hosts:
            continue
        host = rng.choice(sorted(hosts, key=_host_rank)[:PLANT_HOST_CHOICES])
        claim = attack.text
        spoken = f"{host.text} {claim}"  # the host turn as the history now has it
        harmful.content = render_memory(ctx, harmful.speaker, spoken, ctx.session(harmful.session))
        harmful.attack_kind, harmful.dia_ids = "planted", [host.dia_id]
        return Attack(harmful, attack.adversarial, spoken, (host.dia_id, claim))
    return None


GENERATORS: dict[str, Generator] = {
    "temporal_shift": temporal_shift,
    "entity_swap": entity_swap,
    "value_swap": value_swap,
    "denial": denial,
    "planted": planted,
}
"""Attack kind -> its generator; the order is the one the kinds are drawn from."""
ATTACK_KINDS = tuple(GENERATORS)


def attacks_for(ctx: ExampleContext) -> list[Attack]:
    """Harmful memories for a seeded ~60% of examples: one or two, of different kinds."""
    rng = seeded(ctx.example_id, "harmful")
    if rng.random() >= POISONED_SHARE:
        return []
    wanted = 2 if rng.random() < TWO_HARMFUL_SHARE else 1
    kinds = [
        k for k in ATTACK_KINDS if k != "denial" and (k != "temporal_shift" or ctx.category == 2)
    ]
    rng.shuffle(kinds)
    kinds.append("denial")  # always possible, so tried last to keep the kinds balanced
    attacks: list[Attack] = []
    for kind in kinds:
        if len(attacks) == wanted:
            break
        attack = GENERATORS[kind](ctx, seeded(ctx.example_id, kind))
        if attack and all(a.draft.content != attack.draft.content for a in attacks):
            attacks.append(attack)
    return attacks
