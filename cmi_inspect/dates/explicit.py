"""Dates written out in text ("7 May 2023", "May 2023", "2019", "between ... and ...", "the
week before 9 June 2023"), every date a text states, and the text without its date words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from functools import lru_cache

from cmi_inspect.dates.relative import COUNTED_BACK, Offset, relative_spans
from cmi_inspect.dates.spans import (
    FULL_DATE_RE,
    MONTH_YEAR_RE,
    MONTHS,
    WEEKDAYS,
    YEAR_RE,
    DaySpan,
    calendar_day,
    count_range,
    labelled,
    month_span,
    single_day,
    year_span,
)

_DATE = re.compile(rf"\b(?:{FULL_DATE_RE}|{MONTH_YEAR_RE}|{YEAR_RE.format('y4')})\b", re.I)
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
        day = calendar_day(int(found[f"y{n}"]), MONTHS[found[f"m{n}"].lower()], int(found[f"d{n}"]))
        return single_day(day) if day else None
    if found["y3"]:
        return month_span(int(found["y3"]), MONTHS[found["m3"].lower()])
    return year_span(int(found["y4"]))


@lru_cache(maxsize=1 << 16)
def date_mentions(text: str) -> tuple[DateMention, ...]:
    """The dates written out in the text (a day, a month or a year), left to right."""
    mentions = []
    for found in _DATE.finditer(text):
        span = _named(found)
        if span is not None:
            mentions.append(DateMention(labelled(span, found.group(0)), *found.span()))
    return tuple(mentions)


def counted_back(text: str, mention: DateMention) -> Offset | None:
    """The offset the words just before a date count back from it ("the Tuesday before")."""
    lead = COUNTED_BACK.search(text[max(0, mention.start - 40) : mention.start])
    if lead is None:
        return None
    return Offset(lead["what"].lower(), count=count_range(lead["k"]) if lead["k"] else (1, 1))


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
        spans.append(labelled(span, mention.span.text))
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
