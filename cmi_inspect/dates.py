"""Dates in conversation text: read as spans of days, written out, relative ones resolved.

The label-free CMI checks an answer's date against what the agent's own
history says, and the XL builder writes each memory's relative dates out. A
turn's "yesterday" or "last week" means nothing without the date of the
session it was said in, so relative expressions are resolved here,
deterministically, against that date; explicit dates ("7 May 2023",
"May 2023", "the week before 9 June 2023", "2019") are read as they are.
Every date becomes a ``DaySpan`` (first and last day it may mean), so that
"January 2023" and "19 January 2023" can be compared by overlap.

What the builder writes, this module reads back: ``spell`` and ``Offset.phrase``
write the forms that ``explicit_spans`` parses ("7 May 2023", "the week before
7 May 2023").
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from functools import lru_cache
from typing import Literal

from cmi_inspect.text import NUMBER_WORDS

MONTH_NAMES = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip
MONTHS: dict[str, int] = {}
"""Every spelling of a month read in text (full, three letters, "sept"), lower-cased."""
for _number, _name in enumerate(MONTH_NAMES, start=1):
    MONTHS[_name.lower()] = MONTHS[_name[:3].lower()] = _number
MONTHS["sept"] = 9
WEEKDAYS = {
    name: i
    for i, name in enumerate(
        ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
    )
}
COUNTS = {"a": 1, "an": 1, **{word: int(digits) for word, digits in NUMBER_WORDS.items()}}
"""Words that count units exactly ("a week", "three days")."""
FEW = (2, 4)
VAGUE_COUNTS = {
    "a couple of": (2, 2), "couple of": (2, 2), "a few": FEW, "few": FEW, "several": FEW,
}  # fmt: skip
"""Vague counts and the range each means."""

_MONTH = r"(?P<{}>" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<{}>\d{{1,2}})(?:st|nd|rd|th)?"
_YEAR = r"(?P<{}>(?:19|20)\d\d)"
_FULL_DATE = (
    rf"(?:{_DAY.format('d1')}\s*(?:of\s+)?{_MONTH.format('m1')},?\s*{_YEAR.format('y1')}"
    rf"|{_MONTH.format('m2')}\s+{_DAY.format('d2')},?\s*{_YEAR.format('y2')})"
)
_MONTH_YEAR = rf"{_MONTH.format('m3')},?\s+{_YEAR.format('y3')}"
_COUNT_WORDS = r"\d+|" + "|".join(sorted([*COUNTS, *VAGUE_COUNTS], key=len, reverse=True))
_COUNT = rf"(?P<n>{_COUNT_WORDS})"
_EXACT_COUNT = "|".join(COUNTS) + r"|\d{1,2}"
"""The counts a restated "<count> <unit>s ago" may have: exact ones, up to two digits."""
_UNIT = r"(?P<unit>day|week|month|year)s?"
_WEEKDAY_NAMES = "|".join(WEEKDAYS)
_WEEKDAY = rf"(?P<weekday>{_WEEKDAY_NAMES})"


@dataclass(frozen=True)
class DaySpan:
    """The days a date expression may mean, first and last included."""

    first: date
    last: date
    text: str = ""
    """The words it was read from, for the log."""

    def overlaps(self, other: DaySpan) -> bool:
        return self.first <= other.last and other.first <= self.last

    def same_days(self, other: DaySpan) -> bool:
        """True when both mean the same days, whatever words each was read from."""
        return self.first == other.first and self.last == other.last

    def covers(self, other: DaySpan) -> bool:
        """True when every day of ``other`` is one of these ("May 2023" covers "7 May 2023")."""
        return self.first <= other.first and other.last <= self.last

    def days(self) -> int:
        return (self.last - self.first).days + 1

    def agreement(self, other: DaySpan) -> float:
        """Shared days over the days either covers: 1 for the same span, small when a
        day is compared with a year, so a vague date cannot confirm a precise one."""
        first, last = max(self.first, other.first), min(self.last, other.last)
        shared = max((last - first).days + 1, 0)
        return shared / (self.days() + other.days() - shared)

    def describe(self) -> str:
        if self.first == self.last:
            return self.first.isoformat()
        return f"{self.first.isoformat()}..{self.last.isoformat()}"


def _day(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def _single(day: date) -> DaySpan:
    return DaySpan(day, day)


def _month_span(year: int, month: int, text: str = "") -> DaySpan:
    last = calendar.monthrange(year, month)[1]
    return DaySpan(date(year, month, 1), date(year, month, last), text)


def _year_span(year: int, text: str = "") -> DaySpan:
    return DaySpan(date(year, 1, 1), date(year, 12, 31), text)


def _labelled(span: DaySpan, text: str) -> DaySpan:
    return DaySpan(span.first, span.last, text)


def _shift_month(year: int, month: int, by: int) -> tuple[int, int]:
    index = year * 12 + (month - 1) + by
    return index // 12, index % 12 + 1


def _count(word: str) -> tuple[int, int]:
    """The range a count word means: ``3`` -> (3, 3), ``a few`` -> (2, 4)."""
    word = word.lower()
    if word.isdigit():
        return int(word), int(word)
    return VAGUE_COUNTS.get(word) or (COUNTS[word], COUNTS[word])


# ---------------------------------------------------------------- writing dates


def format_day(day: date) -> str:
    """A day the way LoCoMo's answers write it: ``7 May 2023``."""
    return f"{day.day} {MONTH_NAMES[day.month - 1]} {day.year}"


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def date_spellings(day: date) -> list[str]:
    """The usual spellings of a day, for answer aliases."""
    month = MONTH_NAMES[day.month - 1]
    return [
        format_day(day),
        f"{month} {day.day}, {day.year}",
        f"{_ordinal(day.day)} {month} {day.year}",
        day.isoformat(),
    ]


