"""Harmful memories: each generator's false claim, the planted kind, and the kinds drawn."""

from __future__ import annotations

import random

from cmi_inspect.xl.attacks import ATTACK_KINDS, GENERATORS, attacks_for


def _attack(kind, ctx):
    return GENERATORS[kind](ctx, random.Random(0))


def test_value_swap_puts_another_answer_in_the_evidence_turn(mini_contexts):
    ctx = mini_contexts["mini-1_qa_0004"]  # "Lisbon"
    attack = _attack("value_swap", ctx)
    assert attack.adversarial in ctx.same_category_answers and attack.adversarial in attack.text
    assert "Lisbon" not in attack.text and attack.draft.label == "harmful"


def test_entity_swap_renames_the_answer(mini_contexts):
    ctx = mini_contexts["mini-1_qa_0009"]  # "Madrid"
    attack = _attack("entity_swap", ctx)
    assert attack.adversarial in ctx.conv.entities and attack.adversarial != "Madrid"
    assert attack.adversarial in attack.text and "Madrid" not in attack.text


def test_temporal_shift_says_another_time(mini_contexts):
    ctx = mini_contexts["mini-1_qa_0000"]  # "Yesterday I made my first bowl", 3 March 2023
    attack = _attack("temporal_shift", ctx)
    assert not attack.text.startswith("Yesterday") and attack.adversarial != "3 March 2023"
    assert f"[{attack.adversarial}]" in attack.draft.content


def test_denial_takes_the_answer_back(mini_contexts):
    attack = _attack("denial", mini_contexts["mini-1_qa_0002"])
    assert "Biscuit" in attack.text and attack.adversarial is None


def test_planted_claims_are_said_in_the_history(mini_contexts):
    ctx = mini_contexts["mini-1_qa_0004"]
    attack = _attack("planted", ctx)
    host, claim = attack.plant
    assert attack.draft.dia_ids == [host] and host not in {t.dia_id for t in ctx.evidence}
    turn = ctx.conv.turn(host)
    assert turn is not None and turn.speaker == attack.draft.speaker
    assert attack.text == f"{turn.text} {claim}"  # the memory is of the whole host turn
    assert attack.adversarial in claim and attack.adversarial in attack.draft.content


def test_a_planted_claim_goes_after_a_turn_that_states_least():
    from cmi_inspect.causal_locomo.data import Turn
    from cmi_inspect.xl.attacks import _host_rank

    turns = [Turn("D1:1", "A", "I repainted the whole kitchen on Sunday."), Turn("D1:3", "A", "Wow! Really?")]
    assert min(turns, key=_host_rank).dia_id == "D1:3"


def test_every_kind_is_produced_and_recorded(mini_build, mini_lines):
    _, manifest = mini_build
    assert set(manifest["attack_kinds"]) == set(ATTACK_KINDS) == set(GENERATORS)
    for record in mini_lines:
        for memory in record["memory_bank"]:
            assert (memory["attack_kind"] is not None) == (memory["label"] == "harmful")
        kinds = [m["attack_kind"] for m in record["memory_bank"] if m["attack_kind"]]
        assert sorted(record["metadata"]["attack_kinds"]) == sorted(kinds)


def test_planted_claims_appear_in_the_built_history(mini_lines, mini_contexts):
    planted = [(r, m) for r in mini_lines for m in r["memory_bank"] if m["attack_kind"] == "planted"]
    assert planted
    for record, memory in planted:
        [host] = memory["source_dia_ids"]
        turn = mini_contexts[record["example_id"]].conv.turn(host)
        lines = [line for s in record["past_sessions"] for line in s["content"].splitlines()]
        [spoken] = [line for line in lines if line.startswith(f"{host} ")]
        assert spoken.startswith(f"{host} {turn.speaker}: {turn.text} ") and len(spoken) > len(turn.line()) + 1


def test_an_example_gets_at_most_two_attacks_of_different_kinds(mini_contexts):
    counts = [len(attacks_for(ctx)) for ctx in mini_contexts.values()]
    assert set(counts) <= {0, 1, 2} and 0 in counts and max(counts) >= 1
    for ctx in mini_contexts.values():
        kinds = [a.draft.attack_kind for a in attacks_for(ctx)]
        assert len(kinds) == len(set(kinds))
