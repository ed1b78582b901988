"""Dates in conversation text, as spans of days, with relative expressions resolved.

The label-free CMI checks an answer's date against what the agent's own
history says. A turn's "yesterday" or "last week" means nothing without the
date of the session it was said in, so relative expressions are resolved
here, deterministically, against that date; explicit dates ("7 May 2023",
"May 2023", "the week before 9 June 2023", "2019") are read as they are.
Every date becomes a ``DaySpan`` (first and last day it may mean), so that
"January 2023" and "19 January 2023" can be compared by overlap.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, timedelta

MONTHS: dict[str, int] = {}
for _number, _name in enumerate(calendar.month_name):
    if _name:
        MONTHS[_name.lower()] = _number
        MONTHS[_name[:3].lower()] = _number
MONTHS["sept"] = 9
WEEKDAYS = {name.lower(): i for i, name in enumerate(calendar.day_name)}
NUMBER_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "a couple of": 2, "couple of": 2,
}  # fmt: skip
FEW = ("a few", "few", "several")
"""Vague counts, read as two to four."""

_MONTH = r"(?P<{}>" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<{}>\d{{1,2}})(?:st|nd|rd|th)?"
_YEAR = r"(?P<{}>(?:19|20)\d\d)"
_FULL_DATE = (
    rf"(?:{_DAY.format('d1')}\s*(?:of\s+)?{_MONTH.format('m1')},?\s*{_YEAR.format('y1')}"
    rf"|{_MONTH.format('m2')}\s+{_DAY.format('d2')},?\s*{_YEAR.format('y2')})"
)
_MONTH_YEAR = rf"{_MONTH.format('m3')},?\s+{_YEAR.format('y3')}"
_COUNT_WORDS = r"\d+|" + "|".join(sorted([*NUMBER_WORDS, *FEW], key=len, reverse=True))
_COUNT = rf"(?P<n>{_COUNT_WORDS})"
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


def _month_span(year: int, month: int, text: str = "") -> DaySpan:
    last = calendar.monthrange(year, month)[1]
    return DaySpan(date(year, month, 1), date(year, month, last), text)


def _year_span(year: int, text: str = "") -> DaySpan:
    return DaySpan(date(year, 1, 1), date(year, 12, 31), text)


def _shift_month(year: int, month: int, by: int) -> tuple[int, int]:
    index = year * 12 + (month - 1) + by
    return index // 12, index % 12 + 1


def _count(word: str) -> tuple[int, int]:
    """The range a count word means: ``3`` -> (3, 3), ``a few`` -> (2, 4)."""
    word = word.lower()
    if word.isdigit():
        return int(word), int(word)
    if word in FEW:
        return 2, 4
    return NUMBER_WORDS[word], NUMBER_WORDS[word]


SESSION_DATE = re.compile(
    rf"{_DAY.format('d')}\s+{_MONTH.format('m')},?\s*{_YEAR.format('y')}", re.I
)


def session_date(date_time: str | None) -> date | None:
    """The day of a session's ``date_time`` ("1:56 pm on 8 May, 2023")."""
    found = SESSION_DATE.search(date_time or "")
    if not found:
        return None
    return _day(int(found["y"]), MONTHS[found["m"].lower()], int(found["d"]))


def _full_date(found: re.Match[str]) -> date | None:
    if found["d1"]:
        return _day(int(found["y1"]), MONTHS[found["m1"].lower()], int(found["d1"]))
    return _day(int(found["y2"]), MONTHS[found["m2"].lower()], int(found["d2"]))


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


def _after(anchor: date, what: str) -> DaySpan:
    """The span ``what`` after ``anchor`` ("next week", "tomorrow")."""
    if what == "day":
        return _single(anchor + timedelta(days=1))
    if what == "week":
        return DaySpan(anchor + timedelta(days=1), anchor + timedelta(days=13))
    if what == "month":
        return _month_span(*_shift_month(anchor.year, anchor.month, 1))
    return _year_span(anchor.year + 1)


def _single(day: date) -> DaySpan:
    return DaySpan(day, day)


