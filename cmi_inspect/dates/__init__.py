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

The parts: ``spans`` (the calendar's words, ``DaySpan``, days written out), ``relative``
(relative expressions by rule set) and ``explicit`` (dates written out, and every date a
text states); this module is their one public face.
"""

from cmi_inspect.dates.explicit import (
    DATE_WORDS,
    DateMention,
    counted_back,
    date_mentions,
    date_spans,
    explicit_spans,
    session_date,
    without_dates,
)
from cmi_inspect.dates.relative import (
    READ,
    RESTATED,
    Offset,
    RelativeDate,
    RelativeRule,
    relative_dates,
    relative_spans,
)
from cmi_inspect.dates.spans import (
    COUNTS,
    FEW,
    MONTH_NAMES,
    MONTHS,
    VAGUE_COUNTS,
    WEEKDAYS,
    DaySpan,
    date_spellings,
    format_day,
    spell,
)

__all__ = [
    "COUNTS",
    "DATE_WORDS",
    "FEW",
    "MONTHS",
    "MONTH_NAMES",
    "READ",
    "RESTATED",
    "VAGUE_COUNTS",
    "WEEKDAYS",
    "DateMention",
    "DaySpan",
    "Offset",
    "RelativeDate",
    "RelativeRule",
    "counted_back",
    "date_mentions",
    "date_spans",
    "date_spellings",
    "explicit_spans",
    "format_day",
    "relative_dates",
    "relative_spans",
    "session_date",
    "spell",
    "without_dates",
]