def spell(span: DaySpan) -> str | None:
    """A day, calendar month or calendar year written out ("7 May 2023", "May 2023",
    "2023"); None for any other span."""
    first = span.first
    if span.days() == 1:
        return format_day(first)
    if span.same_days(_month_span(first.year, first.month)):
        return f"{MONTH_NAMES[first.month - 1]} {first.year}"
    if span.same_days(_year_span(first.year)):
        return str(first.year)
    return None


# ---------------------------------------------------------------- relative dates


def _before(anchor: date, what: str, count: tuple[int, int] = (1, 1)) -> DaySpan:
    """The span ``what`` (day, week, weekend, month, year or a weekday) before ``anchor``."""
    low, high = count
    if what == "day":
        return DaySpan(anchor - timedelta(days=high), anchor - timedelta(days=low))
    if what == "week":
        return DaySpan(anchor - timedelta(days=7 * high), anchor - timedelta(days=7 * low - 6))
    if what == "weekend":
        saturday = anchor - timedelta(days=(anchor.weekday() - 5) % 7 or 7)
        return DaySpan(saturday, saturday + timedelta(days=1))
    if what in WEEKDAYS:
        return _single(anchor - timedelta(days=(anchor.weekday() - WEEKDAYS[what]) % 7 or 7))
    if what == "month":
        first = _shift_month(anchor.year, anchor.month, -high)
        last = _shift_month(anchor.year, anchor.month, -low)
        return DaySpan(_month_span(*first).first, _month_span(*last).last)
    return DaySpan(date(anchor.year - high, 1, 1), date(anchor.year - low, 12, 31))


def _after(anchor: date, what: str, count: tuple[int, int]) -> DaySpan:
    """The span ``what`` after ``anchor`` ("next week", "tomorrow"); always one of it."""
    if what == "day":
        return _single(anchor + timedelta(days=1))
    if what == "week":
        return DaySpan(anchor + timedelta(days=1), anchor + timedelta(days=13))
    if what == "month":
        return _month_span(*_shift_month(anchor.year, anchor.month, 1))
    return _year_span(anchor.year + 1)


def _this(anchor: date, what: str, count: tuple[int, int]) -> DaySpan:
    """The ``what`` (week, month, year) that holds ``anchor`` ("this month")."""
    if what == "week":
        return DaySpan(anchor - timedelta(days=6), anchor)
    if what == "month":
        return _month_span(anchor.year, anchor.month)
    return _year_span(anchor.year)


Direction = Literal["before", "after", "this"]
_DIRECTIONS: dict[str, Callable[[date, str, tuple[int, int]], DaySpan]] = {
    "before": _before,
    "after": _after,
    "this": _this,
}


