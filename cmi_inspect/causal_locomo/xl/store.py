"""XL v5's memory store: one per LoCoMo conversation, every turn verbatim.

A memory is a turn: its id the turn's (``D3:4``), its text the turn's own words (with a
shared photo's caption in the one fixed form ``locomo`` reads every caption in), its speaker
and its session's day as fields. No sentence, value or turn of ours is in any memory or
in the history; labels are an example's, never the store's.
"""

from __future__ import annotations

from cmi_inspect.causal_locomo.data import MemoryRecord, PastSession, session_text
from cmi_inspect.causal_locomo.data_files import MemoryStore
from cmi_inspect.causal_locomo.xl.locomo import Conversation
from cmi_inspect.dates import format_day

MEMORY_TYPE = "conversation_turn"


def conversation_store(conv: Conversation) -> MemoryStore:
    """The conversation's store: a memory a turn, and its sessions, oldest first."""
    memories = [
        MemoryRecord(
            memory_id=turn.dia_id,
            content=turn.text,
            label="irrelevant",
            timestamp=index,
            type=MEMORY_TYPE,
            speaker=turn.speaker,
            said_on=format_day(session.day),
        )
        for index, session in conv.sessions.items()
        for turn in session.turns
    ]
    past = [
        PastSession(
            session_id=f"s{index}",
            timestamp=index,
            date_time=session.date_time,
            content=session_text(session.date_time, session.turns),
        )
        for index, session in conv.sessions.items()
    ]
    return MemoryStore(store_id=conv.sample_id, past_sessions=past, memory_store=memories)
