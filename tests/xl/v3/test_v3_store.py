"""A conversation's store: one memory a turn, made the same way whatever the turn."""

from __future__ import annotations

from cmi_inspect.causal_locomo.data import session_turns
from cmi_inspect.xl.v3.store import memory_store, memory_text


def test_every_turn_is_one_memory_of_its_statements_dated_by_its_session(mini_conversations):
    conv = mini_conversations["mini-1"]
    store = memory_store(conv, conv.sessions)
    turns = [(s, t) for s in conv.sessions.values() for t in s.turns]
    assert [m.memory_id for m in store.memory_store] == [t.dia_id for _, t in turns]
    for memory, (session, turn) in zip(store.memory_store, turns, strict=True):
        assert memory.label == "irrelevant" and memory.timestamp == session.index
        assert memory.scope == turn.speaker and (memory.model_extra or {})["source_dia_ids"] == [turn.dia_id]
        assert memory.content == memory_text(conv, turn, session)
        assert turn.speaker in memory.content
    bowl = store.memory_store[2]  # D1:3 "Yesterday I made my first bowl, ..." on 4 March 2023
    assert "[3 March 2023]" in bowl.content


def test_the_store_history_reads_back_as_its_turns(mini_conversations):
    conv = mini_conversations["mini-2"]
    store = memory_store(conv, conv.sessions)
    assert [s.session_id for s in store.past_sessions] == [f"s{i}" for i in conv.sessions]
    read = [t for s in store.past_sessions for t in session_turns(s.content)]
    assert read == [t for s in conv.sessions.values() for t in s.turns]
