"""A conversation's memory store: one memory per turn of its history, made by one pipeline.

Every turn, LoCoMo's or inserted, becomes a memory the same way: its statements (questions
and sentences under four words left out), relative dates resolved in brackets by the
session's day, in a phrasing drawn from the conversation and the turn's id (never from a
label, which a store does not have: labels are an example's). The store's sessions are
the history every example of the conversation is asked against.
"""

from __future__ import annotations

from cmi_inspect.causal_locomo.data import MemoryRecord, PastSession, Turn, session_text
from cmi_inspect.causal_locomo.data_files import MemoryStore
from cmi_inspect.xl.locomo import Conversation, Session
from cmi_inspect.xl.memories import resolve_dates
from cmi_inspect.xl.phrasing import PHRASINGS, statements
from cmi_inspect.xl.v3.params import MEMORY_TYPE, seeded


def memory_text(conv: Conversation, turn: Turn, session: Session) -> str:
    """The memory of a turn: its statements, dates resolved, in a drawn phrasing."""
    phrasing = seeded(conv.sample_id, "phrasing", turn.dia_id).choice(PHRASINGS)
    kept = resolve_dates(statements(turn.text), session.day)
    return phrasing.render(turn.speaker, conv.listener(turn.speaker), kept, session)


def memory_store(conv: Conversation, sessions: dict[int, Session]) -> MemoryStore:
    """The store of a conversation whose history is ``sessions``: its memories (id: the
    turn's dia_id) and its past sessions, oldest first."""
    memories = [
        MemoryRecord.model_validate(
            {
                "memory_id": turn.dia_id,
                "content": memory_text(conv, turn, session),
                "label": "irrelevant",
                "timestamp": index,
                "scope": turn.speaker,
                "type": MEMORY_TYPE,
                "source_session_id": f"s{index}",
                "source_dia_ids": [turn.dia_id],
            }
        )
        for index, session in sessions.items()
        for turn in session.turns
    ]
    past = [
        PastSession(
            session_id=f"s{index}",
            timestamp=index,
            date_time=session.date_time,
            content=session_text(session.date_time, session.turns),
        )
        for index, session in sessions.items()
    ]
    return MemoryStore(store_id=conv.sample_id, past_sessions=past, memory_store=memories)
