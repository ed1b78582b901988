"""mem0 as a strategy: a fresh in-memory store per sample, its search's results mapped back to
the bank by the key each memory carries, extraction failures recorded, offline throughout.

``infer=true`` runs against a scripted OpenAI-compatible endpoint on loopback (its replies are
whatever a test needs mem0's LLM to say), and, marked slow, against the embedded model served
by llama.cpp.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

import pytest
from cmi_inspect.causal_locomo.data_files import load_records
from cmi_inspect.causal_locomo.prompts import no_memory_prompt
from cmi_inspect.causal_locomo.selection import MemorySelection
from cmi_inspect.causal_locomo.strategies.endpoint import Endpoint
from cmi_inspect.causal_locomo.strategies.mem0 import Mem0Details, Mem0Memory, import_mem0, mem0_endpoint
from cmi_inspect.causal_locomo.view import key_to_memory_id
from cmi_inspect.errors import UserError
from inspect_ai.model import Model, get_model

from conftest import SYNTHETIC, memory_task_for, message_text, mock_model, needs_extra, samples_of, score_of

needs_mem0 = needs_extra(import_mem0)
"""For the tests that run mem0 itself: without the extra they skip with its install line."""

Reply = Callable[[str], tuple[int, str]]
"""What the scripted endpoint answers to the text of a request's messages: status and content."""


@pytest.fixture(scope="module")
def records():
    return {r.example_id: r for r in load_records(SYNTHETIC)}


@pytest.fixture(scope="module")
def retriever() -> Mem0Memory:
    return Mem0Memory(infer=False)


def details(selection) -> Mem0Details:
    assert isinstance(selection.details, Mem0Details)
    return selection.details


@needs_mem0
async def test_infer_false_selects_the_bank_memories_mem0_returns(records, retriever):
    record = records["syn_0000"]
    task = memory_task_for(record, protocol="blind")
    selection = await retriever.select(task)
    ids = key_to_memory_id(record.example_id, record.memory_bank, "blind")
    picked = [ids[p.key] for p in selection.picks]
    # the two memories about adopting Comet (the true date and the poisoned one) rank first
    assert set(picked[:2]) == {"gold_00", "harm_00"} and len(picked) == 3
    scores = [p.score for p in selection.picks]
    assert scores == sorted(scores, reverse=True)
    d = details(selection)
    assert (d.infer, d.stored, d.llm, d.llm_calls, d.extraction_failed) == (False, 4, None, 0, False)
    contents = {m.key: m.content for m in task.memories}
    assert [f.text for f in d.returned] == [contents[p.key] for p in selection.picks]
    assert selection.prompt.endswith(f"Question: {task.request}\n\nGive only the final answer, in a sentence or less.")
    assert f"- [{selection.picks[0].key}] {contents[selection.picks[0].key]}\n" in selection.prompt


@needs_mem0
async def test_each_sample_gets_a_store_of_its_own(records, retriever):
    first = await retriever.select(memory_task_for(records["syn_0001"]))
    second = await retriever.select(memory_task_for(records["syn_0002"]))
    assert details(second).stored == len(records["syn_0002"].memory_bank) == 2
    assert {p.key for p in second.picks} <= {m.memory_id for m in records["syn_0002"].memory_bank}
    assert second.picks[0].key == "gold_00" and "bicycle" in details(second).returned[0].text
    assert {p.key for p in first.picks} <= {m.memory_id for m in records["syn_0001"].memory_bank}


@needs_mem0
def test_a_run_by_name_scores_and_explains_its_selection(by_entry_point, tmp_path):
    from cmi_inspect.causal_locomo.causal_locomo import causal_locomo
    from cmi_inspect.causal_locomo.strategies.solvers import memory_strategy
    from inspect_ai import eval as inspect_eval

    [log] = inspect_eval(
        causal_locomo(data_file=str(SYNTHETIC), protocol="blind"),
        solver=memory_strategy(strategy="mem0", infer=False),
        model=mock_model(lambda p: "I do not know."),
        display="none",
        log_dir=str(tmp_path),
    )
    assert log.status == "success"
    for sample in samples_of(log):
        score = score_of(sample, "memory_selection")
        assert score.metadata and score.metadata["strategy"] == "mem0" and score.metadata["selected"]
        assert score.explanation and "mem0 (infer=False, embedder e5)" in score.explanation


