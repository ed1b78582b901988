"""LangMem as a memory strategy: ``-S strategy=langmem``.

Per sample, a fresh LangGraph ``InMemoryStore`` indexed by the project's offline e5 (384
dimensions; stored memories embedded as passages, searches as queries) receives the bank
as the protocol shows it, oldest first, one memory at a time; LangGraph's ``store.search``
with the request then picks, and the selection is the bank memories behind what it returns.

``infer=false`` stores each memory verbatim through LangMem's own memory tool
(``create_manage_memory_tool``, action ``create``; no LLM). ``infer=true`` hands each
memory to LangMem's memory store manager (``create_memory_store_manager``), which searches
the store for related memories and asks its LLM, through tool calls, to insert or update
memories; each item it writes carries the key of the bank memory it was writing from. The
LLM is the response model at an OpenAI-compatible endpoint: the embedded ``gguf/`` model is
served on loopback with llama.cpp's ``chatml-function-calling`` format (SmolLM2 speaks
ChatML), the one llama.cpp server mode that returns tool calls; that server calls tools
only under ``tool_choice="auto"`` or a named tool, so where LangMem asks for none (OpenAI's
default with tools is ``auto``) or ``any`` (which it cannot do) the request says ``auto``.
LangSmith tracing is off, so nothing leaves the machine. An extraction that raises is
recorded in the sample's details (``extraction_failed``), never a silent empty selection.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Sequence
from typing import Any

import anyio
from inspect_ai.model import Model
from pydantic import BaseModel, Field

from cmi_inspect.causal_locomo.strategies.base import MemoryNames, MemoryTask, Selection
from cmi_inspect.causal_locomo.strategies.endpoint import Endpoint, check_endpoint, endpoint_for
from cmi_inspect.causal_locomo.strategies.library import (
    MAX_TOKENS,
    Extraction,
    LibraryMemory,
    LibraryRun,
    LLMUsage,
    by_arrival,
    failure,
    first_picks,
    line,
)
from cmi_inspect.causal_locomo.view import Memory
from cmi_inspect.errors import flag
from cmi_inspect.extras import require
from cmi_inspect.retrieval import e5_vectors

FEATURE = "-S strategy=langmem"
"""What a missing extra's one line names."""
E5_DIMS = 384
NAMESPACE = ("cmi", "memories")
FUNCTION_CALLING = "chatml-function-calling"
"""llama.cpp's chat format that offers tools to a ChatML model through a grammar."""
SERVED_N_CTX = 8192
CREATED = re.compile(r"created memory (\S+)")
"""LangMem's memory tool's reply to ``create``."""


class LangMemItem(BaseModel):
    """One memory LangGraph's search returned, and the bank memory it came from."""

    key: str
    text: str
    score: float


class LangMemExtraction(Extraction):
    """What LangMem's memory manager made of one bank memory (``infer=true``)."""

    written: list[str] = Field(default_factory=list)
    """The memories it inserted or updated from it."""
    tool_calls: int = 0
    """Tool calls in its LLM's replies (0: the LLM answered in prose, storing nothing)."""


class LangMemDetails(LibraryRun):
    """How LangMem chose: what it stored, what the search returned, how extraction went
    (``llm`` with ``infer=true`` only)."""

    infer: bool
    stored: int
    """Memories in the store once the bank was added."""
    returned: list[LangMemItem]
    extractions: list[LangMemExtraction] = Field(default_factory=list)

    def summary(self) -> str:
        return (
            f"LangMem (infer={self.infer}, embedder {self.embedder}): {self.stored} stored, "
            f"{len(self.returned)} returned by search (top {self.top_k})"
        )

    def shown(self, names: MemoryNames) -> list[str]:
        return [f"- {names.get(i.key, i.key)}: {i.text} ({i.score:.3f})" for i in self.returned]

    def attempts(self) -> Sequence[Extraction]:
        return self.extractions


def import_langmem() -> Any:
    """LangMem's module, imported with LangSmith tracing off."""
    for name in ("LANGSMITH_TRACING", "LANGCHAIN_TRACING_V2", "LANGCHAIN_TRACING"):
        os.environ[name] = "false"
    require("langmem", FEATURE, "langchain_openai")  # the LLM client, imported when one is made
    require("langmem", FEATURE, "langgraph.store.memory")
    return require("langmem", FEATURE, "langmem")


