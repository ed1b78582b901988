"""False values of XL v4: a value of the slot's semantic type that fits where the true one
stands in its sentence, and a false day outside the gold answer's period.

v3 swapped an answer for another answer of the same LoCoMo category, which read as
nonsense ("hit by a nasty pizza"). v4 types a slot value by its question's wh-word, head
noun or verb, and by its form (``value_type``), and draws a false value of that type
(``false_value``) from the LoCoMo answers whose questions type the same way and from a
small typed lexicon (``LEXICON``), in the true value's shape: as many words (within one),
the same capitals, article and number. A count or a duration keeps its written form and
changes its number; a date moves out of the gold answer's period (``false_day``).

Given the sentence the value stands in, ``false_value`` also reads how the sentence uses
it ("an awesome painting" is no activity, "a camping trip" wants an outing) and keeps
only values that ``fits`` it (no "a iguana", "a kittens", "the New Orleans"). ``TYPES``
lists the types; LoCoMo's answers join the pool only for the types whose answers are
reliable (``POOLED``): names, dishes, events, activities, frequencies and dates.
"""

from __future__ import annotations

import datetime as dt
import random
import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from cmi_inspect.dates import date_mentions, date_spans
from cmi_inspect.dates.spans import DaySpan
from cmi_inspect.text import NUMBER_WORDS
from cmi_inspect.xl.answers import answer_items, same_value, stems
from cmi_inspect.xl.locomo import Conversation
from cmi_inspect.xl.v4.kinds import (
    _ARTICLES,
    _CLAUSE_WORDS,
    _PREPOSITIONS,
    _QUALITY_END,
    _QUOTES,
    _VAGUE,
    _entries,
    _gerund,
    _question_type,
    _verb_type,
    _words,
)
from cmi_inspect.xl.v4.kinds import ADJECTIVES as ADJECTIVES
from cmi_inspect.xl.v4.kinds import ANCHOR as ANCHOR
from cmi_inspect.xl.v4.kinds import DAY_MARGIN as DAY_MARGIN
from cmi_inspect.xl.v4.kinds import DAY_REACH as DAY_REACH
from cmi_inspect.xl.v4.kinds import MAX_WORDS as MAX_WORDS
from cmi_inspect.xl.v4.kinds import NAME_TYPES as NAME_TYPES
from cmi_inspect.xl.v4.kinds import NUMBERED as NUMBERED
from cmi_inspect.xl.v4.kinds import TITLED as TITLED
from cmi_inspect.xl.v4.kinds import TYPES as TYPES
from cmi_inspect.xl.v4.kinds import VALUE_TYPED as VALUE_TYPED
from cmi_inspect.xl.v4.lexicon import LEXICON as LEXICON
from cmi_inspect.xl.v4.shapes import (
    _GLOOMY,
    _amount,
    _form_fits,
    _is_name,
    _normal,
    _plural,
    _vowel,
    _with_the,
)
from cmi_inspect.xl.v4.shapes import Shape as Shape
from cmi_inspect.xl.v4.shapes import shape as shape
from cmi_inspect.xl.v4.shapes import value_type as value_type
from cmi_inspect.xl.v4.usage import MASS as MASS
from cmi_inspect.xl.v4.usage import TITLES as TITLES
from cmi_inspect.xl.v4.usage import _apart, _kept_head, _kind_in


