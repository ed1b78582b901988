"""full_history: every session when it fits, else the most recent that fit, recorded; its
selection is the memories of the sessions it kept."""

from __future__ import annotations

import pytest
from cmi_inspect.causal_locomo.strategies.full_history import FullHistory, HistoryWindow
from cmi_inspect.local_model import GGUFModel

from conftest import memory_task_for


async def test_all_sessions_and_whole_bank(synthetic_records):
    selection = await FullHistory().select(memory_task_for(synthetic_records[0]))
    assert [p.key for p in selection.picks] == ["gold_00", "irr_00", "irr_01", "harm_00"]
    assert selection.details.truncated is False  # type: ignore[union-attr]
    assert selection.prompt.index("D1:1") < selection.prompt.index("D2:1") < selection.prompt.index("D3:1")
    assert "gold_00" not in selection.prompt


@pytest.mark.slow
async def test_truncates_to_the_most_recent_sessions(real_records):
    from inspect_ai.model import get_model

    longest = max(real_records, key=lambda r: sum(len(s.content) for s in r.past_sessions))
    model = get_model("gguf/smollm2")
    assert isinstance(model.api, GGUFModel)
    selection = await FullHistory().select(memory_task_for(longest, model=model))
    details = selection.details
    assert isinstance(details, HistoryWindow) and details.truncated is True
    assert 1 <= details.sessions_kept < details.sessions_total
    assert await model.count_tokens(selection.prompt) <= details.token_budget
    newest = max(longest.past_sessions, key=lambda s: s.timestamp)
    oldest = min(longest.past_sessions, key=lambda s: s.timestamp)
    assert newest.content[-200:] in selection.prompt
    assert oldest.content not in selection.prompt
    # the selection is what the prompt held: no memory of a session it left out
    sessions = sorted(longest.past_sessions, key=lambda s: s.timestamp)
    first_kept = sessions[-details.sessions_kept].timestamp
    picked = {p.key for p in selection.picks}
    assert picked == {m.memory_id for m in longest.memory_bank if m.timestamp >= first_kept}
    assert len(picked) < len(longest.memory_bank)
