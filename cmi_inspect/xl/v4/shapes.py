"""A value's shape (quotes, preposition, article, core), the form checks, and value_type."""

from __future__ import annotations

import re
from dataclasses import dataclass

from cmi_inspect.dates import date_spans
from cmi_inspect.xl.v4.kinds import (
    _ADJECTIVE_END,
    _ARTICLES,
    _CLAUSE_WORDS,
    _CONNECTORS,
    _COUNT,
    _COURSE_HEADS,
    _DURATION,
    _FREQUENCY,
    _PLACE_NOUNS,
    _PREFIX,
    _PREPOSITIONS,
    _QUALITY_END,
    _QUOTES,
    _TOPPINGS,
    ADJECTIVES,
    ANCHOR,
    MAX_WORDS,
    NAME_TYPES,
    NUMBERED,
    TITLED,
    _entries,
    _question_type,
    _value_type,
    _vocabulary,
    _words,
)


@dataclass(frozen=True)
class Shape:
    """A value split into what a false value keeps (quotes, a preposition, an article)
    and its core, the words a false value replaces."""

    opening: str
    """Quote, preposition and article before the core, as written ("in a ", "\\"")."""
    article: str
    """The article, lower-cased: a false core gets "a" or "an" by its first letter."""
    core: str
    closing: str

    @property
    def words(self) -> int:
        return len(self.core.split())

    def render(self, core: str, kind: str) -> str:
        """The false value: ``core`` in this shape (article fixed for its first letter,
        first letter capitalised where this core's is, for a common noun)."""
        lead = self.core.split()[0] if self.core.split() else ""
        if kind not in NAME_TYPES and lead[:1].isupper() and lead[1:].islower():
            titled = self.words > 1 and _is_name(self.core)
            core = _titled(core) if titled else core[:1].upper() + core[1:]
        lead, first = self.core.split()[0], core.split()[0]
        if lead.lower() == first.lower() in _ARTICLES:  # "The Wolves": "The Tigers"
            core = lead + core[len(first) :]
        opening = self.opening
        written = re.search(r"\b(a|an)\s+$", opening, re.IGNORECASE)
        if written is not None:
            article = "an" if _vowel(core) else "a"
            article = article.capitalize() if written[1][0].isupper() else article
            opening = f"{opening[: written.start()]}{article} "
        return f"{opening}{core}{self.closing}"


def _titled(text: str) -> str:
    """Every word but a connector capitalised ("Banana Bread")."""
    words = text.split()
    return " ".join(
        w if i and w in _CONNECTORS else w[:1].upper() + w[1:] for i, w in enumerate(words)
    )


def shape(value: str, kind: str) -> Shape:
    """The value's shape; a name's article ("The Alchemist") and a date's ("a year ago")
    stay in its core, and only a place or a date keeps a preposition ("in a forest", "in
    2010")."""
    stripped = value.strip()
    left = len(stripped) - len(stripped.lstrip(_QUOTES))
    right = len(stripped) - len(stripped.rstrip(_QUOTES))
    inner = stripped[left : len(stripped) - right]
    opening, closing = stripped[:left], stripped[len(stripped) - right :]
    found = _PREFIX.match(inner)
    dated = re.match(r"(?:in|on)\s+(?=\S)", inner, re.IGNORECASE) if kind == "date" else None
    if dated is not None:
        return Shape(opening + dated[0], "", inner[dated.end() :], closing)
    keeps = kind in NAME_TYPES - {"place"} or kind in NUMBERED | {"date", "frequency"}
    if keeps or found is None or (found["prep"] and kind != "place") or found.end() == len(inner):
        return Shape(opening, "", inner, closing)
    article = (found["art"] or "").lower()
    return Shape(opening + inner[: found.end()], article, inner[found.end() :], closing)


def _vowel(text: str) -> bool:
    """True when the text takes "an" ("an owl", but "a unicorn")."""
    return text[:1].lower() in "aeiou" and not text.lower().startswith(("uni", "use", "eu"))


_SINGULAR_S = frozenset({"pilates", "news", "chess", "series", "species", "lens", "gas"})


def _plural(text: str) -> bool:
    """True when the text's last word is a plural ("cats", not "chess" nor "pilates")."""
    last = text.split()[-1].lower() if text.split() else ""
    singular = last.endswith(("ss", "us", "is", "ics", "ous")) or last in _SINGULAR_S
    return last.endswith("s") and not singular


