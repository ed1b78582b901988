"""XL v5's store (``xl.store``): a conversation's turns, verbatim."""

import json
from pathlib import Path

from cmi_inspect.causal_locomo.xl.locomo import load_locomo
from cmi_inspect.causal_locomo.xl.store import conversation_store

from conftest import LOCOMO_MINI


def test_every_memory_is_a_turn_verbatim_with_its_speaker_and_day():
    raw = {c["sample_id"]: c for c in json.loads(Path(LOCOMO_MINI).read_text(encoding="utf-8"))}
    for conv in load_locomo(Path(LOCOMO_MINI)):
        store = conversation_store(conv)
        turns = {
            t["dia_id"]: t
            for key, session in raw[conv.sample_id]["conversation"].items()
            if key.startswith("session_") and isinstance(session, list)
            for t in session
        }
        assert [m.memory_id for m in store.memory_store] == list(turns)
        for memory in store.memory_store:
            turn = turns[memory.memory_id]
            caption = f" [shares {turn['blip_caption']}]" if turn.get("blip_caption") else ""
            assert memory.content == turn["text"].strip() + caption
            assert memory.speaker == turn["speaker"]
            assert memory.said_on and memory.label == "irrelevant"
        assert len(store.past_sessions) == len(conv.sessions)
