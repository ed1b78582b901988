"""How often the evidence risk filter's conflict relation pairs a bank's memories, by the
labels of the pair: the relation should flag harmful-useful pairs (versions of one claim),
not pairs that only share a template or a topic.

Every pair of memories of a bank, as the view shows them, is tested as CMI's filter tests
its candidates under the topic relation (``-S conflict_kind=topic``, ``risk.topic_conflicts``:
embedding cosine at least ``conflict_similarity``, the larger of its two directions, or word
overlap at least ``conflict_overlap``, CMI's defaults); the claim-level relation, the
filter's default since issue 51, is not audited here.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterable

import anyio

from cmi_inspect.causal_locomo.audit import AuditItem
from cmi_inspect.causal_locomo.strategies.cmi.config import CMIConfig
from cmi_inspect.retrieval import Embedder, make_embedder
from cmi_inspect.text import word_overlap

LABEL_ORDER = ("harmful", "useful", "irrelevant")


def pair_name(a: str, b: str) -> str:
    """A label pair's name, in ``LABEL_ORDER`` (``harmful-useful``)."""
    first, second = sorted((a, b), key=LABEL_ORDER.index)
    return f"{first}-{second}"


async def _flags(bank: list[AuditItem], embedder: Embedder) -> list[tuple[str, bool, bool]]:
    """(label pair, flagged by either test, flagged by word overlap) for each pair."""
    conflicts = CMIConfig().conflicts
    texts = [i.content for i in bank]
    cosine: dict[tuple[int, int], float] = {}
    for i, text in enumerate(texts):
        others = [j for j in range(len(texts)) if j != i]
        found = await embedder.cosine(text, [texts[j] for j in others])
        cosine |= {(i, j): float(x) for j, x in zip(others, found, strict=True)}
    out = []
    for i, j in itertools.combinations(range(len(bank)), 2):
        overlap = word_overlap(texts[i], texts[j]) >= conflicts.overlap
        similar = max(cosine[i, j], cosine[j, i]) >= conflicts.similarity
        out.append((pair_name(bank[i].label, bank[j].label), similar or overlap, overlap))
    return out


def conflict_shares(
    items: Iterable[AuditItem], embedder: str = "e5"
) -> dict[str, dict[str, float | int]]:
    """Per label pair: the bank pairs, and the shares the relation flags (and by overlap)."""
    banks: dict[str, list[AuditItem]] = {}
    for item in items:
        banks.setdefault(item.example_id, []).append(item)
    model = make_embedder(embedder)

    async def run() -> list[tuple[str, bool, bool]]:
        return [flag for bank in banks.values() for flag in await _flags(bank, model)]

    flags = anyio.run(run)
    pairs, flagged, overlap = Counter[str](), Counter[str](), Counter[str]()
    for name, either, by_overlap in flags:
        pairs[name] += 1
        flagged[name] += either
        overlap[name] += by_overlap
    names = sorted(pairs, key=lambda n: [LABEL_ORDER.index(p) for p in n.split("-")])
    return {
        n: {
            "pairs": pairs[n],
            "flagged": flagged[n] / pairs[n],
            "by_overlap": overlap[n] / pairs[n],
        }
        for n in names
    }


def conflict_table(shares: dict[str, dict[str, float | int]], embedder: str = "e5") -> str:
    """The shares as a Markdown table."""
    lines = [
        f"| label pair | bank pairs | flagged (cosine {embedder} or overlap) | by overlap |",
        "| --- | --- | --- | --- |",
    ]
    for name, row in shares.items():
        lines.append(
            f"| {name} | {row['pairs']} | {row['flagged']:.3f} | {row['by_overlap']:.3f} |"
        )
    return "\n".join(lines) + "\n"
