"""Graphiti (``graphiti-core``, the open core of Zep) as a memory strategy: ``strategy=graphiti``.

Per sample, a fresh Graphiti over its embedded Kuzu driver (``KuzuDriver(":memory:")``)
receives the bank as the protocol shows it, oldest first, one episode per memory
(``add_episode``, named by the memory's key); Graphiti's LLM extracts entities and the facts
between them, and its ``search`` with the request returns the top facts (edges). The
selection is the bank memories behind those facts (each edge lists the episodes it came
from), at most ``top_k`` of them, and the prompt holds the facts.

The LLM is the response model at an OpenAI-compatible endpoint (the embedded ``gguf/``
model served on loopback by llama.cpp, or an ``openai-api/`` model), through Graphiti's
``OpenAIGenericClient`` in its ``json_object`` mode: llama.cpp's server refuses the
``json_schema`` response format (HTTP 500, "Input should be 'text' or 'json_object'"), so
Graphiti puts each schema in its prompt and the server only keeps the reply JSON. Graphiti's
documentation warns that small models without structured output can break ingestion:
every episode whose ``add_episode`` raises is recorded in the sample's details with its
error (``extraction_failed``), never a silent empty selection. Embeddings are the project's
offline e5 (Graphiti embeds facts, names and queries through one call, so all as e5
queries, e5's advice for symmetric use), and Graphiti's telemetry is off.

The bank gives memories an order, not dates: episode ``i`` (in bank order) is dated ``i``
seconds after midnight of the last past session's day.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Sequence
from datetime import UTC, date, datetime, timedelta
from typing import Any, ClassVar

import anyio
from inspect_ai.model import Model
from pydantic import BaseModel, Field

from cmi_inspect.causal_locomo.strategies.base import MemoryNames, MemoryTask, Pick, Selection
from cmi_inspect.causal_locomo.strategies.endpoint import Endpoint, check_endpoint, endpoint_for
from cmi_inspect.causal_locomo.strategies.library import (
    MAX_TOKENS,
    Extraction,
    LibraryMemory,
    LibraryRun,
    LLMUsage,
    by_arrival,
    failure,
    line,
)
from cmi_inspect.causal_locomo.view import Memory
from cmi_inspect.dates.explicit import session_date
from cmi_inspect.errors import UserError
from cmi_inspect.extras import require
from cmi_inspect.retrieval import e5_vectors

FEATURE = "-S strategy=graphiti"
"""What a missing extra's one line names."""
WHY = "Strategy 'graphiti'"
"""What needs the response model's endpoint, in the refusal of another provider."""
SERVED_N_CTX = 16384
"""The served window: Graphiti's prompts carry earlier episodes and the schemas."""
NO_DATE = date(2000, 1, 1)
"""The day episodes are dated by when the sample has no past session with a date."""


class GraphitiFact(BaseModel):
    """One fact Graphiti's search returned, and the bank memories it came from."""

    fact: str
    keys: list[str]


class GraphitiEpisode(Extraction):
    """What Graphiti made of one bank memory."""

    nodes: int = 0
    facts: list[str] = Field(default_factory=list)
    """The facts (edges) its ingestion wrote or updated."""


class GraphitiDetails(LibraryRun):
    """How Graphiti chose: what each episode gave (a failed ingestion sets
    ``extraction_failed``), what its search returned."""

    ATTEMPT: ClassVar[str] = "Ingestion"

    llm: str
    """Graphiti's LLM (it always has one)."""
    episodes: list[GraphitiEpisode]
    returned: list[GraphitiFact]

    def summary(self) -> str:
        facts = sum(len(e.facts) for e in self.episodes)
        return (
            f"Graphiti (embedder {self.embedder}, LLM {self.llm}): {len(self.episodes)} "
            f"episodes, {facts} facts written, {len(self.returned)} returned by search "
            f"(top {self.top_k})"
        )

    def shown(self, names: MemoryNames) -> list[str]:
        return [
            f"- {', '.join(names.get(k, k) for k in f.keys) or 'no episode of this sample'}: "
            f"{f.fact}"
            for f in self.returned
        ]

    def attempts(self) -> Sequence[Extraction]:
        return self.episodes


def import_graphiti() -> Any:
    """Graphiti's ``Graphiti`` class, imported with its telemetry off."""
    os.environ["GRAPHITI_TELEMETRY_ENABLED"] = "false"
    require("graphiti", FEATURE, "kuzu")  # Graphiti imports it only when a Kuzu driver is made
    Graphiti = require("graphiti", FEATURE, "graphiti_core").Graphiti
    from graphiti_core.telemetry import is_telemetry_enabled

    if is_telemetry_enabled():
        raise UserError("Graphiti's telemetry is on: set GRAPHITI_TELEMETRY_ENABLED=false.")
    return Graphiti


class Usage(LLMUsage):
    """Graphiti's LLM calls of one sample, counted on the wire (its generic client keeps
    no tally)."""

    async def on_response(self, response: Any) -> None:
        if not response.request.url.path.endswith("/chat/completions"):
            return
        self.calls += 1
        await response.aread()
        try:
            usage = json.loads(response.content).get("usage") or {}
        except (ValueError, AttributeError):
            return
        self.input_tokens += usage.get("prompt_tokens") or 0
        self.output_tokens += usage.get("completion_tokens") or 0