def _labelled(span: DaySpan, text: str) -> DaySpan:
    return DaySpan(span.first, span.last, text)


_ANCHORED = re.compile(
    rf"\b(?:(?P<k>{_COUNT_WORDS})\s+)?(?P<what>day|week|weekend|month|year|{_WEEKDAY_NAMES})s?"
    rf"\s+before\s+(?:the\s+)?$",
    re.I,
)
"""A span counted back from the explicit date that follows it: "the week before"."""
_DATE = re.compile(rf"\b(?:{_FULL_DATE}|{_MONTH_YEAR}|{_YEAR.format('y4')})\b", re.I)
_BETWEEN = re.compile(r"\bbetween\s+(?P<a>.{3,30}?)\s+and\s+(?P<b>.{3,30}?)(?=[.,;)]|$)", re.I)


def explicit_spans(text: str) -> list[DaySpan]:
    """Dates written out in the text, with "the <unit> before <date>" applied."""
    spans: list[DaySpan] = []
    for found in _DATE.finditer(text):
        span = _explicit(found, text)
        if span is not None:
            spans.append(span)
    return spans


def _explicit(found: re.Match[str], text: str) -> DaySpan | None:
    if found["y1"] or found["y2"]:
        day = _full_date(found)
        if day is None:
            return None
        span = _single(day)
    elif found["y3"]:
        span = _month_span(int(found["y3"]), MONTHS[found["m3"].lower()])
    else:
        span = _year_span(int(found["y4"]))
    lead = _ANCHORED.search(text[max(0, found.start() - 40) : found.start()])
    if lead:
        count = _count(lead["k"]) if lead["k"] else (1, 1)
        span = _before(span.first, lead["what"].lower(), count)
    return _labelled(span, found.group(0))


_RELATIVE: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"\bthe day before yesterday\b", re.I), "day:2"),
    (re.compile(r"\b(?:yesterday|last night)\b", re.I), "day:1"),
    (re.compile(r"\b(?:today|tonight|this (?:morning|afternoon|evening))\b", re.I), "day:0"),
    (re.compile(r"\btomorrow\b", re.I), "next:day"),
    (re.compile(r"\bnext (?P<what>week|month|year)\b", re.I), "next"),
    (re.compile(r"\blast (?P<what>week|weekend|month|year)\b", re.I), "last"),
    (re.compile(rf"\blast {_WEEKDAY}\b", re.I), "last_weekday"),
    (re.compile(r"\bthis (?P<what>week|month|year)\b", re.I), "this"),
    (re.compile(rf"\b{_COUNT}\s+{_UNIT}\s+(?:ago|back|earlier)\b", re.I), "ago"),
    (re.compile(rf"\bfor\s+(?:about\s+|around\s+|over\s+)?{_COUNT}\s+{_UNIT}\b", re.I), "ago"),
]
"""Relative time expressions and how each is resolved against the session date."""


def relative_spans(text: str, anchor: date) -> list[DaySpan]:
    """Relative time expressions of a turn said on ``anchor``, as the days they mean."""
    spans: list[DaySpan] = []
    for pattern, rule in _RELATIVE:
        for found in pattern.finditer(text):
            span = _resolve(rule, found, anchor)
            spans.append(_labelled(span, found.group(0)))
    return spans


def _resolve(rule: str, found: re.Match[str], anchor: date) -> DaySpan:
    if rule.startswith("day:"):
        return _before(anchor, "day", (int(rule[4:]),) * 2) if rule != "day:0" else _single(anchor)
    if rule == "next:day":
        return _after(anchor, "day")
    if rule == "next":
        return _after(anchor, found["what"].lower())
    if rule == "last":
        return _before(anchor, found["what"].lower())
    if rule == "last_weekday":
        return _before(anchor, found["weekday"].lower())
    if rule == "this":
        what = found["what"].lower()
        if what == "week":
            return DaySpan(anchor - timedelta(days=6), anchor)
        if what == "month":
            return _month_span(anchor.year, anchor.month)
        return _year_span(anchor.year)
    return _before(anchor, found["unit"].lower(), _count(found["n"]))


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