@dataclass(frozen=True)
class Offset:
    """A relative date in normal form: ``count`` ``unit``s before or after a day, or the
    ``unit`` that holds it. "Three weeks ago" is 3 weeks before the day it was said."""

    unit: str
    """day, week, weekend, month, year or a weekday name."""
    direction: Direction = "before"
    count: tuple[int, int] = (1, 1)

    def span(self, anchor: date) -> DaySpan:
        return _DIRECTIONS[self.direction](anchor, self.unit, self.count)

    def kind(self) -> str:
        """The unit a shift may replace it by: day, week, weekday, month or year."""
        if self.unit in WEEKDAYS:
            return "weekday"
        return "week" if self.unit == "weekend" else self.unit

    def phrase(self, anchor: date) -> str:
        """The offset counted from ``anchor`` in words: "the week before 7 May 2023",
        "2 weeks before ...", "a few days before ..."."""
        high = self.count[1]
        count = "the" if high == 1 else "a few" if self.count == FEW else str(high)
        plural = "" if high == 1 else "s"
        return f"{count} {self.unit}{plural} {self.direction} {format_day(anchor)}"

    def written(self, anchor: date) -> str:
        """How a memory writes it out: the date it means, where that is a day, month or
        year, else the offset in words."""
        return spell(self.span(anchor)) or self.phrase(anchor)


_COUNTED_BACK = re.compile(
    rf"\b(?:(?P<k>{_COUNT_WORDS})\s+)?(?P<what>day|week|weekend|month|year|{_WEEKDAY_NAMES})s?"
    rf"\s+before\s+(?:the\s+)?$",
    re.I,
)
"""Words that count back from the explicit date after them: ``Offset.phrase``'s "before" form."""


@dataclass(frozen=True)
class RelativeDate:
    """A relative date expression found in a text, and the day it was said on."""

    start: int
    end: int
    offset: Offset
    anchor: date

    def span(self, text: str) -> DaySpan:
        """The days it means, labelled with its words in ``text``."""
        return _labelled(self.offset.span(self.anchor), text[self.start : self.end])

    def written(self) -> str:
        """How a memory writes it out (``Offset.written``)."""
        return self.offset.written(self.anchor)


@dataclass(frozen=True)
class RelativeRule:
    """A relative expression's pattern and the offset a match of it means."""

    pattern: re.Pattern[str]
    offset: Callable[[re.Match[str]], Offset]


def _rule(pattern: str, offset: Callable[[re.Match[str]], Offset]) -> RelativeRule:
    return RelativeRule(re.compile(pattern, re.I), offset)


def _unit(found: re.Match[str]) -> str:
    return found["unit"].lower()


def _counted(found: re.Match[str]) -> Offset:
    """The offset of "<count> <unit>s ago"."""
    return Offset(_unit(found), count=_count(found["n"]))


_SAID_DAYS = (
    _rule(r"\b(?:yesterday|last night)\b", lambda m: Offset("day")),
    _rule(r"\b(?:today|tonight|this (?:morning|afternoon|evening))\b",
          lambda m: Offset("day", count=(0, 0))),
    _rule(r"\btomorrow\b", lambda m: Offset("day", "after")),
    _rule(r"\bnext (?P<unit>week|month|year)\b", lambda m: Offset(_unit(m), "after")),
    _rule(r"\blast (?P<unit>week|weekend|month|year)\b", lambda m: Offset(_unit(m))),
    _rule(rf"\blast {_WEEKDAY}\b", lambda m: Offset(m["weekday"].lower())),
)  # fmt: skip
"""Expressions both rule sets read alike."""

READ: Sequence[RelativeRule] = (
    _rule(r"\bthe day before yesterday\b", lambda m: Offset("day", count=(2, 2))),
    *_SAID_DAYS,
    _rule(r"\bthis (?P<unit>week|month|year)\b", lambda m: Offset(_unit(m), "this")),
    _rule(rf"\b{_COUNT}\s+{_UNIT}\s+(?:ago|back|earlier)\b", _counted),
    _rule(rf"\bfor\s+(?:about\s+|around\s+|over\s+)?{_COUNT}\s+{_UNIT}\b", _counted),
)  # fmt: skip
"""Every relative expression the evidence scorer reads; two may overlap ("the day before
yesterday" holds "yesterday")."""

RESTATED: Sequence[RelativeRule] = (
    *_SAID_DAYS,
    _rule(r"\bthis past weekend\b", lambda m: Offset("weekend")),
    _rule(rf"\b(?P<n>{_EXACT_COUNT}) (?P<unit>day|week|month|year)s? ago\b", _counted),
    _rule(r"\b(?:a few|few|a couple of|couple of) days ago\b", lambda m: Offset("day", count=FEW)),
)  # fmt: skip
"""The relative expressions an XL memory restates; no two can overlap."""


def relative_dates(
    text: str, anchor: date, rules: Sequence[RelativeRule] = READ
) -> list[RelativeDate]:
    """The relative expressions of a text said on ``anchor``, rule by rule: those the
    evidence scorer reads (``READ``), or those an XL memory restates (``RESTATED``)."""
    return [
        RelativeDate(found.start(), found.end(), rule.offset(found), anchor)
        for rule in rules
        for found in rule.pattern.finditer(text)
    ]