# --- infer=true against a scripted endpoint -------------------------------------------------


@pytest.fixture
def endpoint(scripted_endpoint) -> Callable[[Reply], Model]:
    """A loopback OpenAI-compatible server answering each request's text as told."""
    return lambda reply: scripted_endpoint(lambda body: reply(message_text(body)))


def new_message(prompt: str) -> str:
    """The memory mem0 asks its LLM to extract from: the last section called 'New Messages'
    (mem0's instructions describe one of that name first)."""
    match = re.match(r"user: (.*?)\n\n## ", prompt.rsplit("## New Messages\n", 1)[-1], re.S)
    assert match, prompt[-400:]
    return match.group(1).strip()


def facts_of(prompt: str) -> tuple[int, str]:
    """A well-formed extraction: one fact per memory, which names the memory's words."""
    return 200, json.dumps({"memory": [{"id": "0", "text": f"User noted: {new_message(prompt)}"}]})


@needs_mem0
async def test_extracted_facts_map_back_to_the_memories_they_came_from(records, endpoint):
    record = records["syn_0000"]
    task = memory_task_for(record, protocol="blind", model=endpoint(facts_of))
    selection = await Mem0Memory(infer=True, top_k=2).select(task)
    d = details(selection)
    contents = {m.key: m.content for m in task.memories}
    assert d.llm_calls == len(task.memories) and not d.extraction_failed
    assert d.stored == 4 and d.llm and d.llm.startswith("extractor at http://127.0.0.1:")
    assert all(e.facts == [f"User noted: {contents[e.key]}"] for e in d.extractions)
    assert [f.text for f in d.returned] == [f"User noted: {contents[p.key]}" for p in selection.picks]
    ids = key_to_memory_id(record.example_id, record.memory_bank, "blind")
    assert {ids[p.key] for p in selection.picks} == {"gold_00", "harm_00"}
    assert f"User noted: {contents[selection.picks[0].key]}" in selection.prompt


@needs_mem0
@pytest.mark.parametrize(
    "reply, error",
    [
        (lambda p: (200, "Sure! Priya adopted a dog."), "the reply is not JSON: 'Sure! Priya adopted a dog.'"),
        (lambda p: (200, '{"facts": ["Priya adopted a dog"]}'), 'the reply has no "memory" list'),
        (lambda p: (200, '{"memory": ["Priya adopted a dog"]}'), "AttributeError: 'str' object has no attribute 'get'"),
        (lambda p: (400, "Requested tokens (8700) exceed context window of 8192"), "LLMError: LLM extraction failed"),
    ],
    ids=["prose", "other-json", "strings", "http-400"],
)
async def test_a_failed_extraction_is_recorded_not_a_silent_empty_selection(records, endpoint, reply, error):
    task = memory_task_for(records["syn_0002"], model=endpoint(reply))
    selection = await Mem0Memory(infer=True).select(task)
    d = details(selection)
    assert d.extraction_failed and d.stored == 0 and selection.picks == []
    assert [e.key for e in d.extractions] == [m.key for m in sorted(task.memories, key=lambda m: m.timestamp)]
    assert all(e.error and error in e.error and not e.facts for e in d.extractions)
    assert selection.prompt == no_memory_prompt(task.request)
    names = {m.key: m.key for m in task.memories}
    assert "Extraction failed for 2 of 2 memories:" in Mem0Memory.explain(d.model_dump(), names)


