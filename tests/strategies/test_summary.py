"""summary_memory: one synthetic memory, the whole bank as bookkeeping."""

from __future__ import annotations

from cmi_inspect.strategies.summary import SummaryMemory

from conftest import memory_task_for, mock_model


async def test_llm_summary_is_shown_as_one_memory(synthetic_records):
    prompts: list[str] = []
    model = mock_model(lambda p: "Priya got Comet in March." if "Summarise" in p else "?", prompts)
    selection = await SummaryMemory("llm").select(memory_task_for(synthetic_records[0], model=model))
    assert [p.key for p in selection.picks] == ["gold_00", "irr_00", "irr_01", "harm_00"]
    assert "- [summary] Priya got Comet in March." in selection.prompt
    assert len(prompts) == 1 and "[gold_00] Priya adopted the greyhound Comet" in prompts[0]


async def test_concat_joins_the_first_eight(synthetic_records):
    selection = await SummaryMemory("concat").select(memory_task_for(synthetic_records[1]))
    assert (
        "[summary] Marco plays the cello in a community orchestra. Marco started learning the "
        "banjo last spring. Priya keeps"
    ) in selection.prompt
