"""v4's false values: of the slot value's semantic type, in its shape (capitals, article,
number, written form), never one to avoid; and false days outside the gold answer's
period. On the real LoCoMo, how many slot values have a type and a false value of it."""

from __future__ import annotations

import datetime as dt
import random
import re

import pytest
from cmi_inspect.xl.locomo import ExampleContext, example_contexts, load_locomo
from cmi_inspect.xl.v4.values import (
    LEXICON,
    TYPES,
    ValuePool,
    false_day,
    false_value,
    fits,
    value_type,
)

POOL = ValuePool.from_conversations([])
"""The lexicon alone: what every false value below is drawn from."""


def _draws(question: str, answer: str, value: str, n: int = 30, **kw) -> set[str | None]:
    """The false values drawn with seeds 0..n-1."""
    return {false_value(POOL, question, answer, value, random.Random(i), **kw) for i in range(n)}


def _lexicon(*kinds: str) -> set[str]:
    return {v.lower() for kind in kinds for v in LEXICON[kind]}


@pytest.mark.parametrize(
    ("question", "answer", "value", "kind"),
    [
        ("Where did Caroline move from 4 years ago?", "Sweden", "Sweden", "country"),
        ("Where has Melanie camped?", "beach, mountains, forest", "beach", "outdoors"),
        ("What is the name of Audrey's childhood dog?", "Max", "Max", "pet_name"),
        ("What activity did Maria take up with her friends?", "hiking", "hiking", "activity"),
        ("How many turtles does Nate have?", "Three", "three", "count"),
        ("How long has John been surfing?", "five years", "five years", "duration"),
        ("Who did John go to yoga with?", "Rob", "Rob", "person"),
        ("What book is Jon currently reading?", "The Lean Startup", "The Lean Startup",
         "book_or_title"),
        ("What natural disaster affected John's old area on 7 July, 2023?", "Flood", "flood",
         "disaster"),
        ("How often does John work out with his family?", "Three times a week",
         "Three times a week", "frequency"),
        ("What did Jon say about Gina's progress with her store?", "hard work's paying off",
         "hard work's paying off", "other"),
        ("Why did Maria join a nearby church?", "to feel closer to a community",
         "to feel closer to a community", "other"),
    ],
)  # fmt: skip
def test_a_value_is_typed_by_its_question_and_its_form(question, answer, value, kind):
    assert value_type(question, answer, value) == kind


def test_a_place_question_gets_a_place():
    named = _draws("Where did Caroline move from 4 years ago?", "Sweden", "Sweden")
    assert None not in named and len(named) > 3
    assert all(v in LEXICON["country"] and v != "Sweden" for v in named)
    common = _draws("Where has Melanie camped?", "beach, mountains, forest", "beach")
    assert all(v and v.islower() and v in _lexicon("outdoors") - {"mountains", "forest"} for v in common)


def test_a_pet_question_gets_a_pet_name():
    names = _draws("What is the name of Audrey's childhood dog?", "Max", "Max")
    assert None not in names and all(v in LEXICON["pet_name"] for v in names)


def test_an_activity_gets_an_activity_of_the_same_form():
    gerunds = _draws("What activity did Maria take up with her friends?", "hiking", "hiking")
    assert all(v and v in _lexicon("activity") and v.split()[0].endswith("ing") for v in gerunds)
    nouns = _draws("What activity helped Evan with stress and flexibility?", "Yoga", "Yoga")
    assert all(v and v[0].isupper() and v.lower() in _lexicon("activity") for v in nouns)


def test_a_count_keeps_its_written_form_and_changes_its_number():
    words = _draws("How many turtles does Nate have?", "Three", "three")
    assert None not in words and "three" not in words
    assert all(v in {"two", "four", "five", "six"} for v in words)
    digits = _draws("How many dogs does Audrey have?", "4", "4")
    assert all(v and v.isdigit() and v != "4" for v in digits)
    spans = _draws("How long does Audrey walk her dogs?", "about an hour", "about an hour")
    assert all(v and re.fullmatch(r"about (?:two|three|four) hours", v) for v in spans)


def test_a_value_keeps_its_shape():
    assert all(
        v and v.split()[0] == ("an" if v.split()[1][0] in "aeiou" else "a")
        for v in _draws("What pet does Caroline have?", "guinea pig", "a guinea pig")
    )  # its article, fixed for the new word
    plural = _draws("What pets does Melanie have?", "Two cats and a dog", "cats")
    assert all(v and v.endswith("s") and "dog" not in v for v in plural)
    titles = _draws("What book is Jon currently reading?", "The Lean Startup", '"The Lean Startup"')
    assert all(v and v.startswith('"') and v.endswith('"') for v in titles)


def test_the_nonsense_of_v3_is_gone():
    """v3 said an area was hit by "a nasty pizza": a disaster now gets a disaster."""
    drawn = _draws("What natural disaster affected John's old area?", "Flood", "flood")
    assert None not in drawn and drawn <= _lexicon("disaster") - {"flood"}


def test_drawing_is_deterministic_and_avoids_what_it_is_told_to():
    question, answer = "What is the name of Audrey's childhood dog?", "Max"
    first = [false_value(POOL, question, answer, "Max", random.Random(7)) for _ in range(3)]
    assert len(set(first)) == 1
    kept = "Biscuit"
    avoid = [n.upper() for n in LEXICON["pet_name"] if n != kept]  # compared case-insensitively
    assert _draws(question, answer, "Max", avoid=avoid) == {kept}
    assert _draws(question, answer, "Max", avoid=[*avoid, "biscuit"]) == {None}


