"""check_strategy: a third party's one call that runs their strategy and names each broken rule."""

from __future__ import annotations

import asyncio

import pytest
from cmi_inspect import MemoryStrategy, Pick, Selection, memory_prompt
from cmi_inspect.causal_locomo.data_files import load_records
from cmi_inspect.causal_locomo.strategies.base import MemoryTask
from cmi_inspect.causal_locomo.strategies.vector import VectorMemory
from cmi_inspect.causal_locomo.view import Memory
from cmi_inspect.testing import SYNTHETIC, StrategyCheckError, _leaks, check_strategy
from inspect_ai.model import get_model


def test_a_built_in_strategy_keeps_the_contract():
    check_strategy(VectorMemory, max_picks=3, top_k=3)


class FirstTwo(MemoryStrategy):
    """A strategy of one's own, checked before it is installed anywhere: no name finds it."""

    name = "first_two"

    async def select(self, task: MemoryTask) -> Selection:
        kept = task.memories[:2]
        return Selection([Pick(m.key) for m in kept], memory_prompt(task.request, [m.content for m in kept]))


def test_a_strategy_not_installed_is_checked_by_its_class():
    check_strategy(FirstTwo, max_picks=2)


@pytest.mark.slow  # two runs of the task, with e5
def test_more_picks_than_allowed_are_named_for_each_sample_and_protocol():
    with pytest.raises(StrategyCheckError) as raised:
        check_strategy(VectorMemory, max_picks=1, top_k=2)
    lines = str(raised.value).splitlines()
    assert lines[0] == "strategy 'vector_memory':"
    assert lines[1:] == [
        f"{protocol}: {sample}: 2 picks, more than max_picks=1"
        for protocol in ("paper", "blind")
        for sample in ("syn_0000", "syn_0001", "syn_0002")
    ]


@pytest.mark.slow  # four runs of the task
def test_picks_outside_the_bank_and_a_rewritten_sample_fail_the_check(hostile):
    from hostile import BadPicks, Rewrite

    with pytest.raises(StrategyCheckError, match=r"blind: syn_0001 failed: .*picked 'm999' not in the bank"):
        check_strategy(BadPicks)
    with pytest.raises(StrategyCheckError, match=r"paper: syn_0000 failed: .*changed the sample it runs in"):
        check_strategy(Rewrite)


def test_an_argument_the_strategy_does_not_take_is_the_users_one_line():
    from cmi_inspect.errors import UserError

    with pytest.raises(UserError, match="top_n"):
        check_strategy(VectorMemory, top_n=2)


def test_the_leak_check_finds_a_label_an_alias_and_a_real_id_reachable_from_the_task():
    [record, *_] = load_records(SYNTHETIC)
    alias = record.scoring_criteria.answer_aliases[0]
    bank = record.memory_bank[0]
    task = MemoryTask(
        request=record.current_task.instruction,
        memories=[Memory(key="m1", content="plain text", timestamp=0, label="harmful")],
        sessions=[{"note": bank.memory_id}],  # type: ignore[list-item]
        protocol="blind",
        model=get_model("mockllm/model"),
        score_answer=lambda answer: asyncio.sleep(0, result=float(answer == alias)),  # closes over the alias
    )
    found = list(_leaks(task, [record]))
    assert f"{record.example_id}: a label ('harmful') is reachable from its MemoryTask" in found
    assert f"{record.example_id}: an alias ({alias!r}) is reachable from its MemoryTask" in found
    assert f"{record.example_id}: a memory's real id ({bank.memory_id!r}) is reachable from its MemoryTask" in found
    clean = MemoryTask(record.current_task.instruction, [], [], "blind", get_model("mockllm/model"))
    assert list(_leaks(clean, [record])) == []
