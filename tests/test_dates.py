"""Dates in conversation text: explicit ones read, relative ones resolved against the session date."""

from __future__ import annotations

from datetime import date

import pytest
from cmi_inspect.dates import DaySpan, date_spans, session_date, without_dates


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
