"""The history with the inserted turns said in it: alternation kept, turns renumbered."""

from __future__ import annotations

from cmi_inspect.xl.v3.history import place, said_history
from cmi_inspect.xl.v3.plan import Insert, plan_turn
from cmi_inspect.xl.v3.slots import find_slot


def _inserts(conv, mini3_contexts) -> list[Insert]:
    by_turn: dict[str, dict] = {}
    for ctx in mini3_contexts.values():
        slot = find_slot(ctx)
        if ctx.conv.sample_id == conv.sample_id and slot:
            by_turn.setdefault(slot.turn.dia_id, {}).setdefault(slot.key, (ctx, slot))
    return [i for asked in by_turn.values() for i in plan_turn(list(asked.values()))]


def test_the_history_alternates_and_is_numbered_anew(mini_conversations, mini3_contexts):
    conv = mini_conversations["mini-1"]
    inserts = _inserts(conv, mini3_contexts)
    history = said_history(conv, inserts)
    for index, session in history.sessions.items():
        assert [t.dia_id for t in session.turns] == [f"D{index}:{k}" for k in range(1, len(session.turns) + 1)]
        assert all(a.speaker != b.speaker for a, b in zip(session.turns, session.turns[1:], strict=False))
    said = [t for s in history.sessions.values() for t in s.turns]
    assert len(said) == 30 + len(inserts) + len(history.fillers)
    # LoCoMo's turns, in their order, each under its new id with its own words
    originals = [t for s in conv.sessions.values() for t in s.turns]
    assert [history.turn(history.new_ids[t.dia_id]).text for t in originals] == [t.text for t in originals]
    positions = [said.index(history.turn(history.new_ids[t.dia_id])) for t in originals]
    assert positions == sorted(positions)
    for insert in inserts:
        turn = history.turn(history.inserted[insert])
        assert (turn.speaker, turn.text) == (insert.speaker, insert.text)
        assert int(turn.dia_id[1:].split(":")[0]) == insert.session


def test_an_insert_follows_the_one_it_must_and_stays_in_its_window(mini_conversations, mini3_contexts):
    conv = mini_conversations["mini-2"]
    inserts = _inserts(conv, mini3_contexts)
    placed = place(conv, inserts)
    for insert in inserts:
        session, index = placed[insert]
        assert session == insert.session and insert.lo <= index <= insert.hi
        if insert.after is not None:
            assert placed[insert] > placed[insert.after]


def test_inserts_of_two_speakers_pair_up_in_one_gap(mini_conversations, mini3_contexts):
    conv = mini_conversations["mini-1"]
    a, b = (mini3_contexts[i] for i in ("mini-1_qa_0002", "mini-1_qa_0011"))
    lone = [
        Insert(ctx.evidence[0], "hearsay", speaker, f"Claim {k}.", 3, 2, 2, False, False)
        for k, (ctx, speaker) in enumerate([(a, "Priya"), (b, "Tomas")])
    ]
    history = said_history(conv, lone)
    turns = history.sessions[3].turns
    assert [t.text for t in turns[3:5]] in (["Claim 0.", "Claim 1."], ["Claim 1.", "Claim 0."])
    assert not history.fillers  # the two alternate with the turns around them