def _is_name(text: str) -> bool:
    """Every word that is not a connector starts with a capital ("Lord of the Rings")."""
    named = [w for w in text.split() if w.lower() not in _CONNECTORS]
    return bool(named) and all(w[:1].isupper() or w[:1].isdigit() for w in named)


def _form_fits(kind: str, value: str) -> bool:
    """True when the value has the form its type takes (a thing, not a clause; a number
    for a count; a name for a name; adjectives for a feeling)."""
    form = shape(value, kind)
    core, words = form.core, _words(form.core)
    if not words or len(words) > MAX_WORDS.get(kind, 4):
        return False
    if kind in NUMBERED:
        return _amount(core, kind) is not None
    if kind == "date":
        return bool(date_spans(core, ANCHOR))
    if kind == "frequency":
        return bool(_FREQUENCY.search(core))
    if kind == "book_or_title":
        return _is_name(core) or form.opening.endswith(tuple(_QUOTES))
    if kind in NAME_TYPES - {"place", "person", "breed"} and _is_name(core):
        return not _CLAUSE_WORDS & set(words)  # "Dungeons of the Dragon"
    if not _is_thing(words):
        return False
    if kind in ADJECTIVES:
        return all(_adjective(w) for w in words if w != "and")
    if kind in ("quality", "emotion"):
        return all(w in _vocabulary(kind) or w.endswith(_QUALITY_END) for w in words if w != "and")
    if kind in ("breed", "sport"):  # a breed the lexicon knows ("Lab"), not a dog's name
        return all(w in _vocabulary(kind) for w in words)  # ("Pixie"); no "2D adventure"
    if kind in NAME_TYPES:
        return _is_name(core) or core.islower() and _lower_name_fits(kind, words)
    return _common_case(kind, core, words)


def _common_case(kind: str, core: str, words: list[str]) -> bool:
    """A common noun's capitals: none, a first capital of several words ("Video games", a
    sentence's first words) or of a word the lexicon knows ("Yoga"), or a dish's name in
    capitals ("Chicken Pot Pie"); a capitalised name ("Ferrari") is not a common noun."""
    first, rest = core.split()[0], core.split()[1:]
    acronym = len(first) > 1 and first.isupper() and all(w.islower() for w in rest)
    if not core[:1].isupper() or acronym or len(words) > 1 and core[1:].islower():
        return True  # "LGBTQ+ counseling workshop", "Video games"
    if kind in TITLED and len(words) > 1:
        return True
    return all(w in _vocabulary(kind) for w in words if w != "and")


def _is_thing(words: list[str]) -> bool:
    """A noun phrase: no pronoun or verb of a clause, no article or preposition (but "of")
    after the first word, and not ending in a preposition."""
    inner_article = any(w in _ARTICLES for w in words[1:])
    inner_preposition = any(w in _PREPOSITIONS - {"of"} | {"or"} for w in words[1:])
    ends_open = words[-1] in _PREPOSITIONS | _ARTICLES | {"and"}
    return not (_CLAUSE_WORDS & set(words) or inner_article or inner_preposition or ends_open)


def _adjective(word: str) -> bool:
    """A word the adjective lexicons know, or with an adjective's ending and not a noun's
    ("excitement" is no feeling word, but an emotion)."""
    known = any(word in _vocabulary(k) for k in ADJECTIVES)
    return known or word.endswith(_ADJECTIVE_END) and not word.endswith(_QUALITY_END)


def _lower_name_fits(kind: str, words: list[str]) -> bool:
    """A lower-case value of a name type: a relation for a person ("friends"), a common
    place ("homeless shelter"), a board game ("chess")."""
    if kind == "place":
        return words[-1] in _vocabulary(kind) | _PLACE_NOUNS
    return kind in ("person", "game") and words[-1] in _vocabulary(kind)


