"""The contract every strategy over a memory library keeps (mem0, LangMem, Graphiti), one
test each, run for all three: a missing extra is one line naming its install command, a bad
argument one line, found by its entry point, an LLM that is not an OpenAI-compatible
endpoint refused in one line, an endpoint that never answers failing the sample, and every
failed extraction named in the explanation. Where a library's extra is not installed, the
tests that run it skip with that same line.
"""

from __future__ import annotations

import io
import sys
from dataclasses import dataclass, field
from typing import Any

import pytest
from cmi_inspect.causal_locomo import strategies
from cmi_inspect.causal_locomo.data_files import load_records
from cmi_inspect.causal_locomo.strategies.graphiti import GraphitiMemory
from cmi_inspect.causal_locomo.strategies.langmem import LangMemMemory
from cmi_inspect.causal_locomo.strategies.library import LibraryMemory
from cmi_inspect.causal_locomo.strategies.mem0 import Mem0Memory
from cmi_inspect.errors import UserError
from inspect_ai.model import get_model
from rich.console import Console

from conftest import SYNTHETIC, extra_missing, memory_task_for


@dataclass(frozen=True)
class Library:
    strategy: type[LibraryMemory]
    module: str
    """The library's top module: hidden, its extra is missing."""
    llm: dict[str, Any] = field(default_factory=dict)
    """The arguments under which it calls an LLM (Graphiti always does)."""
    refusal: str = "use gguf/NAME .* or openai-api/SERVICE/MODEL, not mockllm/model"
    details: dict[str, Any] = field(default_factory=dict)
    """Its details record, but for the common fields and what became of each memory."""


LIBRARIES = {
    "mem0": Library(Mem0Memory, "mem0", {"infer": True}, details={"infer": True, "stored": 0, "returned": []}),
    "langmem": Library(LangMemMemory, "langmem", {"infer": True}, details={"infer": True, "stored": 0, "returned": []}),
    "graphiti": Library(
        GraphitiMemory, "graphiti_core", refusal="^Strategy 'graphiti' calls .* not mockllm/model.$",
        details={"llm": "x at http://127.0.0.1:9/v1", "returned": []},
    ),
}  # fmt: skip
ATTEMPTS = {"mem0": "extractions", "langmem": "extractions", "graphiti": "episodes"}


def installed(name: str) -> Library:
    """The library, or a skip with its extra's install line."""
    missing = extra_missing(LIBRARIES[name].strategy.load)
    if missing:
        pytest.skip(missing)
    return LIBRARIES[name]


@pytest.fixture(scope="module")
def records():
    return {r.example_id: r for r in load_records(SYNTHETIC)}


@pytest.mark.parametrize("name", LIBRARIES)
def test_a_missing_extra_is_one_line_naming_the_install_command(name, monkeypatch, by_entry_point):
    from cmi_inspect.causal_locomo.strategies.solvers import memory_strategy

    monkeypatch.setitem(sys.modules, LIBRARIES[name].module, None)  # importing it now raises
    with pytest.raises(UserError) as raised:
        memory_strategy(strategy=name)
    expected = f"-S strategy={name} needs the {name} extra: pip install 'cmi-inspect[{name}]'"
    assert str(raised.value) == expected
    printed = io.StringIO()  # as inspect eval prints it: through Rich, whose markup "[mem0]" is not
    Console(file=printed, width=200).print(raised.value.message)
    assert printed.getvalue() == expected + "\n"


BAD_ARGUMENTS: list[tuple[dict[str, Any], str]] = [
    ({"top_k": 0}, "top_k must be an integer of at least 1, got 0"),
    ({"llm_n_ctx": "big"}, "llm_n_ctx must be an integer of at least 1, got 'big'"),
    ({"llm_max_tokens": -1}, "llm_max_tokens must be an integer of at least 1, got -1"),
    ({"infer": "maybe"}, "infer must be true or false, got 'maybe'"),
]


@pytest.mark.parametrize(
    ("name", "argument", "message"),
    [
        (name, argument, message)
        for name, library in LIBRARIES.items()
        for argument, message in BAD_ARGUMENTS
        if "infer" not in argument or "infer" in library.llm  # Graphiti always calls its LLM
    ],
)
def test_a_bad_argument_is_one_line(name, argument, message):
    with pytest.raises(UserError, match=f"^{message}"):
        LIBRARIES[name].strategy(**argument)


@pytest.mark.parametrize("name", LIBRARIES)
def test_it_is_found_by_its_entry_point(name, by_entry_point):
    assert strategies.strategy_class(name) is LIBRARIES[name].strategy
    assert name in strategies.strategy_names()


@pytest.mark.parametrize("name", LIBRARIES)
async def test_its_llm_must_be_an_openai_compatible_endpoint(name, records):
    library = installed(name)
    with pytest.raises(UserError, match=library.refusal):
        await library.strategy(**library.llm).select(memory_task_for(records["syn_0002"]))


@pytest.mark.parametrize("name", LIBRARIES)
async def test_an_endpoint_that_does_not_answer_fails_the_sample(name, records):
    from openai import APIConnectionError

    library = installed(name)
    nowhere = get_model(f"openai-api/scripted/{name}", base_url="http://127.0.0.1:9/v1", api_key="none", memoize=False)
    with pytest.raises(Exception) as raised:
        await library.strategy(**library.llm).select(memory_task_for(records["syn_0002"], model=nowhere))
    cause: BaseException | None = raised.value
    while cause is not None and not isinstance(cause, APIConnectionError):
        cause = cause.__cause__ or cause.__context__
    assert isinstance(cause, APIConnectionError)


@pytest.mark.parametrize("name", LIBRARIES)
def test_the_explanation_names_each_failed_extraction(name):
    library = LIBRARIES[name]
    attempts = [{"key": "m1", "error": "ValueError: no JSON"}, {"key": "m2"}, {"key": "m3", "error": "boom"}]
    details = {"top_k": 3, **library.details, ATTEMPTS[name]: attempts}
    record = library.strategy.Details.model_validate(details)
    assert [a.key for a in record.attempts()] == ["m1", "m2", "m3"]
    explained = library.strategy.explain(details, {"m1": "first", "m3": "third"})
    failed = f"{record.ATTEMPT} failed for 2 of 3 memories:\n- first: ValueError: no JSON\n- third: boom"
    assert explained.startswith(record.summary()) and explained.endswith(failed)
    quiet = library.strategy.explain({**details, ATTEMPTS[name]: [{"key": "m2"}]}, {})
    assert "failed" not in quiet
