"""Dates in conversation text: explicit ones read, relative ones resolved against the session date,
and what the XL builder writes read back."""

from __future__ import annotations

from datetime import date

import pytest
from cmi_inspect.dates import (
    FEW,
    READ,
    RESTATED,
    DaySpan,
    Offset,
    counted_back,
    date_mentions,
    date_spans,
    date_spellings,
    explicit_spans,
    relative_dates,
    session_date,
    spell,
    without_dates,
)

SUNDAY = date(2023, 5, 7)


def spans(text: str, anchor: date | None = None) -> list[tuple[date, date]]:
    return [(s.first, s.last) for s in date_spans(text, anchor)]


def day(y: int, m: int, d: int) -> tuple[date, date]:
    return date(y, m, d), date(y, m, d)


def test_session_date():
    assert session_date("4:20 pm on 14 October, 2021") == date(2021, 10, 14)
    assert session_date("10:00 am on 3 Sept 2020") == date(2020, 9, 3)
    assert session_date(None) is None and session_date("sometime") is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("on 13 October 2021", [day(2021, 10, 13)]),
        ("on October 13th, 2021", [day(2021, 10, 13)]),
        ("in March, 2020", [(date(2020, 3, 1), date(2020, 3, 31))]),
        ("back in 2019", [(date(2019, 1, 1), date(2019, 12, 31))]),
        ("the week before 10 November 2021", [(date(2021, 11, 3), date(2021, 11, 9))]),
        ("the Tuesday before 11 November 2021", [day(2021, 11, 9)]),
        ("two weeks before 24 November 2021", [(date(2021, 11, 10), date(2021, 11, 16))]),
        ("between 3 May and 9 June 2020", [(date(2020, 5, 3), date(2020, 6, 9))]),
        ("no date here", []),
    ],
)
def test_explicit_dates(text, expected):
    assert spans(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I ran it yesterday", [day(2021, 10, 13)]),
        ("we met today", [day(2021, 10, 14)]),
        ("I did it last week", [(date(2021, 10, 7), date(2021, 10, 13))]),
        ("I bought it last month", [(date(2021, 9, 1), date(2021, 9, 30))]),
        ("I painted it last year", [(date(2020, 1, 1), date(2020, 12, 31))]),
        ("three years ago", [(date(2018, 1, 1), date(2018, 12, 31))]),
        ("I have had them for 2 years", [(date(2019, 1, 1), date(2019, 12, 31))]),
        ("last Saturday", [day(2021, 10, 9)]),
        ("next month", [(date(2021, 11, 1), date(2021, 11, 30))]),
        ("a few years ago", [(date(2017, 1, 1), date(2019, 12, 31))]),
    ],
)
def test_relative_dates_resolve_against_the_session(text, expected):
    assert spans(text, date(2021, 10, 14)) == expected  # a Thursday


def test_relative_dates_need_an_anchor():
    assert spans("I ran it yesterday") == []


def test_agreement_rewards_the_same_span_and_not_a_vaguer_one():
    oct13 = DaySpan(date(2021, 10, 13), date(2021, 10, 13))
    oct14 = DaySpan(date(2021, 10, 14), date(2021, 10, 14))
    october = DaySpan(date(2021, 10, 1), date(2021, 10, 31))
    assert oct13.agreement(oct13) == 1.0
    assert oct13.agreement(oct14) == 0.0
    assert oct13.agreement(october) == pytest.approx(1 / 31)
    assert october.agreement(oct13) == pytest.approx(1 / 31)


def test_without_dates_leaves_the_other_words():
    text = "Ines ran in Porto on 13 October 2021 at 9:30 am, the week before"
    assert without_dates(text).split() == ["Ines", "ran", "in", "Porto", "on", "at", ",", "the"]


def test_mentions_keep_their_place_and_granularity():
    text = "Met on 7 May 2023, moved in June 2023, left in 2024."
    found = [(text[m.start : m.end], m.span.days()) for m in date_mentions(text)]
    assert found == [("7 May 2023", 1), ("June 2023", 30), ("2024", 366)]
    assert date_mentions("on 31 June 2023") == ()  # no such day


def test_covers_is_containment():
    may, may7 = DaySpan(date(2023, 5, 1), date(2023, 5, 31)), DaySpan(SUNDAY, SUNDAY)
    assert may.covers(may7) and may.covers(may) and not may7.covers(may)


def test_counted_back_reads_the_words_before_a_date():
    text = "the Tuesday before 11 November 2021"
    [mention] = date_mentions(text)
    assert counted_back(text, mention) == Offset("tuesday")
    [plain] = date_mentions("on 11 November 2021")
    assert counted_back("on 11 November 2021", plain) is None


@pytest.mark.parametrize(
    "offset",
    [
        Offset("day", count=(3, 3)),
        Offset("day", count=FEW),
        Offset("week"),
        Offset("week", count=(2, 2)),
        Offset("weekend"),
        Offset("friday"),
        Offset("month", count=(2, 2)),
        Offset("year"),
    ],
)
def test_what_a_memory_writes_reads_back_as_the_same_days(offset):
    written = offset.written(SUNDAY)
    [read] = explicit_spans(written)
    assert read.same_days(offset.span(SUNDAY)), written


def test_written_forms():
    assert Offset("week").written(SUNDAY) == "the week before 7 May 2023"
    assert Offset("week", count=(2, 2)).written(SUNDAY) == "2 weeks before 7 May 2023"
    assert Offset("day", count=FEW).written(SUNDAY) == "a few days before 7 May 2023"
    assert Offset("weekend").written(SUNDAY) == "the weekend before 7 May 2023"
    assert Offset("week", "after").written(SUNDAY) == "the week after 7 May 2023"
    assert Offset("month").written(SUNDAY) == "April 2023"
    assert Offset("year", count=(3, 3)).written(SUNDAY) == "2020"
    assert Offset("day").written(SUNDAY) == "6 May 2023"
    assert spell(DaySpan(date(2023, 5, 1), date(2023, 5, 30))) is None
    assert date_spellings(date(2023, 5, 1)) == ["1 May 2023", "May 1, 2023", "1st May 2023", "2023-05-01"]


def test_restated_phrases_are_the_builder_vocabulary():
    text = "Yesterday I ran, two weeks ago I swam, this week I rest, for 2 years I cycled."
    found = sorted(relative_dates(text, SUNDAY, RESTATED), key=lambda r: r.start)
    assert [(text[r.start : r.end], r.offset.kind(), r.written()) for r in found] == [
        ("Yesterday", "day", "6 May 2023"),
        ("two weeks ago", "week", "2 weeks before 7 May 2023"),
    ]
    assert len(relative_dates(text, SUNDAY, READ)) == 4  # the scorer also reads "this week", "for 2 years"


def test_the_scorer_reads_overlapping_expressions():
    found = [(r.start, r.end) for r in relative_dates("the day before yesterday", SUNDAY)]
    assert found == [(0, 24), (15, 24)]


def test_restated_phrases_never_overlap():
    text = (
        "This past weekend and last weekend, a few days ago, a day ago, last night, "
        "next week, last Monday, 3 months ago, last year, tonight, this morning, tomorrow"
    )
    found = sorted(relative_dates(text, SUNDAY, RESTATED), key=lambda r: r.start)
    assert len(found) == 12
    assert all(a.end <= b.start for a, b in zip(found, found[1:], strict=False))