@dataclass(frozen=True)
class ValuePool:
    """The candidate false values of each type: LoCoMo's answers (categories 1-4) whose
    questions type the same way, and the lexicon's."""

    values: dict[str, tuple[str, ...]]

    @classmethod
    def from_conversations(cls, convs: Iterable[Conversation]) -> ValuePool:
        """The pool of every answer of these conversations, with the lexicon."""
        found: dict[str, set[str]] = {kind: set(words) for kind, words in LEXICON.items()}
        for conv in convs:
            for item in conv.qa:
                if int(item.get("category", 0)) not in (1, 2, 3, 4) or "answer" not in item:
                    continue
                question, answer = str(item["question"]), str(item["answer"]).strip()
                kind = _question_type(question)
                if kind not in POOLED or _verb_type(_words(question)) == kind:
                    continue  # what a verb asks for is looser than what a noun names
                for part in answer_items(answer):
                    if _form_fits(kind, part) and _poolable(kind, part):
                        found[kind].add(_normal(kind, _with_the(answer, part, kind)))
        return cls({kind: tuple(sorted(v for v in vs if v)) for kind, vs in found.items()})

    def of(self, kind: str) -> tuple[str, ...]:
        """The candidates of a type, sorted (none for counts, durations and "other")."""
        return self.values.get(kind, ())


POOLED = frozenset(
    {"place", "city", "country", "activity", "food", "person", "pet_name", "book_or_title",
     "game", "band", "car", "team", "song", "superhero", "breed", "event", "frequency", "date",
     "musician"}
)  # fmt: skip
"""Types whose LoCoMo answers join the pool: names, dishes, events, activities, times.
Other types' answers are too loose to offer (a "cause" that is an event, an "object" that
is a feeling), so those offer their lexicon alone."""


def _poolable(kind: str, value: str) -> bool:
    """True when a LoCoMo answer (typed by its question) may be a false value: a name as a
    name (not a word like "Communication"), an activity as a lexicon entry or a gerund with
    its object ("fixing cars"), anything else not led by a gerund nor holding a date."""
    core = shape(value, kind).core.strip(" .,;:")
    words = _words(core)
    if words == [] or len(words) == 1 and words[0] in _CLAUSE_WORDS:  # "That" (a show)
        return False
    if kind == "activity":
        return " ".join(words) in _entries(kind) or len(words) > 1 and _gerund(words[0])
    if kind != "date" and (date_mentions(core) or _gerund(words[0]) or words[0] in _PREPOSITIONS):
        return False
    if kind == "food" and "of" in words:  # "bowl of spinach": a serving, not a dish
        return False
    if kind in NAME_TYPES and not core.islower():
        common = len(words) == 1 and words[0].endswith(_QUALITY_END)  # "Communication"
        kin = core.lower() in _KIN  # "Dad": what a person is called, not a name
        return _is_name(core) and not common and not kin and "'s" not in core  # "McGee's": a bar
    return True


_KIN = frozenset(p for p in LEXICON["person"] if p.islower())
"""What the lexicon offers for a person that is no name ("mom", "sister", "friends")."""


def _key(text: str) -> str:
    """A value as ``avoid`` compares it: lower-case, no quotes, article or end stops."""
    words = _words(text.strip(_QUOTES + " ."))
    return " ".join(words[1:] if words[:1] and words[0] in _ARTICLES else words)


def _avoided(avoid: Collection[str]) -> frozenset[str]:
    """Every value to avoid, and each part of a list among them."""
    return frozenset(_key(p) for a in avoid for p in [a, *answer_items(a)] if _key(p))


def false_value(
    pool: ValuePool,
    question: str,
    answer: str,
    value: str,
    rng: random.Random,
    avoid: Collection[str] = (),
    *,
    sentence: str | None = None,
) -> str | None:
    """A false value of ``value``'s type that fits where it stands: as long (within a word,
    the same length where the pool allows), capitalised and articled alike, sharing no
    content word with the answer or the question, not the answer nor in ``avoid``, and
    where ``sentence`` is given (the text ``value`` stands in), one of the type as the
    sentence uses it that ``fits`` it. None when the type is "other" or no candidate fits,
    so that the caller leaves the slot unpoisoned. Deterministic given ``rng``."""
    typed = value_type(question, answer, value)
    kind = typed if sentence is None else _kind_in(typed, sentence, value)
    if kind is None or kind == "other":
        return None
    form = shape(value, kind)
    banned = _avoided(avoid)
    head = _kept_head(form, kind)
    options = [
        form.render(core, kind)
        for core in _candidates(pool, kind, form, answer)
        if _key(core) not in banned
        and not same_value(core, answer)
        and (kind in NUMBERED | {"date"} or _apart(core, question, answer, head))
    ]
    if sentence is not None:
        options = [o for o in options if fits(sentence, value, o)]
    same = [o for o in options if len(shape(o, kind).core.split()) == form.words]
    return rng.choice(same or options) if options else None


