"""Embedders and similarity scores."""

from __future__ import annotations

import asyncio

import pytest
from cmi_inspect.embedding_cache import MEMORY
from cmi_inspect.retrieval import HashingEmbedder, bow_cosine, jaccard, make_embedder, min_max, top_k


@pytest.fixture(autouse=True)
def empty_process_cache():
    """Vectors are kept per process: each test here counts what it embeds from nothing."""
    MEMORY.clear()


def test_hashing_cosine_ranks_the_related_text_first():
    emb = HashingEmbedder()
    sims = asyncio.run(
        emb.cosine(
            "When did Priya adopt the greyhound?", ["Marco likes hiking.", "Priya adopted a greyhound in March."]
        )
    )
    assert sims[1] > sims[0]
    assert -1.0 <= sims.min() and sims.max() <= 1.0 + 1e-9
    assert asyncio.run(emb.cosine("same text", ["same text"]))[0] == pytest.approx(1.0)


def test_each_text_is_embedded_once(monkeypatch):
    emb = HashingEmbedder()
    seen: list[str] = []
    original = emb._embed

    async def counting(texts):
        seen.extend(texts)
        return await original(texts)

    monkeypatch.setattr(emb, "_embed", counting)
    asyncio.run(emb.cosine("q", ["a", "b", "a"]))
    asyncio.run(emb.cosine("q", ["b", "c"]))
    assert sorted(seen) == ["a", "b", "c", "q"]


def test_unknown_embedder():
    with pytest.raises(ValueError, match="Unknown embedder"):
        make_embedder("word2vec")


def test_token_scores():
    assert jaccard("Priya's dog", "priya's DOG") == 1.0
    assert jaccard("a b", "c d") == 0.0
    assert bow_cosine("a a b", "a a b") == pytest.approx(1.0)
    assert bow_cosine("", "a") == 0.0


def test_min_max_and_ties():
    assert min_max([1, 3, 2]) == [0.0, 1.0, 0.5]
    assert min_max([4, 4]) == [0.0, 0.0]
    assert top_k(["a", "b", "c", "d"], [1.0, 2.0, 2.0, 0.5], 3) == [("b", 2.0), ("c", 2.0), ("a", 1.0)]
    assert top_k(["a"], [1.0], 5) == [("a", 1.0)]


def test_openai_embedder_batches_caches_and_normalises(monkeypatch):
    from types import SimpleNamespace

    from cmi_inspect.retrieval import OpenAIEmbedder

    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    emb = OpenAIEmbedder()
    requests: list[list[str]] = []

    async def create(model, input):
        requests.append(list(input))
        vectors = {"q": [3.0, 4.0], "near": [6.0, 8.0], "far": [-4.0, 3.0]}
        return SimpleNamespace(data=[SimpleNamespace(embedding=vectors[t]) for t in input])

    monkeypatch.setattr(emb._client.embeddings, "create", create)
    assert list(asyncio.run(emb.cosine("q", ["near", "far"]))) == pytest.approx([1.0, 0.0])
    asyncio.run(emb.cosine("q", ["far"]))
    assert requests == [["q", "near", "far"]]
    assert emb.model == "text-embedding-3-large"


def test_e5_ranks_a_paraphrase_above_an_unrelated_sentence():
    from cmi_inspect.retrieval import E5Embedder

    emb = make_embedder("e5")
    assert isinstance(emb, E5Embedder) and emb.name == "e5"
    sims = asyncio.run(
        emb.cosine(
            "When did Priya adopt her greyhound?",
            ["Priya took in a rescue greyhound last March.", "The stock market closed higher on Friday."],
        )
    )
    assert sims[0] > sims[1]
    assert -1.0 <= sims.min() and sims.max() <= 1.0 + 1e-6


def test_e5_vectors_are_deterministic_unit_vectors_with_role_prefixes():
    import numpy as np
    from cmi_inspect.retrieval import E5Embedder

    first, second = E5Embedder(), E5Embedder()
    texts = ["passage: Marco likes hiking.", "query: Marco likes hiking."]
    vectors = asyncio.run(first._embed(texts))
    again = asyncio.run(second._embed(list(reversed(texts))))
    assert np.array_equal(vectors[0], again[1]) and np.array_equal(vectors[1], again[0])
    assert all(np.linalg.norm(v) == pytest.approx(1.0) for v in vectors)
    assert not np.allclose(vectors[0], vectors[1])  # the role prefix changes the embedding


async def test_an_embedder_reads_a_bounded_prefix_of_a_long_text_and_the_log_says_so(monkeypatch, caplog):
    from cmi_inspect.retrieval import MAX_EMBED_CHARS, E5Embedder

    seen: list[int] = []
    embedder = E5Embedder()
    embed = embedder._embed_now

    def spy(texts: list[str]):
        seen.extend(len(t) for t in texts)
        return embed(texts)

    monkeypatch.setattr(embedder, "_embed_now", spy)
    huge = "The user moved to Lisbon in May. " * 30_000  # about a megabyte
    with caplog.at_level("WARNING", logger="cmi_inspect.retrieval"):
        scores = await embedder.cosine("Where did the user move?", [huge, "The user likes tea."])
    assert len(scores) == 2 and max(seen) <= MAX_EMBED_CHARS
    assert any(
        f"reads the first {MAX_EMBED_CHARS} of {len(E5Embedder.PASSAGE + huge)} characters" in r.message
        for r in caplog.records
    )


def test_the_openai_embedder_without_a_key_is_one_line(monkeypatch):
    from cmi_inspect.errors import UserError
    from cmi_inspect.retrieval import make_embedder

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(UserError, match="-S embedder=openai needs an OpenAI API key"):
        make_embedder("openai")
