"""Relative dates ("yesterday", "three weeks ago", "last Tuesday") resolved against the day
they were said on, by named rule sets: ``READ`` (the evidence scorer's) and ``RESTATED``
(what an XL memory writes out).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Literal

from cmi_inspect.dates.spans import (
    COUNT_RE,
    COUNT_WORDS_RE,
    EXACT_COUNT_RE,
    FEW,
    UNIT_RE,
    WEEKDAY_NAMES_RE,
    WEEKDAY_RE,
    WEEKDAYS,
    DaySpan,
    count_range,
    format_day,
    labelled,
    month_span,
    shift_month,
    single_day,
    spell,
    year_span,
)


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
        return single_day(anchor - timedelta(days=(anchor.weekday() - WEEKDAYS[what]) % 7 or 7))
    if what == "month":
        first = shift_month(anchor.year, anchor.month, -high)
        last = shift_month(anchor.year, anchor.month, -low)
        return DaySpan(month_span(*first).first, month_span(*last).last)
    return DaySpan(date(anchor.year - high, 1, 1), date(anchor.year - low, 12, 31))


def _after(anchor: date, what: str, count: tuple[int, int]) -> DaySpan:
    """The span ``what`` after ``anchor`` ("next week", "tomorrow"); always one of it."""
    if what == "day":
        return single_day(anchor + timedelta(days=1))
    if what == "week":
        return DaySpan(anchor + timedelta(days=1), anchor + timedelta(days=13))
    if what == "month":
        return month_span(*shift_month(anchor.year, anchor.month, 1))
    return year_span(anchor.year + 1)


def _this(anchor: date, what: str, count: tuple[int, int]) -> DaySpan:
    """The ``what`` (week, month, year) that holds ``anchor`` ("this month")."""
    if what == "week":
        return DaySpan(anchor - timedelta(days=6), anchor)
    if what == "month":
        return month_span(anchor.year, anchor.month)
    return year_span(anchor.year)


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


COUNTED_BACK = re.compile(
    rf"\b(?:(?P<k>{COUNT_WORDS_RE})\s+)?(?P<what>day|week|weekend|month|year|{WEEKDAY_NAMES_RE})s?"
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
        return labelled(self.offset.span(self.anchor), text[self.start : self.end])

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
    return Offset(_unit(found), count=count_range(found["n"]))


_SAID_DAYS = (
    _rule(r"\b(?:yesterday|last night)\b", lambda m: Offset("day")),
    _rule(r"\b(?:today|tonight|this (?:morning|afternoon|evening))\b",
          lambda m: Offset("day", count=(0, 0))),
    _rule(r"\btomorrow\b", lambda m: Offset("day", "after")),
    _rule(r"\bnext (?P<unit>week|month|year)\b", lambda m: Offset(_unit(m), "after")),
    _rule(r"\blast (?P<unit>week|weekend|month|year)\b", lambda m: Offset(_unit(m))),
    _rule(rf"\blast {WEEKDAY_RE}\b", lambda m: Offset(m["weekday"].lower())),
)  # fmt: skip
"""Expressions both rule sets read alike."""

READ: Sequence[RelativeRule] = (
    _rule(r"\bthe day before yesterday\b", lambda m: Offset("day", count=(2, 2))),
    *_SAID_DAYS,
    _rule(r"\bthis (?P<unit>week|month|year)\b", lambda m: Offset(_unit(m), "this")),
    _rule(rf"\b{COUNT_RE}\s+{UNIT_RE}\s+(?:ago|back|earlier)\b", _counted),
    _rule(rf"\bfor\s+(?:about\s+|around\s+|over\s+)?{COUNT_RE}\s+{UNIT_RE}\b", _counted),
)  # fmt: skip
"""Every relative expression the evidence scorer reads; two may overlap ("the day before
yesterday" holds "yesterday")."""

RESTATED: Sequence[RelativeRule] = (
    *_SAID_DAYS,
    _rule(r"\bthis past weekend\b", lambda m: Offset("weekend")),
    _rule(rf"\b(?P<n>{EXACT_COUNT_RE}) (?P<unit>day|week|month|year)s? ago\b", _counted),
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