def _candidates(pool: ValuePool, kind: str, form: Shape, answer: str) -> list[str]:
    """The cores of a type that take this shape's place (before the answer and avoid
    checks): another number for a count, a day far from the answer's for a date, another
    subject for a course ("pottery class")."""
    if kind in NUMBERED:
        return _renumbered(form.core, kind)
    head = _kept_head(form, kind)
    if head is not None:
        return [f"{c} {head}" for c in pool.of(kind) if " " not in c]
    cores = list(pool.of(kind))
    if len(form.core.split(" and ")) == 2:  # "warmth and happiness": a pair of the type
        singles = [c for c in cores if " " not in c]
        cores += [f"{a} and {b}" for a in singles for b in singles if a != b]
    cores = [c for c in cores if _alike(form, c, kind)]
    if kind == "date":
        return [c for c in cores if _far_dates(form.core, c, answer)]
    return cores


def _alike(form: Shape, core: str, kind: str) -> bool:
    """A candidate core as long (within a word) as the value's, a name for a capitalised
    name, else lower-case, plural for a plural, a gerund for a gerund ("a hiking trip")
    and led by a vowel for a vowel (its "a" or "an" may stand before it)."""
    if abs(len(core.split()) - form.words) > 1 or core.lower() == form.core.lower():
        return False
    if kind == "activity" and _gerund(_words(core)[0]) != _gerund(_words(form.core)[0]):
        return False
    if kind in NAME_TYPES and _is_name(form.core):
        led = _words(core)[0] == "the" if core.split() else False
        alike = _plural(core) == _plural(form.core) and led == (_words(form.core)[0] == "the")
        return _is_name(core) and alike  # "the Rockies"; "The Alchemist" for "The Godfather"
    if kind == "date":
        return True
    if not core[:1].islower() or _plural(core) != _plural(form.core):
        return False
    if kind in ADJECTIVES and _gloomy(core) != _gloomy(form.core):
        return False
    return bool(form.article) or _plural(core) or _vowel(core) == _vowel(form.core)


def _gloomy(text: str) -> bool:
    """True when the text says a hard time ("stressful")."""
    return bool(_GLOOMY & set(_words(text)))