def e5_embeddings(model: Any, lock: threading.Lock) -> Any:
    """A LangChain ``Embeddings`` over the offline e5, as LangGraph's store index takes it:
    what it stores is embedded as passages, its queries as queries (e5's two roles)."""
    from langchain_core.embeddings import Embeddings

    class E5Embeddings(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            vectors = e5_vectors(model, lock, texts, query=False)
            return [[float(x) for x in v] for v in vectors]

        def embed_query(self, text: str) -> list[float]:
            [vector] = e5_vectors(model, lock, [text], query=True)
            return [float(x) for x in vector]

    return E5Embeddings()


def chat_model(endpoint: Endpoint, max_tokens: int) -> Any:
    """LangMem's LLM: LangChain's OpenAI chat model at ``endpoint``, asking the embedded
    model's server for ``tool_choice="auto"`` where LangMem asks for none or ``any``."""
    from langchain_openai import ChatOpenAI

    class ServedChat(ChatOpenAI):
        def bind_tools(self, tools: Sequence[Any], *, tool_choice: Any = None, **kwargs: Any):  # type: ignore[override]
            if tool_choice in (None, "any", "required"):
                tool_choice = "auto"
            return super().bind_tools(tools, tool_choice=tool_choice, **kwargs)

    kind = ServedChat if endpoint.served else ChatOpenAI
    return kind(
        model=endpoint.model,
        base_url=endpoint.url,
        api_key=endpoint.api_key,  # type: ignore[arg-type]
        temperature=0.0,
        max_tokens=max_tokens,  # type: ignore[call-arg]
        max_retries=0,
    )


class Usage(LLMUsage):
    """LangMem's LLM calls of one sample, read from LangChain's callbacks."""

    def __init__(self) -> None:
        super().__init__()
        self.tool_calls = 0

    def handler(self) -> Any:
        from langchain_core.callbacks import BaseCallbackHandler

        usage = self

        class Counter(BaseCallbackHandler):
            def on_llm_end(self, response: Any, **kwargs: Any) -> None:
                for generations in response.generations:
                    for generation in generations:
                        usage.calls += 1
                        message = getattr(generation, "message", None)
                        usage.tool_calls += len(getattr(message, "tool_calls", None) or [])
                        tokens = getattr(message, "usage_metadata", None) or {}
                        usage.input_tokens += tokens.get("input_tokens", 0)
                        usage.output_tokens += tokens.get("output_tokens", 0)

        return Counter()


def item_text(value: dict[str, Any]) -> str:
    """The text of a stored memory: LangMem's tool stores ``{"content": TEXT}``, its manager
    ``{"kind": "Memory", "content": {"content": TEXT}}``."""
    content = value.get("content")
    if isinstance(content, dict):
        content = content.get("content", content)
    return content if isinstance(content, str) else str(content)


class LangMemMemory(LibraryMemory):
    """The bank memories behind the top ``top_k`` memories of a LangMem store (``-S
    infer=true`` to let LangMem's memory manager write them, with the response model as
    its LLM)."""

    name = "langmem"
    Details = LangMemDetails

    def __init__(
        self,
        infer: bool | str = False,
        top_k: int = 3,
        llm_n_ctx: int = SERVED_N_CTX,
        llm_max_tokens: int = MAX_TOKENS,
    ) -> None:
        self.infer = flag("infer", infer)
        super().__init__(top_k, llm_n_ctx, llm_max_tokens)

    @classmethod
    def load(cls) -> Any:
        return import_langmem()

    def check_model(self, model: Model) -> None:
        if self.infer:
            check_endpoint(model, why="-S infer=true")

    async def select(self, task: MemoryTask) -> Selection:
        endpoint = (
            endpoint_for(task.model, self.n_ctx, FUNCTION_CALLING, why="-S infer=true")
            if self.infer
            else None
        )
        return await anyio.to_thread.run_sync(self._select, task, endpoint)

    def _select(self, task: MemoryTask, endpoint: Endpoint | None) -> Selection:
        """Fill a fresh store with the bank, search it, and map what it returns to the bank."""
        from langgraph.store.memory import InMemoryStore

        started = time.monotonic()
        embeddings = e5_embeddings(self.e5(), self.e5_lock)
        store = InMemoryStore(index={"dims": E5_DIMS, "embed": embeddings})
        sources: dict[str, str] = {}
        """Store item -> the bank memory it was last written from."""
        usage = Usage()
        arrived = by_arrival(task.memories)
        if endpoint is None:
            self._store_verbatim(store, arrived, sources)
            extractions: list[LangMemExtraction] = []
        else:
            extractions = self._extract(store, endpoint, arrived, sources, usage)
        stored = len(store.search(NAMESPACE, limit=10_000))
        found = store.search(NAMESPACE, query=task.request, limit=self.k)
        returned = [
            LangMemItem(key=sources[i.key], text=item_text(i.value), score=i.score or 0.0)
            for i in found
        ]
        by_key = {m.key: m for m in task.memories}
        return self.selection(
            task,
            first_picks((i.key, i.score) for i in returned),
            [line(by_key[i.key], i.text) for i in returned],
            usage,
            started,
            infer=self.infer,
            llm=str(endpoint) if endpoint else None,
            stored=stored,
            returned=returned,
            extractions=extractions,
        )

    def _store_verbatim(self, store: Any, memories: list[Memory], sources: dict[str, str]) -> None:
        """Each memory as it is, through LangMem's memory tool (no LLM)."""
        from langmem import create_manage_memory_tool

        tool = create_manage_memory_tool(NAMESPACE, store=store, actions_permitted=("create",))
        for memory in memories:
            reply = str(tool.invoke({"content": memory.content, "action": "create"}))
            created = CREATED.match(reply)
            if created is None:
                raise RuntimeError(f"LangMem's memory tool did not create a memory: {reply!r}")
            sources[created.group(1)] = memory.key

    def _extract(
        self,
        store: Any,
        endpoint: Endpoint,
        memories: list[Memory],
        sources: dict[str, str],
        usage: Usage,
    ) -> list[LangMemExtraction]:
        """Each memory through LangMem's memory store manager, one at a time."""
        from langmem import create_memory_store_manager

        manager = create_memory_store_manager(
            chat_model(endpoint, self.max_tokens), namespace=NAMESPACE, store=store
        )
        config = {"callbacks": [usage.handler()]}
        extractions = []
        for memory in memories:
            calls_before = usage.tool_calls
            message = {"role": "user", "content": memory.content}
            try:
                written = manager.invoke({"messages": [message]}, config=config)
            except Exception as ex:
                extractions.append(
                    LangMemExtraction(
                        key=memory.key,
                        tool_calls=usage.tool_calls - calls_before,
                        error=failure(ex),
                    )
                )
                continue
            for item in written:
                sources[item["key"]] = memory.key
            extractions.append(
                LangMemExtraction(
                    key=memory.key,
                    written=[item_text(item["value"]) for item in written],
                    tool_calls=usage.tool_calls - calls_before,
                )
            )
        return extractions