def value_type(question: str, answer: str, value: str) -> str:
    """The semantic type of a slot value (one of ``TYPES``): what the question asks for
    when the value has that type's form, else what the value is by itself (a lexicon
    entry: "violin", "Boston"); "other" when unsure (a clause, a phrase)."""
    asked = _question_type(question)
    for reading in _READINGS.get(asked, (asked,)) if asked else ():
        kind = _narrowed(reading, shape(value, reading).core)
        if _form_fits(kind, value):
            return kind
    core = shape(value, "other").core
    by_value = _value_type(question, core)
    if by_value is None or not _form_fits(by_value, value):
        return "other"
    if by_value == "activity" and _EXERCISE & set(_words(question)):
        return "exercise"  # "What suggestions did Evan give for low-impact exercises?"
    return _narrowed(by_value, shape(value, by_value).core)


_EXERCISE = frozenset({"exercise", "exercises", "workout", "workouts", "fitness", "sport",
                       "sports"})  # fmt: skip
"""Question words by which an activity must be an exercise."""


_READINGS = {"feeling": ("feeling", "emotion")}
"""The types a question's type may be read as, in turn ("feel": "excited", or "peace")."""


def _narrowed(kind: str, core: str) -> str:
    """A narrower type the value shows: a country, a city or the outdoors for a place
    ("Ireland", "the beach"), food or a car for a thing ("vegan ice cream", "Ferrari"), a
    description for a feeling said of a thing ("stressful")."""
    low = core.lower()
    last = (_words(low) or [""])[-1]
    if kind == "place":
        narrow = next((k for k in ("country", "city") if low in _entries(k)), kind)
        outdoors = narrow == kind and core.islower() and last in _vocabulary("outdoors")
        return "outdoors" if outdoors else narrow
    if kind == "object" and last in _vocabulary("food") - _vocabulary(kind):
        return "food"
    if kind == "food" and last in _TOPPINGS:  # "coconut cream frosting": what tops a cake
        return "ingredient"
    if kind == "object" and low in _entries("car"):  # "a masterpiece on wheels": a Ferrari
        return "car"
    if kind == "activity" and last in _COURSE_HEADS:
        return "course"
    if kind == "activity" and last in _vocabulary("food") - _vocabulary(kind):
        return "food"  # "candy", a diet's habit
    said_of_things = all(w.endswith(_OF_THINGS) for w in _words(low) if w != "and")
    if kind == "feeling" and said_of_things:  # "stressful" work, not a "determined" one
        return "description"
    return kind


_GLOOMY = frozenset(
    {"nervous", "anxious", "overwhelmed", "frustrated", "disappointed", "restless", "uneasy",
     "confused", "stressed", "sad", "scared", "worried", "lonely", "exhausted", "exhausting",
     "chaotic", "intense", "challenging", "tough", "overwhelming", "stressful", "draining",
     "hectic", "tiring", "frustrating", "difficult", "awestruck", "humbled", "emotional"}
)  # fmt: skip
"""Adjectives of a hard time: a false feeling or description keeps the true one's mood
("tough and stressful" work is not "tough and cozy")."""
_OF_THINGS = ("ing", "ful", "ous", "ive", "ble")
"""Endings of adjectives said of a thing ("exciting", "stressful"), not of a feeling one
("excited", "stressed")."""


def _with_the(answer: str, part: str, kind: str) -> str:
    """A name's part of a list answer with the "The" the answer gives it ("The Alchemist")."""
    found = re.search(rf"\bThe {re.escape(part)}", answer)
    return found[0] if kind in NAME_TYPES and found else part


def _normal(kind: str, value: str) -> str:
    """A pool value as the pool keeps it: its core, a common noun in lower case (but an
    acronym: "LGBTQ+"), a dish's capitals too ("Chicken Pot Pie": "chicken pot pie")."""
    core = shape(value, kind).core.strip(" .,;:")
    if kind in ("date", "frequency") or kind in NAME_TYPES and (_is_name(core) or core.islower()):
        return core
    if kind in TITLED and _is_name(core):
        return core.lower()
    first = core.split()[0] if core.split() else ""
    return core if first.isupper() and len(first) > 1 else core[:1].lower() + core[1:]


def _amount(core: str, kind: str) -> re.Match[str] | None:
    """The one number of a count ("three"), or the amount of a duration ("a few" months);
    None for a range ("30-60 seconds")."""
    if re.search(r"\d\s*[-–]\s*\d", core):
        return None
    if kind == "count":
        found = _COUNT.findall(core)
        return _COUNT.search(core) if len(found) == 1 else None
    return _DURATION.search(core) if len(_COUNT.findall(core)) <= 1 else None
