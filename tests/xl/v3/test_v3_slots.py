"""Slots: the value an evidence turn states, what a copy of it means elsewhere, the edits
that make every slot of a turn false."""

from __future__ import annotations

import random

from cmi_inspect.xl.v3.slots import Slot, false_turn, find_slot, meaning, states_answer, value_swap


def _slot(ctx) -> Slot:
    slot = find_slot(ctx)
    assert slot is not None
    return slot


def test_a_slot_is_the_value_as_its_turn_writes_it(mini3_contexts):
    biscuit = _slot(mini3_contexts["mini-1_qa_0002"])
    assert biscuit == Slot(biscuit.turn, "Biscuit", False) and biscuit.turn.dia_id == "D1:7"
    bowl = _slot(mini3_contexts["mini-1_qa_0000"])  # "Yesterday I made my first bowl"
    assert (bowl.value, bowl.dated) == ("Yesterday", True)
    friday = _slot(mini3_contexts["mini-2_qa_0007"])  # "The Friday before 27 February 2022"
    assert friday.value.lower() == "last friday"  # its day by its alias, not the session's
    assert find_slot(mini3_contexts["mini-1_qa_0010"]) is None  # "Tomas's sister": no one turn


def test_a_dated_value_means_another_day_when_said_on_another(mini3_contexts):
    ctx = mini3_contexts["mini-1_qa_0000"]
    slot = _slot(ctx)
    assert meaning(slot, slot.turn.text, ctx.session(1)) == "3 March 2023"
    later = meaning(slot, slot.turn.text, ctx.session(2))
    assert later != "3 March 2023" and not states_answer(later, ctx.answer, True)
    assert meaning(slot, "I made a bowl.", ctx.session(1)) is None


def test_a_date_reads_as_an_answer_by_alias_or_within_it():
    assert states_answer("25 February 2022", "The Friday before 27 February 2022", True)
    assert not states_answer("27 February 2022", "The Friday before 27 February 2022", True)
    assert states_answer("7 May 2023", "May 2023", True)
    assert states_answer("the week before 4 March 2023", "The week before 4 March 2023", True)
    assert not states_answer("the week before 11 March 2023", "The week before 4 March 2023", True)
    assert states_answer("Porto", "Porto", False) and not states_answer(None, "Porto", False)


def test_a_false_turn_makes_every_slot_it_states_false(mini3_contexts):
    name, week = mini3_contexts["mini-1_qa_0002"], mini3_contexts["mini-1_qa_0003"]  # both D1:7
    asked = [(name, _slot(name)), (week, _slot(week))]
    edit = false_turn(asked, name.session(1), random.Random(0))  # the same day: a new phrase
    assert edit is not None and "Biscuit" not in edit.text and "last week" not in edit.text
    for ctx, slot in asked:
        made = edit.edits[slot.key]
        assert made.value in edit.text and not states_answer(made.means, ctx.answer, slot.dated)
    assert {e.edit for e in edit.edits.values()} <= {"value_swap", "entity_swap", "temporal_shift"}


def test_a_value_swap_takes_another_answer_of_its_kind(mini3_contexts):
    ctx = mini3_contexts["mini-2_qa_0010"]  # "two bakers": a number, of two words
    slot = _slot(ctx)
    swaps = {e.value for i in range(20) if (e := value_swap(ctx, slot, slot.turn.text, random.Random(i)))}
    assert swaps == {"three songs"}  # not "Salerno", "Pepper", "an accordion", ...
