"""How XL words a memory: a turn's statements, in one of several phrasings a memory system
might keep (quoted or reported speech, third person or the agent's first person, dated by
the day or by the session's stamp).

A phrasing is drawn for each memory by ``memories.render_memory``; the same draw applies
to every label, so template words say nothing of it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from cmi_inspect.dates import format_day
from cmi_inspect.xl.params import MIN_STATEMENT_WORDS

if TYPE_CHECKING:
    from cmi_inspect.xl.locomo import Session

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)")


def statements(text: str) -> str:
    """What a turn states: its sentences that are not questions and have at least
    MIN_STATEMENT_WORDS words, in order; the whole text when none has.

    Pleasantries ("Wow!", "Thanks, Deb!") and questions back are what a memory system
    leaves out; the rule reads only the text, so it cuts every label's turns alike.
    """
    kept = [s for s in _SENTENCE_END.split(text.strip()) if _states(s)]
    return " ".join(kept) if kept else text.strip()


def stated_words(text: str) -> int:
    """How many words the text's statements have (0 when it states nothing)."""
    return sum(len(s.split()) for s in _SENTENCE_END.split(text.strip()) if _states(s))


def _states(sentence: str) -> bool:
    asks = sentence.rstrip(" \"')]").endswith("?")
    return not asks and len(sentence.split()) >= MIN_STATEMENT_WORDS


_IRREGULAR_PAST = frozenset(
    "was were went got had did made saw took found felt thought bought came left met ran told "
    "knew gave began kept said heard won lost wrote put sent spent built taught brought "
    "caught drove grew ate flew sang fell held stood sat paid became wore drew chose broke "
    "forgot understood".split()
)
_NO_AGREEMENT = _IRREGULAR_PAST | frozenset(
    "can could will would should might must may also just really still always never finally "
    "actually recently totally definitely usually often even only already both too".split()
)
_SUBJECT = {"am": "is", "have": "has", "do": "does", "don't": "doesn't"}
_CONTRACTED = {"'m": " is", "'ve": " has", "'d": " would", "'ll": " will"}


def _third_person_verb(verb: str) -> str:
    """The verb after a subject turned from "I" to a name ("love" -> "loves")."""
    low = verb.lower()
    if low in _SUBJECT:
        return _SUBJECT[low]
    if low in _NO_AGREEMENT or low.endswith(("ed", "ly", "s")) or not verb.isalpha():
        return verb
    if low.endswith(("sh", "ch", "x", "z", "o")):
        return verb + "es"
    if low.endswith("y") and low[-2:-1] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def reported(text: str, speaker: str, listener: str) -> str:
    """The text as reported speech: the speaker's "I" by name, "my" and "me" as "their" and
    "them", the listener's "you" by name."""

    out = re.sub(r"\bI\s+([A-Za-z']+)", lambda m: f"{speaker} {_third_person_verb(m[1])}", text)
    out = re.sub(r"\bI('m|'ve|'d|'ll)\b", lambda m: speaker + _CONTRACTED[m[1]], out)
    out = re.sub(r"\bI\b", speaker, out)
    out = re.sub(r"\b(?:my|My)\b", "their", out)
    out = re.sub(r"\bmine\b", "theirs", out)
    out = re.sub(r"\bme\b", "them", out)
    out = re.sub(r"\bmyself\b", "themself", out)
    out = re.sub(r"\b[Yy]ou're\b", f"{listener} is", out)
    out = re.sub(r"\b[Yy]ou've\b", f"{listener} has", out)
    out = re.sub(r"\b[Yy]ou (are|were|have)\b", lambda m: f"{listener} {_BE[m[1]]}", out)
    out = re.sub(r"\b(?:[Yy]our|yours)\b", f"{listener}'s", out)
    return re.sub(r"\b(?:[Yy]ou|yourself)\b", listener, out)


_BE = {"are": "is", "were": "was", "have": "has"}


@dataclass(frozen=True)
class Phrasing:
    """One way of writing a memory: a frame, with the text quoted or reported."""

    name: str
    frame: str
    """With the fields ``speaker``, ``listener``, ``text``, ``day`` and ``stamp`` (the
    session's date and time as LoCoMo writes it)."""
    reports: bool = False
    """The text goes in as reported speech (``reported``), not as a quote."""

    def render(self, speaker: str, listener: str, text: str, session: Session) -> str:
        said = reported(text, speaker, listener) if self.reports else text
        day, stamp = format_day(session.day), session.date_time
        return self.frame.format(
            speaker=speaker, listener=listener, text=said, day=day, stamp=stamp
        )


PHRASINGS: tuple[Phrasing, ...] = (
    Phrasing("told_on_day", 'On {day}, {speaker} told {listener}: "{text}"'),
    Phrasing("to_on_day", '{speaker}, to {listener} on {day}: "{text}"'),
    Phrasing("reported_on_day", "{day}: {speaker} said that {text}", reports=True),
    Phrasing("noted_by_me", 'I noted on {day} that {speaker} said: "{text}"'),
    Phrasing(
        "said_in_session", 'In the session of {stamp}, {speaker} said to {listener}: "{text}"'
    ),
    Phrasing(
        "our_chat",
        "From {speaker} and {listener}'s chat of {stamp}: {speaker} mentioned that {text}",
        reports=True,
    ),
)
"""The phrasings a memory is drawn from, with equal chances: v2's choice (``BUILDER_VERSION``)."""
