"""LangMem as a strategy: a fresh LangGraph store with an e5 index per sample, filled through
LangMem's memory tool (``infer=false``) or its memory store manager (``infer=true``), its
search's results mapped back to the bank, extraction failures recorded, offline throughout.

``infer=true`` runs against a scripted OpenAI-compatible endpoint on loopback (its replies are
the tool calls a test needs LangMem's LLM to make), and, marked slow, against the embedded
model served by llama.cpp with function calling.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from cmi_inspect.causal_locomo.data_files import load_records
from cmi_inspect.causal_locomo.prompts import no_memory_prompt
from cmi_inspect.causal_locomo.selection import MemorySelection
from cmi_inspect.causal_locomo.strategies.endpoint import Endpoint
from cmi_inspect.causal_locomo.strategies.langmem import LangMemDetails, LangMemMemory, chat_model, import_langmem
from cmi_inspect.causal_locomo.view import key_to_memory_id
from cmi_inspect.testing import check_strategy

from conftest import SYNTHETIC, memory_task_for, needs_extra, samples_of

needs_langmem = needs_extra(import_langmem)
"""For the tests that run langmem itself: without the extra they skip with its install line."""


@pytest.fixture(scope="module")
def records():
    return {r.example_id: r for r in load_records(SYNTHETIC)}


def details(selection) -> LangMemDetails:
    assert isinstance(selection.details, LangMemDetails)
    return selection.details


def the_memory(body: dict[str, Any]) -> str:
    """The bank memory LangMem hands its LLM: the human message of the session in its
    last user message (after its instructions)."""
    users = [m for m in body["messages"] if m["role"] == "user"]
    found = re.search(r"=+ Human Message =+\n\n(.*?)\n</session_", str(users[-1]["content"]), re.S)
    assert found, users[-1]["content"][-300:]
    return found.group(1)


def remember(body: dict[str, Any]) -> tuple[int, dict[str, Any] | str]:
    """LangMem's LLM, scripted: one new memory per request, naming the memory's words;
    plain text when no tool is offered (the response model's own question)."""
    tools = [t["function"]["name"] for t in body.get("tools", [])]
    if "Memory" not in tools:
        return 200, "I do not know."
    arguments = json.dumps({"content": f"User noted: {the_memory(body)}"})
    call = {"id": f"call_{len(body['messages'])}", "type": "function",
            "function": {"name": "Memory", "arguments": arguments}}  # fmt: skip
    return 200, {"role": "assistant", "content": None, "tool_calls": [call]}


@needs_langmem
async def test_infer_false_stores_each_memory_verbatim_and_selects_what_the_search_returns(records):
    record = records["syn_0000"]
    task = memory_task_for(record, protocol="blind")
    selection = await LangMemMemory(infer=False).select(task)
    ids = key_to_memory_id(record.example_id, record.memory_bank, "blind")
    picked = [ids[p.key] for p in selection.picks]
    # the two memories about adopting Comet (the true date and the poisoned one) rank first
    assert set(picked[:2]) == {"gold_00", "harm_00"} and len(picked) == 3
    scores = [p.score or 0.0 for p in selection.picks]
    assert scores == sorted(scores, reverse=True)
    d = details(selection)
    assert (d.infer, d.stored, d.llm, d.llm_calls, d.extraction_failed) == (False, 4, None, 0, False)
    contents = {m.key: m.content for m in task.memories}
    assert [i.text for i in d.returned] == [contents[p.key] for p in selection.picks]
    assert f"- [{selection.picks[0].key}] {contents[selection.picks[0].key]}\n" in selection.prompt


@needs_langmem
async def test_memories_written_by_langmem_map_back_to_the_memories_they_came_from(records, scripted_endpoint):
    record = records["syn_0000"]
    asked: list[dict[str, Any]] = []

    def reply(body: dict[str, Any]) -> tuple[int, dict[str, Any] | str]:
        asked.append(body)
        return remember(body)

    task = memory_task_for(record, protocol="blind", model=scripted_endpoint(reply))
    selection = await LangMemMemory(infer=True, top_k=2).select(task)
    d = details(selection)
    contents = {m.key: m.content for m in task.memories}
    assert d.llm_calls == len(task.memories) == len(asked) and not d.extraction_failed
    assert d.stored == 4 and d.llm and d.llm.startswith("extractor at http://127.0.0.1:")
    assert all(e.written == [f"User noted: {contents[e.key]}"] and e.tool_calls == 1 for e in d.extractions)
    assert [i.text for i in d.returned] == [f"User noted: {contents[p.key]}" for p in selection.picks]
    ids = key_to_memory_id(record.example_id, record.memory_bank, "blind")
    assert {ids[p.key] for p in selection.picks} == {"gold_00", "harm_00"}
    # a server of the user's gets LangMem's own tool_choice: none first, then "any" once
    # the store holds memories it may update
    assert [b.get("tool_choice") for b in asked] == [None, "required", "required", "required"]


@needs_langmem  # LangChain's OpenAI client
def test_the_served_model_is_asked_for_tool_choice_auto():
    """llama.cpp's function-calling server calls tools only under "auto" or a named tool."""
    served = chat_model(Endpoint("http://127.0.0.1:1/v1", "k", "local", served=True), 64)
    tool = {"type": "function", "function": {"name": "Memory", "parameters": {"type": "object"}}}
    for asked in (None, "any", "required"):
        assert served.bind_tools([tool], tool_choice=asked).kwargs["tool_choice"] == "auto"
    named = served.bind_tools([tool], tool_choice="Memory").kwargs["tool_choice"]
    assert named == {"type": "function", "function": {"name": "Memory"}}
    theirs = chat_model(Endpoint("http://127.0.0.1:1/v1", "k", "theirs"), 64)
    assert theirs.bind_tools([tool], tool_choice="any").kwargs["tool_choice"] == "required"


@needs_langmem
async def test_a_failed_extraction_is_recorded_not_a_silent_empty_selection(records, scripted_endpoint):
    model = scripted_endpoint(lambda body: (400, "Requested tokens (9000) exceed context window of 8192"))
    task = memory_task_for(records["syn_0002"], model=model)
    selection = await LangMemMemory(infer=True).select(task)
    d = details(selection)
    assert d.extraction_failed and d.stored == 0 and selection.picks == []
    assert [e.key for e in d.extractions] == [m.key for m in sorted(task.memories, key=lambda m: m.timestamp)]
    assert all(e.error and "Error code: 400" in e.error and "exceed context window" in e.error for e in d.extractions)
    assert selection.prompt == no_memory_prompt(task.request)
    names = {m.key: m.key for m in task.memories}
    assert "Extraction failed for 2 of 2 memories:" in LangMemMemory.explain(d.model_dump(), names)


@needs_langmem
@pytest.mark.slow  # four runs of the task
def test_langmem_keeps_the_contract(scripted_endpoint, monkeypatch):
    check_strategy(LangMemMemory, max_picks=3, infer=False)
    endpoint = scripted_endpoint(remember)
    monkeypatch.setenv("SCRIPTED_BASE_URL", endpoint.api.base_url)
    monkeypatch.setenv("SCRIPTED_API_KEY", "none")
    # a model name of its own: Inspect keeps one model per name, with the endpoint of the
    # test that first made it (another test's, closed by now)
    check_strategy(LangMemMemory, max_picks=2, model="openai-api/scripted/langmem", infer=True, top_k=2)


@needs_langmem
@pytest.mark.slow  # LangMem's extraction through SmolLM2 on a CPU: minutes
@pytest.mark.heavy  # minutes on two cores: -m 'not heavy' leaves it out
def test_infer_true_end_to_end_with_the_embedded_model_served(by_entry_point, tmp_path):
    from cmi_inspect.causal_locomo.causal_locomo import causal_locomo
    from cmi_inspect.causal_locomo.strategies.solvers import memory_strategy
    from inspect_ai import eval as inspect_eval

    [log] = inspect_eval(
        causal_locomo(data_file=str(SYNTHETIC), protocol="blind"),
        solver=memory_strategy(strategy="langmem", infer=True),
        model="gguf/smollm2",
        sample_id="syn_0002",
        display="none",
        log_dir=str(tmp_path),
    )
    assert log.status == "success", log.error
    [sample] = samples_of(log)
    record = sample.store_as(MemorySelection)
    d = LangMemDetails.model_validate(record.details)
    assert d.llm and d.llm.startswith("local at http://127.0.0.1:")
    assert sorted(e.key for e in d.extractions) == ["m1", "m2"]
    # SmolLM2's replies differ between CPUs (one ran into the served window on CI's): what
    # holds whatever it says is that every extraction that did not fail made a call
    assert d.llm_calls >= sum(not e.error for e in d.extractions)
    assert d.extraction_failed == any(e.error for e in d.extractions)
    # the selection is memories the store holds, each written from one bank memory
    assert set(record.selected) <= {e.key for e in d.extractions if e.written}
    assert sample.output.completion
