"""The turns poison adds for an evidence turn: their channels, values and windows."""

from __future__ import annotations

import random

import pytest
from cmi_inspect.xl.v3.plan import COPIES, MAKERS, Insert, Where, plan_turn
from cmi_inspect.xl.v3.slots import find_slot, states_answer


def _asked(mini3_contexts, *ids):
    return [(mini3_contexts[i], find_slot(mini3_contexts[i])) for i in ids]


def _all_plans(mini3_contexts) -> list[tuple[Where, list[Insert]]]:
    by_turn: dict[tuple[str, str], dict] = {}
    for ctx in mini3_contexts.values():
        slot = find_slot(ctx)
        if slot:
            by_turn.setdefault((ctx.conv.sample_id, slot.turn.dia_id), {}).setdefault(slot.key, (ctx, slot))
    return [(Where(list(a.values())), plan_turn(list(a.values()))) for a in by_turn.values()]


def test_every_insert_states_what_it_is_made_as(mini3_contexts):
    plans = _all_plans(mini3_contexts)
    roles = {i.role for _, inserts in plans for i in inserts}
    assert roles == {"stale", "hearsay", "injected", "retraction", "reaffirmation", "correction"}
    for where, inserts in plans:
        for insert in inserts:
            for ctx, slot in where.asked:
                if slot.key in insert.values:
                    value, means = insert.values[slot.key]
                    assert value.lower() in insert.text.lower()
                    told = states_answer(means, ctx.answer, slot.dated)
                    # a copy states its turn's values; a retraction takes the truth back,
                    # a correction a false value: each true statement is the truthful one
                    assert told == (insert.truthful != (insert.stance == "retracts"))
            if insert.copied:  # a copy bears on every slot of its turn
                assert set(insert.values) == {slot.key for _, slot in where.asked}


def test_false_copies_come_in_pairs_by_two_channels_with_an_echo(mini3_contexts):
    where = Where(_asked(mini3_contexts, "mini-2_qa_0009"))  # "Salerno", D2:8
    inserts = MAKERS["copies"](where, random.Random(3))
    false = [i for i in inserts if not i.truthful]
    assert len(false) == 2 and {i.role for i in false} <= set(COPIES) and false[0].role != false[1].role
    assert false[0].values == false[1].values  # the same words: no date moves them
    echoes = [i for i in inserts if i.truthful]
    assert len(echoes) <= 1 and all(e.role in ("hearsay", "injected") and e.copied for e in echoes)


def test_windows_put_stale_claims_before_the_evidence_and_the_rest_after(mini3_contexts):
    for where, inserts in _all_plans(mini3_contexts):
        evidence = (where.session.index, where.index)
        for insert in inserts:
            first, last = (insert.session, insert.lo), (insert.session, insert.hi)
            if insert.role == "stale":
                assert last < evidence  # an earlier statement that the evidence updates
            if (insert.role == "hearsay" and insert.copied) or insert.role == "retraction":
                assert first >= evidence
            if insert.after is not None:
                assert insert.session >= insert.after.session


@pytest.mark.parametrize("example", ["mini-1_qa_0001", "mini-2_qa_0004"])
def test_a_retraction_is_restored_after_it(mini3_contexts, example):
    where = Where(_asked(mini3_contexts, example))
    retract, reaffirm = MAKERS["retraction"](where, random.Random(1))
    assert (retract.role, reaffirm.role) == ("retraction", "reaffirmation")
    assert reaffirm.after is retract and retract.speaker == reaffirm.speaker == where.turn.speaker
    assert retract.values == reaffirm.values and not retract.truthful and reaffirm.truthful
    assert " not " in retract.text or "n't " in retract.text
