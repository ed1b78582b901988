"""Days as spans: the calendar's words, ``DaySpan``, and days written out as they are read.

A date expression may mean one day, a month, a year or a run of days, so every date is a
``DaySpan`` (its first and last day): "January 2023" and "19 January 2023" compare by
overlap. ``spell`` and ``format_day`` write the forms ``explicit`` reads back.
"""

from __future__ import annotations

import calendar
from dataclasses import dataclass
from datetime import date

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

MONTH_RE = r"(?P<{}>" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
DAY_RE = r"(?P<{}>\d{{1,2}})(?:st|nd|rd|th)?"
YEAR_RE = r"(?P<{}>(?:19|20)\d\d)"
FULL_DATE_RE = (
    rf"(?:{DAY_RE.format('d1')}\s*(?:of\s+)?{MONTH_RE.format('m1')},?\s*{YEAR_RE.format('y1')}"
    rf"|{MONTH_RE.format('m2')}\s+{DAY_RE.format('d2')},?\s*{YEAR_RE.format('y2')})"
)
MONTH_YEAR_RE = rf"{MONTH_RE.format('m3')},?\s+{YEAR_RE.format('y3')}"
COUNT_WORDS_RE = r"\d+|" + "|".join(sorted([*COUNTS, *VAGUE_COUNTS], key=len, reverse=True))
COUNT_RE = rf"(?P<n>{COUNT_WORDS_RE})"
EXACT_COUNT_RE = "|".join(COUNTS) + r"|\d{1,2}"
"""The counts a restated "<count> <unit>s ago" may have: exact ones, up to two digits."""
UNIT_RE = r"(?P<unit>day|week|month|year)s?"
WEEKDAY_NAMES_RE = "|".join(WEEKDAYS)
WEEKDAY_RE = rf"(?P<weekday>{WEEKDAY_NAMES_RE})"


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


def calendar_day(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def single_day(day: date) -> DaySpan:
    return DaySpan(day, day)


def month_span(year: int, month: int, text: str = "") -> DaySpan:
    last = calendar.monthrange(year, month)[1]
    return DaySpan(date(year, month, 1), date(year, month, last), text)


def year_span(year: int, text: str = "") -> DaySpan:
    return DaySpan(date(year, 1, 1), date(year, 12, 31), text)


def labelled(span: DaySpan, text: str) -> DaySpan:
    return DaySpan(span.first, span.last, text)


def shift_month(year: int, month: int, by: int) -> tuple[int, int]:
    index = year * 12 + (month - 1) + by
    return index // 12, index % 12 + 1


def count_range(word: str) -> tuple[int, int]:
    """The range a count word means: ``3`` -> (3, 3), ``a few`` -> (2, 4)."""
    word = word.lower()
    if word.isdigit():
        return int(word), int(word)
    return VAGUE_COUNTS.get(word) or (COUNTS[word], COUNTS[word])


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
    if span.same_days(month_span(first.year, first.month)):
        return f"{MONTH_NAMES[first.month - 1]} {first.year}"
    if span.same_days(year_span(first.year)):
        return str(first.year)
    return None