def test_no_false_value_for_a_clause():
    assert _draws("What did Jon say about Gina's progress?", "hard work's paying off",
                  "hard work's paying off") == {None}  # fmt: skip


def test_a_sentence_it_must_fit():
    assert fits("I adopted a guinea pig last week.", "guinea pig", "hamster")
    assert not fits("I adopted a guinea pig last week.", "guinea pig", "iguana")  # "a iguana"
    assert not fits("I adopted a guinea pig last week.", "guinea pig", "kittens")  # "a kittens"
    assert not fits("I adopted a guinea pig last week.", "guinea pig", "a hamster")  # "a a"
    assert not fits("We went to the lake by the lake house.", "lake", "river by")
    assert not fits("I snapped it on my trip to the Smoky Mountains.", "Smoky Mountains", "Denver")
    question, value = "What activity did Melanie do with her kids?", "painting"
    sentence = "Wow, that's an awesome painting!"  # a painting, not the activity
    assert false_value(POOL, question, value, value, random.Random(0), sentence=sentence) is None


def _outside(day: dt.date, first: dt.date, last: dt.date) -> bool:
    """At least 14 days before ``first`` or after ``last``."""
    return day <= first - dt.timedelta(14) or day >= last + dt.timedelta(14)


def test_a_false_day_is_outside_a_relative_answer():
    answer, true = "The weekend before 13 September 2023", dt.date(2023, 9, 9)
    days = {false_day(answer, true, random.Random(i)) for i in range(300)}
    assert not days & {dt.date(2023, 9, 9), dt.date(2023, 9, 10)}
    assert all(_outside(d, dt.date(2023, 9, 9), dt.date(2023, 9, 10)) for d in days)
    assert all(abs((d - true).days) <= 120 for d in days) and len(days) > 50


def test_a_false_day_is_outside_a_month_or_a_year():
    may = {false_day("May 2023", dt.date(2023, 5, 7), random.Random(i)) for i in range(300)}
    assert all(_outside(d, dt.date(2023, 5, 1), dt.date(2023, 5, 31)) for d in may)
    year = {false_day("2022", dt.date(2022, 6, 1), random.Random(i)) for i in range(300)}
    assert all(_outside(d, dt.date(2022, 1, 1), dt.date(2022, 12, 31)) for d in year)
    assert all(dt.date(2021, 8, 1) <= d <= dt.date(2023, 6, 1) for d in year)  # near it


def test_a_false_day_for_an_unread_answer_is_a_week_away_at_least():
    true = dt.date(2023, 5, 28)
    days = {false_day("last week of May", true, random.Random(i)) for i in range(300)}
    assert all(abs((d - true).days) >= 21 for d in days)
    assert false_day("May 2023", true, random.Random(3)) == false_day("May 2023", true, random.Random(3))


def test_most_real_values_have_a_type_and_a_false_value_of_it(locomo_file):
    """Every answerable LoCoMo question whose answer an evidence turn says word for word:
    at least 60% have a type, and at least 80% of those a false value of that type."""
    convs = load_locomo(locomo_file)
    pool = ValuePool.from_conversations(convs)
    typed = faked = total = 0
    for conv in convs:
        avoid = sorted({str(item.get("answer", "")) for item in conv.qa} - {""})
        for example_id, ctx, _ in example_contexts(conv):
            value = _stated(ctx) if ctx else None
            if ctx is None or value is None:
                continue
            total += 1
            kind = value_type(ctx.question, ctx.answer, value)
            assert kind in TYPES
            if kind == "other":
                continue
            typed += 1
            rng = random.Random(example_id)
            fake = false_value(pool, ctx.question, ctx.answer, value, rng, avoid)
            faked += fake is not None and _family(value_type(ctx.question, ctx.answer, fake)) == _family(kind)
    assert total > 400
    assert typed / total >= 0.60, f"{typed}/{total} typed"
    assert faked / typed >= 0.80, f"{faked}/{typed} with a false value of their type"


def _stated(ctx: ExampleContext) -> str | None:
    """The answer as the first evidence turn that says it word for word writes it."""
    said = ctx.answer.strip(" .")
    pattern = re.compile(rf"(?<!\w){re.escape(said)}(?!\w)", re.IGNORECASE)
    found = (pattern.search(t.text) for t in ctx.evidence if len(said) > 1)
    return next((m[0] for m in found if m), None)


def _family(kind: str) -> str:
    """A place's narrower types count as a place."""
    return "place" if kind in ("city", "country", "outdoors") else kind


def test_what_a_person_is_called_is_no_name_to_offer(locomo_file):
    """LoCoMo's answers join the pool as names only when they are names: "Dad" is not
    ("someone named Dad"), while "her mom" stays a person to go somewhere with."""
    pool = ValuePool.from_conversations(load_locomo(locomo_file))
    names = {p.lower() for p in pool.of("person") if p[:1].isupper()}
    assert names and not names & {"dad", "mom", "mother", "father", "sister", "brother"}
    assert "mom" in pool.of("person")
