"""summary_memory: one synthetic memory, the whole bank as bookkeeping."""

from __future__ import annotations

import asyncio

from cmi_inspect.causal_locomo.strategies.summary import SummaryMemory, chunks, store_summary
from inspect_ai.model import ChatMessageUser, GenerateConfig, ModelOutput

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


class WordModel:
    """A model whose window is counted in words: each summary names its notes' first words."""

    def __init__(self) -> None:
        self.prompts: list[str] = []

    def __str__(self) -> str:
        return "words/model"

    async def count_tokens(self, messages: list[ChatMessageUser]) -> int:
        return len(messages[0].text.split())

    async def generate(self, prompt: str, config: GenerateConfig) -> ModelOutput:
        self.prompts.append(prompt)
        notes = [line[2:] for line in prompt.splitlines() if line.startswith("- ")]
        return ModelOutput.from_content("words/model", " / ".join(n.split()[0] for n in notes))


async def test_a_store_too_large_for_one_request_is_summarised_in_chunks_then_their_summaries():
    model = WordModel()
    notes = [f"note{i} says something about day {i}" for i in range(40)]
    summary, requests = await store_summary(model, notes, budget=60)  # type: ignore[arg-type]
    assert requests == len(model.prompts) > 3
    assert all(len(p.split()) <= 60 for p in model.prompts)  # every request fits the window
    assert summary.split(" / ")[0] == "note0"  # the chunks' summaries kept in order
    first_round = [p for p in model.prompts if "says something" in p]
    covered = [n[2:].split()[0] for p in first_round for n in p.splitlines() if n.startswith("- note")]
    assert covered == [f"note{i}" for i in range(40)]  # each note in exactly one chunk


async def test_samples_of_one_store_share_its_summary_requests():
    model = WordModel()
    notes = [f"note{i} says something about day {i}" for i in range(40)]
    first, second = await asyncio.gather(*(store_summary(model, notes, 60) for _ in range(2)))  # type: ignore[arg-type]
    assert first == second and len(model.prompts) == first[1]  # asked once, awaited twice


async def test_a_note_longer_than_a_request_is_a_chunk_of_its_own():
    model = WordModel()
    runs = await chunks(model, ["short one", "word " * 80, "short two"], budget=30)  # type: ignore[arg-type]
    assert [len(r) for r in runs] == [1, 1, 1]


class HangingModel(WordModel):
    """A request that never ends until cancelled, as a long one when Ctrl-C comes."""

    def __init__(self) -> None:
        super().__init__()
        self.cancelled = 0

    async def generate(self, prompt: str, config: GenerateConfig) -> ModelOutput:
        self.prompts.append(prompt)
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        raise AssertionError("unreachable")


async def test_a_shared_request_runs_while_a_sample_awaits_it_and_stops_when_none_does():
    model = HangingModel()
    notes = ["one note"]
    samples = [asyncio.ensure_future(store_summary(model, notes, 60)) for _ in range(2)]  # type: ignore[arg-type]
    await asyncio.sleep(0.01)
    samples[0].cancel()
    await asyncio.sleep(0.01)
    assert model.cancelled == 0 and len(model.prompts) == 1  # the other sample still awaits it
    samples[1].cancel()
    await asyncio.sleep(0.01)
    assert model.cancelled == 1  # no sample awaits it: it stops instead of running on
    later = asyncio.ensure_future(store_summary(model, notes, 60))  # type: ignore[arg-type]
    await asyncio.sleep(0.01)
    assert len(model.prompts) == 2  # asked again, not the cancelled request's result
    later.cancel()
    await asyncio.gather(*samples, later, return_exceptions=True)


async def test_a_later_sample_of_the_store_reuses_its_summary_chunking_included():
    model = WordModel()
    counted: list[int] = []
    count = model.count_tokens

    async def counting(messages: list[ChatMessageUser]) -> int:
        counted.append(1)
        return await count(messages)

    model.count_tokens = counting  # type: ignore[method-assign]
    notes = [f"note{i} says something about day {i}" for i in range(40)]
    first = await store_summary(model, notes, 60)  # type: ignore[arg-type]
    asked, measured = len(model.prompts), len(counted)
    assert await store_summary(model, notes, 60) == first  # type: ignore[arg-type]
    assert (len(model.prompts), len(counted)) == (asked, measured)  # nothing asked or counted again
