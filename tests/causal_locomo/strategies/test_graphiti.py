"""Graphiti as a strategy: a fresh graph on embedded Kuzu per sample, one episode per bank
memory, its search's facts mapped back to the memories they came from, every failed
ingestion recorded, offline throughout.

Graphiti's LLM is a scripted OpenAI-compatible endpoint on loopback (it answers each prompt
with a JSON object built from the schema Graphiti puts in it), and, marked slow, the embedded
model served by llama.cpp.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

import pytest
from cmi_inspect.causal_locomo.data_files import load_records
from cmi_inspect.causal_locomo.prompts import no_memory_prompt
from cmi_inspect.causal_locomo.selection import MemorySelection
from cmi_inspect.causal_locomo.strategies.graphiti import (
    GraphitiDetails,
    GraphitiMemory,
    episode_times,
    import_graphiti,
)
from cmi_inspect.causal_locomo.view import key_to_memory_id
from cmi_inspect.errors import UserError
from cmi_inspect.testing import check_strategy
from inspect_ai.model import get_model

from conftest import SYNTHETIC, memory_task_for, message_text, needs_extra, samples_of

needs_graphiti = needs_extra(import_graphiti)
"""For the tests that run graphiti itself: without the extra they skip with its install line."""

SCHEMA = re.compile(r"Respond with a JSON object in the following format:\s*(\{.*\})\s*$", re.S)
CURRENT = re.compile(r"<(?:CURRENT[ _]MESSAGE|TEXT)>\s*(.*?)\s*</(?:CURRENT[ _]MESSAGE|TEXT)>", re.S)


@pytest.fixture(scope="module")
def records():
    return {r.example_id: r for r in load_records(SYNTHETIC)}


def details(selection) -> GraphitiDetails:
    assert isinstance(selection.details, GraphitiDetails)
    return selection.details


def filled(schema: dict[str, Any], node: dict[str, Any]) -> Any:
    """The plainest value of a JSON schema: required fields only, lists empty."""
    if "$ref" in node:
        return filled(schema, schema["$defs"][node["$ref"].rsplit("/", 1)[1]])
    if "anyOf" in node:
        return None
    kind = node.get("type")
    if kind == "object":
        return {k: filled(schema, v) for k, v in node.get("properties", {}).items() if k in node.get("required", [])}
    return {"array": [], "string": "", "integer": 0, "number": 0.0, "boolean": False}.get(str(kind))


def graph_of(body: dict[str, Any]) -> tuple[int, str]:
    """Graphiti's LLM, scripted: the capitalised words of the episode are its entities, and
    the first two are related by one fact, the episode's text; every other prompt gets the
    plainest object of its schema; a prompt without a schema (the response model) gets prose."""
    text = message_text(body)
    found = SCHEMA.search(text)
    if found is None:
        return 200, "I do not know."
    schema = json.loads(found.group(1))
    answer = filled(schema, schema)
    episode = CURRENT.findall(text)
    words = list(dict.fromkeys(re.findall(r"\b[A-Z][a-z]{2,}\b", episode[-1]))) if episode else []
    if schema.get("title") == "ExtractedEntities":
        answer = {"extracted_entities": [{"name": w, "entity_type_id": 0} for w in words]}
    if schema.get("title") == "ExtractedEdges" and len(words) >= 2:
        fact = episode[-1].split("\n")[-1].strip()
        answer = {"edges": [{"source_entity_name": words[0], "target_entity_name": words[1],
                             "relation_type": "RELATES_TO", "fact": fact}]}  # fmt: skip
    return 200, json.dumps(answer)


@needs_graphiti
async def test_facts_found_map_back_to_the_memories_they_came_from(records, scripted_endpoint):
    record = records["syn_0000"]
    task = memory_task_for(record, protocol="blind", model=scripted_endpoint(graph_of))
    selection = await GraphitiMemory(top_k=2).select(task)
    d = details(selection)
    assert not d.extraction_failed and d.llm.startswith("extractor at http://127.0.0.1:")
    assert [e.key for e in d.episodes] == [m.key for m in sorted(task.memories, key=lambda m: m.timestamp)]
    assert d.llm_calls > len(task.memories) and d.llm_input_tokens == 10 * d.llm_calls
    ids = key_to_memory_id(record.example_id, record.memory_bank, "blind")
    picked = [ids[p.key] for p in selection.picks]
    assert 1 <= len(picked) <= 2 and set(picked) <= {"gold_00", "harm_00", "irr_00", "irr_01"}
    for fact in d.returned:  # each fact is the text of the episode it came from
        assert fact.keys and fact.fact in {m.content for m in task.memories if m.key in fact.keys}
    assert f"- [{d.returned[0].keys[0]}] {d.returned[0].fact}\n" in selection.prompt


@needs_graphiti
async def test_a_failed_ingestion_is_recorded_not_a_silent_empty_selection(records, scripted_endpoint, monkeypatch):
    from graphiti_core.llm_client.client import LLMClient
    from tenacity import wait_none

    # Graphiti waits 5 s to 2 min between its four tries of a call; the tries, not the waits, are tested
    monkeypatch.setattr(LLMClient._generate_response_with_retry.retry, "wait", wait_none())
    unclosed = '{"extracted_entities": [{"name": "Priya", "entity_type_id": 0}, {"name": "Comet'
    model = scripted_endpoint(lambda body: (200, unclosed if SCHEMA.search(message_text(body)) else "No idea."))
    task = memory_task_for(records["syn_0002"], model=model)
    selection = await GraphitiMemory().select(task)
    d = details(selection)
    assert d.extraction_failed and selection.picks == [] and d.returned == []
    assert [e.key for e in d.episodes] == [m.key for m in sorted(task.memories, key=lambda m: m.timestamp)]
    assert all(e.error and e.error.startswith("JSONDecodeError: Unterminated string") for e in d.episodes)
    assert d.llm_calls == 4 * len(task.memories)  # Graphiti tries each call four times
    assert selection.prompt == no_memory_prompt(task.request)
    names = {m.key: m.key for m in task.memories}
    assert "Ingestion failed for 2 of 2 memories:" in GraphitiMemory.explain(d.model_dump(), names)


def test_episodes_are_dated_in_bank_order_on_the_last_session_day(records):
    task = memory_task_for(records["syn_0000"])
    times = episode_times(task)
    ordered = [times[m.key] for m in sorted(task.memories, key=lambda m: m.timestamp)]
    assert ordered == sorted(ordered) and len(set(ordered)) == len(ordered)
    assert ordered[0].hour == 0 and ordered[0].tzinfo is not None


@needs_graphiti
def test_telemetry_is_off_once_imported(monkeypatch):
    from graphiti_core.telemetry import telemetry

    monkeypatch.delitem(sys.modules, "pytest")  # Graphiti is quiet by itself under pytest
    monkeypatch.setenv("GRAPHITI_TELEMETRY_ENABLED", "true")
    assert telemetry.is_telemetry_enabled()
    import_graphiti()
    assert not telemetry.is_telemetry_enabled()


@needs_graphiti
@pytest.mark.slow  # two runs of the task, each building three graphs
def test_graphiti_keeps_the_contract(scripted_endpoint, monkeypatch):
    endpoint = scripted_endpoint(graph_of)
    monkeypatch.setenv("SCRIPTED_BASE_URL", endpoint.api.base_url)
    monkeypatch.setenv("SCRIPTED_API_KEY", "none")
    # a model name of its own: Inspect keeps one model per name, with the endpoint of the
    # test that first made it (another test's, closed by now)
    check_strategy(GraphitiMemory, max_picks=2, model="openai-api/scripted/graphiti", top_k=2)


@needs_graphiti
@pytest.mark.slow  # Graphiti's prompts through SmolLM2 on a CPU: minutes
@pytest.mark.heavy  # minutes on two cores: -m 'not heavy' leaves it out
def test_end_to_end_with_the_embedded_model_served(by_entry_point, tmp_path):
    from cmi_inspect.causal_locomo.causal_locomo import causal_locomo
    from cmi_inspect.causal_locomo.strategies.solvers import memory_strategy
    from inspect_ai import eval as inspect_eval

    [log] = inspect_eval(
        causal_locomo(data_file=str(SYNTHETIC), protocol="blind"),
        solver=memory_strategy(strategy="graphiti"),
        model="gguf/smollm2",
        sample_id="syn_0002",
        display="none",
        log_dir=str(tmp_path),
    )
    assert log.status == "success", log.error
    [sample] = samples_of(log)
    record = sample.store_as(MemorySelection)
    d = GraphitiDetails.model_validate(record.details)
    assert d.llm.startswith("local at http://127.0.0.1:") and d.llm_calls >= 2
    assert sorted(e.key for e in d.episodes) == ["m1", "m2"]
    # every episode either wrote facts or says why its ingestion failed
    assert all(e.error or e.nodes for e in d.episodes)
    assert d.extraction_failed == any(e.error for e in d.episodes)
    assert set(record.selected) <= {e.key for e in d.episodes if not e.error}
    assert sample.output.completion


@needs_graphiti
def test_another_provider_is_refused_before_the_run_in_one_line(by_entry_point, tmp_path, monkeypatch):
    from cmi_inspect.causal_locomo.strategies.graphiti import GraphitiMemory
    from inspect_ai import eval as inspect_eval
    from inspect_ai.solver import SolverSpec

    from conftest import REPO

    monkeypatch.chdir(REPO)
    # the solver is built inside the eval, as `--solver memory_strategy -S strategy=graphiti`
    # and `-T strategy=graphiti` build it
    spec = SolverSpec("memory_strategy", args_passed={"strategy": "graphiti"})
    for solver, args in ((spec, {}), (None, {"strategy": "graphiti"})):
        with pytest.raises(UserError, match="^Strategy 'graphiti' calls .* not fixed_latency/0.$"):
            inspect_eval(
                "tasks/causal_locomo.py",
                solver=solver,
                task_args={"data_file": str(SYNTHETIC), **args},
                model="fixed_latency/0",
                display="none",
                log_dir=str(tmp_path),
            )
    assert not list(tmp_path.iterdir())  # no log: nothing ran
    GraphitiMemory().check_model(get_model("openai-api/scripted/m", base_url="http://127.0.0.1:9/v1", api_key="k"))