@needs_mem0
@pytest.mark.slow  # two mem0 runs through a scripted endpoint
def test_the_report_counts_the_samples_whose_extraction_failed(by_entry_point, endpoint, tmp_path):
    from cmi_inspect.causal_locomo.causal_locomo import causal_locomo
    from cmi_inspect.causal_locomo.strategies.solvers import memory_strategy
    from cmi_inspect.report import build_report
    from cmi_inspect.report.runs import read_runs
    from inspect_ai import eval as inspect_eval

    model = endpoint(lambda p: (200, "I am not sure."))  # mem0's LLM and the response model
    for infer in (True, False):
        inspect_eval(
            causal_locomo(data_file=str(SYNTHETIC), protocol="blind"),
            solver=memory_strategy(strategy="mem0", infer=infer),
            model=model,
            display="none",
            log_dir=str(tmp_path),
        )
    runs, _ = read_runs(str(tmp_path))
    assert {r.strategy: r.extraction_failures for r in runs} == {"mem0[infer=True]": 3, "mem0[infer=False]": 0}
    note = "mem0[infer=True] (openai-api/scripted/extractor, blind): 3 of 3."
    assert note in build_report(str(tmp_path)) and "infer=False] (" not in build_report(str(tmp_path))


@needs_mem0
async def test_nothing_new_to_extract_is_no_failure(records, endpoint):
    task = memory_task_for(records["syn_0002"], model=endpoint(lambda p: (200, '{"memory": []}')))
    d = details(await Mem0Memory(infer=True).select(task))
    assert not d.extraction_failed and d.stored == 0 and d.llm_calls == 2


@needs_mem0
def test_the_endpoint_is_the_served_gguf_model_or_the_openai_api_providers(monkeypatch, probe_verdict):
    from cmi_inspect.local_model import GGUFModel
    from cmi_inspect.local_model.served import ServedModel

    asked: list[int] = []

    def served(api: GGUFModel, n_ctx: int, chat_format: str | None = None) -> ServedModel:
        asked.append(n_ctx)
        return ServedModel("http://127.0.0.1:1/v1", "local", "k")

    monkeypatch.setattr(GGUFModel, "served", served)
    local = get_model("gguf/smollm2", memoize=False, parallel=1)
    assert mem0_endpoint(local, 16384) == Endpoint("http://127.0.0.1:1/v1", "k", "local", served=True)
    assert asked == [16384]
    api = get_model("openai-api/scripted/extractor", base_url="http://127.0.0.1:2/v1", api_key="s", memoize=False)
    assert mem0_endpoint(api, 16384) == Endpoint("http://127.0.0.1:2/v1", "s", "extractor")
    # a base URL alone does not make a provider speak the OpenAI API
    other = get_model("mockllm/model", base_url="http://127.0.0.1:3/v1", memoize=False)
    with pytest.raises(UserError, match="^-S infer=true calls .* not mockllm/model.$"):
        mem0_endpoint(other, 16384)


# --- infer=true with the embedded model, served --------------------------------------------


@needs_mem0
@pytest.mark.slow  # mem0's 8,600-token instructions through SmolLM2 on a CPU: minutes
@pytest.mark.heavy  # minutes on two cores: -m 'not heavy' leaves it out
def test_infer_true_end_to_end_with_the_embedded_model_served(by_entry_point, tmp_path):
    from cmi_inspect.causal_locomo.causal_locomo import causal_locomo
    from cmi_inspect.causal_locomo.strategies.solvers import memory_strategy
    from inspect_ai import eval as inspect_eval

    [log] = inspect_eval(
        causal_locomo(data_file=str(SYNTHETIC), protocol="blind"),
        solver=memory_strategy(strategy="mem0", infer=True),
        model="gguf/smollm2",
        sample_id="syn_0002",
        display="none",
        log_dir=str(tmp_path),
    )
    assert log.status == "success", log.error
    [sample] = samples_of(log)
    record = sample.store_as(MemorySelection)
    d = Mem0Details.model_validate(record.details)
    assert d.llm and d.llm.startswith("local at http://127.0.0.1:")
    assert d.llm_calls == 2 and d.llm_input_tokens > 2 * 8_000  # each memory's extraction ran
    assert sorted(e.key for e in d.extractions) == ["m1", "m2"]
    assert d.extraction_failed == any(e.error for e in d.extractions)
    # every fact stored came from one memory's extraction, and the selection is those memories
    assert d.stored == sum(len(e.facts) for e in d.extractions)
    assert set(record.selected) <= {e.key for e in d.extractions if e.facts}
    assert sample.output.completion