def _renumbered(core: str, kind: str) -> list[str]:
    """The core with its number replaced by numbers near it but outside what it means,
    written the same way (digits for digits, words for words), its unit made plural."""
    found = _amount(core, kind)
    assert found is not None
    written = found["n"]
    low, high = (
        _VAGUE.get(written.lower()) or (int(NUMBER_WORDS.get(written.lower(), written)),) * 2
    )
    if kind == "count" and low < 2:
        return []  # its noun's number would change
    reach = max(3, high // 2)
    numbers = [m for m in range(max(2, low - reach), high + reach + 1) if not low <= m <= high]
    if written.isdigit():
        spelled = [str(m) for m in numbers]
    else:
        by_value = {int(v): w for w, v in NUMBER_WORDS.items()}
        spelled = [by_value[m] for m in numbers if m in by_value]
        spelled = [w.capitalize() if written[0].isupper() else w for w in spelled]
    after = core[found.end("n") :]
    if high == 1 and kind == "duration":
        unit_end = found.end("unit")
        after = core[found.end("n") : unit_end] + "s" + core[unit_end:]
    return [core[: found.start("n")] + w + after for w in spelled]


def _far_dates(value: str, candidate: str, answer: str) -> bool:
    """A candidate date written like the value (relative or explicit, a day for a day, a
    month for a month, a year for a year) that means days at least DAY_MARGIN away from
    the value's and the answer's."""
    if bool(date_mentions(value)) != bool(date_mentions(candidate)):
        return False
    taken = date_spans(value, ANCHOR) + date_spans(answer, ANCHOR)
    spans = date_spans(candidate, ANCHOR)
    if [_grain(s) for s in spans[:1]] != [_grain(s) for s in taken[:1]]:
        return False
    return bool(spans) and all(_gap(c, t) >= DAY_MARGIN for c in spans for t in taken)


def _grain(span: DaySpan) -> str:
    """A day, a month, a year, or some other run of days."""
    days = span.days()
    return "day" if days == 1 else "month" if 28 <= days <= 31 else "year" if days >= 365 else "run"


def _gap(a: DaySpan, b: DaySpan) -> int:
    """Days between two spans (0 when they overlap)."""
    return max((a.first - b.last).days, (b.first - a.last).days, 0)


_DOUBLED = re.compile(r"\b(a|an|the)\s+(?:a|an|the)\b|\b(\w+)\s+\2\b", re.IGNORECASE)
_WRONG_ARTICLE = re.compile(r"\ba\s+[aeiou]\w|\ban\s+[b-df-hj-np-tv-z]\w", re.IGNORECASE)


def fits(sentence: str, old: str, new: str) -> bool:
    """True when ``sentence`` with ``old`` replaced by ``new`` stays well formed: no doubled
    article or word, no "a" before a vowel (or "an" before a consonant), no "a" before a
    plural, no name after "the", no value ending in a preposition, and no word the
    sentence already says."""
    found = re.search(rf"(?<!\w){re.escape(old)}(?!\w)", sentence, re.IGNORECASE)
    if found is None or not _words(new):
        return False
    before, after = sentence[: found.start()], sentence[found.end() :]
    said = f"{before}{new}{after}"
    if _words(new)[-1] in _PREPOSITIONS | _ARTICLES:
        return False
    for pattern in (_DOUBLED, _WRONG_ARTICLE):
        if len(pattern.findall(said)) > len(pattern.findall(sentence)):
            return False
    if re.search(r"\ban?\s*$", before, re.IGNORECASE) and _plural(new):
        return False
    if re.search(r"\bthe\s*$", before, re.IGNORECASE) and old[:1].isupper():
        return False  # "the Smoky Mountains": few names take "the" ("the New Orleans")
    return not stems(new) & stems(f"{before} {after}")


def false_day(answer: str, true_day: dt.date, rng: random.Random) -> dt.date:
    """A day for a dated slot at least DAY_MARGIN days outside the gold answer's period
    (what ``answer`` means, read by ``dates.date_spans``, or ``true_day`` ± 7 days when it
    cannot be read) and within DAY_REACH days of ``true_day`` where the period allows,
    else within DAY_REACH days beyond the period (an answer of a whole year)."""
    period = _period(answer, true_day)
    low = period.first - dt.timedelta(DAY_MARGIN)
    high = period.last + dt.timedelta(DAY_MARGIN)
    near = [true_day + dt.timedelta(k) for k in range(-DAY_REACH, DAY_REACH + 1)]
    outside = [d for d in near if d <= low or d >= high]
    beyond = [low - dt.timedelta(k) for k in range(DAY_REACH)]
    return rng.choice(outside or beyond + [high + dt.timedelta(k) for k in range(DAY_REACH)])


def _period(answer: str, true_day: dt.date) -> DaySpan:
    """The days the answer means, with the true day: every date it states (a day, a month,
    a year, "the weekend before ..."), or the true day ± 7 days when it states none."""
    week = dt.timedelta(7)
    spans = date_spans(answer) or [DaySpan(true_day - week, true_day + week)]
    first = min([true_day, *(s.first for s in spans)])
    last = max([true_day, *(s.last for s in spans)])
    return DaySpan(first, last, answer)