def e5_embedder(model: Any, lock: threading.Lock) -> Any:
    """Graphiti's embedder interface over the offline e5."""
    from graphiti_core.embedder.client import EmbedderClient

    def embed(texts: list[str]) -> list[list[float]]:
        vectors = e5_vectors(model, lock, texts, query=True)
        return [[float(x) for x in v] for v in vectors]

    class E5Embedder(EmbedderClient):
        async def create(self, input_data: Any) -> list[float]:
            text = input_data[0] if isinstance(input_data, list) else input_data
            return (await anyio.to_thread.run_sync(embed, [str(text)]))[0]

        async def create_batch(self, input_data_list: list[str]) -> list[list[float]]:
            return await anyio.to_thread.run_sync(embed, list(input_data_list))

    return E5Embedder()


def offline_graphiti(endpoint: Endpoint, embedder: Any, usage: Usage, max_tokens: int) -> Any:
    """A new, empty Graphiti on this machine: Kuzu in memory, ``embedder``, and as its LLM
    (and reranker, which its default search does not call) the model at ``endpoint``."""
    from graphiti_core.cross_encoder.openai_reranker_client import OpenAIRerankerClient
    from graphiti_core.driver.kuzu_driver import KuzuDriver
    from graphiti_core.llm_client.config import LLMConfig
    from graphiti_core.llm_client.openai_generic_client import OpenAIGenericClient
    from openai import AsyncOpenAI, DefaultAsyncHttpxClient

    graphiti = import_graphiti()
    config = LLMConfig(
        api_key=endpoint.api_key,
        model=endpoint.model,
        small_model=endpoint.model,
        base_url=endpoint.url,
        temperature=0.0,
    )
    client = AsyncOpenAI(
        api_key=endpoint.api_key,
        base_url=endpoint.url,
        max_retries=0,
        http_client=DefaultAsyncHttpxClient(event_hooks={"response": [usage.on_response]}),
    )
    llm = OpenAIGenericClient(
        config, client=client, max_tokens=max_tokens, structured_output_mode="json_object"
    )
    return graphiti(
        graph_driver=KuzuDriver(":memory:"),
        llm_client=llm,
        embedder=embedder,
        cross_encoder=OpenAIRerankerClient(config, client=client),
    )


def episode_times(task: MemoryTask) -> dict[str, datetime]:
    """Each memory's ``reference_time``: its place in the bank's order, in seconds after
    midnight of the last past session's day."""
    days = [d for s in task.sessions if (d := session_date(s.date_time)) is not None]
    day = days[-1] if days else NO_DATE
    start = datetime(day.year, day.month, day.day, tzinfo=UTC)
    return {m.key: start + timedelta(seconds=i) for i, m in enumerate(by_arrival(task.memories))}


class GraphitiMemory(LibraryMemory):
    """The bank memories behind the top facts of Graphiti's search (at most ``top_k``),
    after Graphiti has built its graph from the bank with the response model as its LLM."""

    name = "graphiti"
    Details = GraphitiDetails

    def __init__(
        self,
        top_k: int = 3,
        llm_n_ctx: int = SERVED_N_CTX,
        llm_max_tokens: int = MAX_TOKENS,
    ) -> None:
        super().__init__(top_k, llm_n_ctx, llm_max_tokens)

    @classmethod
    def load(cls) -> Any:
        return import_graphiti()

    def check_model(self, model: Model) -> None:
        check_endpoint(model, why=WHY)

    async def select(self, task: MemoryTask) -> Selection:
        """Build a fresh graph from the bank, search it, and map its facts to the bank."""
        endpoint = endpoint_for(task.model, self.n_ctx, why=WHY)
        usage = Usage()
        started = time.monotonic()
        embedder = e5_embedder(self.e5(), self.e5_lock)
        graph = offline_graphiti(endpoint, embedder, usage, self.max_tokens)
        # graphiti-core 0.31's KuzuDriver.build_indices_and_constraints does nothing, yet its
        # search queries the full-text indexes that the Kuzu operations themselves create
        await graph.driver.graph_ops.build_indices_and_constraints(graph.driver)
        times = episode_times(task)
        episodes: list[GraphitiEpisode] = []
        sources: dict[str, str] = {}
        """Episode uuid -> the bank memory it holds."""
        try:
            for memory in by_arrival(task.memories):
                episodes.append(await self._add(graph, memory, times[memory.key], sources))
            edges = await graph.search(task.request, num_results=self.k)
        finally:
            await graph.close()
        returned = [
            GraphitiFact(fact=e.fact, keys=[sources[u] for u in e.episodes if u in sources])
            for e in edges
        ]
        by_key = {m.key: m for m in task.memories}
        picked: list[str] = []
        for fact in returned:
            picked += [k for k in fact.keys if k not in picked]
        return self.selection(
            task,
            [Pick(k) for k in picked[: self.k]],
            [line(by_key[f.keys[0]], f.fact) for f in returned if f.keys],
            usage,
            started,
            llm=str(endpoint),
            episodes=episodes,
            returned=returned,
        )

    async def _add(
        self, graph: Any, memory: Memory, when: datetime, sources: dict[str, str]
    ) -> GraphitiEpisode:
        """One bank memory as one episode; what Graphiti made of it, or why it failed."""
        from graphiti_core.nodes import EpisodeType

        try:
            result = await graph.add_episode(
                name=memory.key,
                episode_body=memory.content,
                source_description="a memory of a past conversation",
                reference_time=when,
                source=EpisodeType.text,
            )
        except Exception as ex:
            return GraphitiEpisode(key=memory.key, error=failure(ex))
        sources[result.episode.uuid] = memory.key
        return GraphitiEpisode(
            key=memory.key, nodes=len(result.nodes), facts=[e.fact for e in result.edges]
        )