def relative_spans(text: str, anchor: date) -> list[DaySpan]:
    """Relative time expressions of a turn said on ``anchor``, as the days they mean."""
    return [r.span(text) for r in relative_dates(text, anchor)]


# ---------------------------------------------------------------- explicit dates

_DATE = re.compile(rf"\b(?:{_FULL_DATE}|{_MONTH_YEAR}|{_YEAR.format('y4')})\b", re.I)
_BETWEEN = re.compile(r"\bbetween\s+(?P<a>.{3,30}?)\s+and\s+(?P<b>.{3,30}?)(?=[.,;)]|$)", re.I)


@dataclass(frozen=True)
class DateMention:
    """A date written out in a text: the days it names, and where it stands."""

    span: DaySpan
    start: int
    end: int


def _named(found: re.Match[str]) -> DaySpan | None:
    """The days a match of ``_DATE`` names; None for a day the calendar lacks."""
    if found["y1"] or found["y2"]:
        n = "1" if found["d1"] else "2"
        day = _day(int(found[f"y{n}"]), MONTHS[found[f"m{n}"].lower()], int(found[f"d{n}"]))
        return _single(day) if day else None
    if found["y3"]:
        return _month_span(int(found["y3"]), MONTHS[found["m3"].lower()])
    return _year_span(int(found["y4"]))


@lru_cache(maxsize=1 << 16)
def date_mentions(text: str) -> tuple[DateMention, ...]:
    """The dates written out in the text (a day, a month or a year), left to right."""
    mentions = []
    for found in _DATE.finditer(text):
        span = _named(found)
        if span is not None:
            mentions.append(DateMention(_labelled(span, found.group(0)), *found.span()))
    return tuple(mentions)


def counted_back(text: str, mention: DateMention) -> Offset | None:
    """The offset the words just before a date count back from it ("the Tuesday before")."""
    lead = _COUNTED_BACK.search(text[max(0, mention.start - 40) : mention.start])
    if lead is None:
        return None
    return Offset(lead["what"].lower(), count=_count(lead["k"]) if lead["k"] else (1, 1))


def session_date(date_time: str | None) -> date | None:
    """The day of a session's ``date_time`` ("1:56 pm on 8 May, 2023"): its first full date."""
    days = (m.span.first for m in date_mentions(date_time or "") if m.span.days() == 1)
    return next(days, None)


def explicit_spans(text: str) -> list[DaySpan]:
    """Dates written out in the text, with "the <unit> before <date>" applied."""
    spans = []
    for mention in date_mentions(text):
        offset = counted_back(text, mention)
        span = offset.span(mention.span.first) if offset else mention.span
        spans.append(_labelled(span, mention.span.text))
    return spans


def date_spans(text: str, anchor: date | None = None) -> list[DaySpan]:
    """Every date the text states: explicit ones, and relative ones when ``anchor`` is known."""
    spans = _betweens(text)
    spans += explicit_spans(_BETWEEN.sub(" ", text) if spans else text)
    if anchor is not None:
        spans += relative_spans(text, anchor)
    return spans


def _betweens(text: str) -> list[DaySpan]:
    """ "between <date> and <date>" as one span (a missing year is taken from the other end)."""
    spans = []
    for found in _BETWEEN.finditer(text):
        a, b = found["a"], found["b"]
        ends_b = explicit_spans(b)
        if not ends_b:
            continue
        ends_a = explicit_spans(a) or explicit_spans(f"{a} {ends_b[0].first.year}")
        if ends_a and ends_a[0].first <= ends_b[-1].last:
            spans.append(DaySpan(ends_a[0].first, ends_b[-1].last, found.group(0)))
    return spans


DATE_WORDS = re.compile(
    rf"{_DATE.pattern}|\b(?:{'|'.join(MONTHS)}|{'|'.join(WEEKDAYS)})\b|\b(?:yesterday|today|tonight|tomorrow)\b"
    r"|\b\d{1,2}(?::\d\d)?\s*(?:am|pm)\b|\b\d{1,2}(?:st|nd|rd|th)\b"
    r"|\b(?:days?|weeks?|weekends?|months?|years?|ago|before|after|last|next|earlier|later)\b",
    re.I,
)
"""Words that only say when (dates, month and day names, clock times, units of time): removed
before comparing an answer's other words, which the date check covers."""


def without_dates(text: str) -> str:
    """The text with its date words blanked out."""
    return DATE_WORDS.sub(" ", text)
