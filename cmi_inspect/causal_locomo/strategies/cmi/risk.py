"""Risk filters: which candidates CMI drops whatever their scores, by name.

A filter is consulted for a candidate that passed CMI's rule: ``label`` (the paper's)
drops memories labelled harmful; ``evidence`` (label-free) drops a memory that conflicts
with a candidate the history supports better; ``none`` keeps them all. A new filter is
one entry of ``RISK_FILTERS``.

Two memories conflict by one of two relations (``Conflicts.kind``): ``claim`` (the default)
when they state the same slot with another value (``claims``), compared only with the
memories that share one of their rarest words, so a store of thousands is checked in
seconds; ``topic``, the relation of earlier figures, when their embedding cosine or their
share of content words is high, every pair compared. Within one conversation e5 puts
nearly every pair above the cosine thresholds, so under ``topic`` a store's memories all
conflict and the filter keeps only the best-supported one.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass

from cmi_inspect.causal_locomo.selection import placeholder
from cmi_inspect.causal_locomo.strategies.cmi.claims import Claim, claim_conflicts, rarity
from cmi_inspect.causal_locomo.strategies.cmi.diagnostics import Candidate
from cmi_inspect.causal_locomo.strategies.cmi.history import History
from cmi_inspect.causal_locomo.view import Memory
from cmi_inspect.errors import choose
from cmi_inspect.retrieval import Embedder
from cmi_inspect.text import word_overlap

CONFLICT_KINDS = ("claim", "topic")
"""``claim``: the same slot with another value; ``topic``: close in embedding or in words."""


@dataclass(frozen=True)
class Conflicts:
    """From when two candidates count as versions of one claim (``CMIConfig.conflict_*``)."""

    similarity: float
    """Embedding cosine at or above which they do (``topic`` only)."""
    overlap: float
    """Share of the lighter memory's slot weight the other shares (``claim``), or of the
    shorter memory's content words the other has too (``topic``: ``text.word_overlap``),
    at or above which they do."""
    kind: str = "claim"
    """Which relation (``CONFLICT_KINDS``)."""

    def __post_init__(self) -> None:
        choose("conflict kind", self.kind, CONFLICT_KINDS)


Verdict = Callable[[Candidate, Memory, Mapping[str, Candidate]], "str | None"]
"""Why the filter drops a candidate (None: it keeps it), from the candidate, its memory
and every candidate of the sample by key."""
Measure = Callable[
    [Sequence[Candidate], Mapping[str, Memory], Embedder, Conflicts, History], Awaitable[None]
]
"""Records on the candidates what the filter's verdicts need measured first (from the
sample's history, when the filter ``reads_history``)."""


async def measure_nothing(
    candidates: Sequence[Candidate],
    memories: Mapping[str, Memory],
    embedder: Embedder,
    conflicts: Conflicts,
    history: History,
) -> None:
    """A filter whose verdicts need nothing measured."""


@dataclass(frozen=True)
class RiskFilter:
    """One way to drop candidates that pass CMI's rule."""

    name: str
    verdict: Verdict
    measure: Measure = measure_nothing
    reads_history: bool = False
    """Its verdicts read the history's support of the candidates."""
    refused_under_blind: str | None = None
    """Why a label-free protocol refuses it, as the user reads it (None: it reads no label)."""


def labelled_harmful(c: Candidate, memory: Memory, by_key: Mapping[str, Candidate]) -> str | None:
    """The paper's filter: the memory's label says it is harmful."""
    return "risk filter: labelled harmful" if memory.label == "harmful" else None


def keep_all(c: Candidate, memory: Memory, by_key: Mapping[str, Candidate]) -> str | None:
    """No filter."""
    return None


async def find_conflicts(
    candidates: Sequence[Candidate],
    memories: Mapping[str, Memory],
    embedder: Embedder,
    conflicts: Conflicts,
    history: History,
) -> None:
    """Pair up candidates whose memories are versions of one claim, of which at most one
    can be right, by the relation ``conflicts.kind`` names; each candidate's ``conflicts``
    maps the others to their share of slot weight (``claim``) or cosine (``topic``)."""
    if conflicts.kind == "topic":
        await topic_conflicts(candidates, memories, embedder, conflicts)
        return
    claims = [Claim.of(memories[c.key].content) for c in candidates]
    evidence = history.evidence
    weight = rarity(evidence.document_frequency, evidence.documents, claims)
    found = claim_conflicts(claims, weight, conflicts.overlap)
    for i, c in enumerate(candidates):
        partners = sorted(found.get(i, {}).items())
        c.conflicts = {candidates[j].key: round(share, 3) for j, share in partners}


async def topic_conflicts(
    candidates: Sequence[Candidate],
    memories: Mapping[str, Memory],
    embedder: Embedder,
    conflicts: Conflicts,
) -> None:
    """The topic relation: close paraphrases or one-value edits by cosine or shared words,
    every pair compared. It is symmetric: an embedder's cosine may differ with the side
    each text is on (e5 embeds the first as a query), so a pair's similarity is the larger
    of its two directions."""
    cosine: dict[tuple[str, str], float] = {}
    for c in candidates:
        others = [d for d in candidates if d.key != c.key]
        found = await embedder.cosine(
            memories[c.key].content, [memories[d.key].content for d in others]
        )
        cosine |= {(c.key, d.key): float(x) for d, x in zip(others, found, strict=True)}
    for c in candidates:
        text = memories[c.key].content
        c.conflicts = {}
        for d in candidates:
            if d.key == c.key:
                continue
            similarity = max(cosine[c.key, d.key], cosine[d.key, c.key])
            if (
                similarity >= conflicts.similarity
                or word_overlap(text, memories[d.key].content) >= conflicts.overlap
            ):
                c.conflicts[d.key] = round(similarity, 3)


def history_support(c: Candidate) -> float:
    """The history's support of the memory's text plus that of the answer it produced, so
    both what the memory says and what it makes the model say count."""
    answer = c.support_with.score if c.support_with is not None else 0.0
    return (c.memory_support.score if c.memory_support is not None else 0.0) + answer


def decimals_apart(a: float, b: float, least: int = 2) -> int:
    """The fewest decimals, ``least`` at least, at which ``a`` and ``b`` are written apart
    ("0.0213 vs 0.0208", never "0.02 vs 0.02"); ``least`` for equal numbers."""
    for decimals in range(least, 17):
        if f"{a:.{decimals}f}" != f"{b:.{decimals}f}":
            return decimals
    return least


def evidence_risk(
    c: Candidate, by_key: Mapping[str, Candidate], name: Callable[[str], str] = placeholder
) -> str | None:
    """Why the evidence filter drops ``c``: a conflicting candidate (whether or not it passed
    the rule) is better supported by the history (``history_support``). The reason names that
    candidate by ``name(key)``: by default a placeholder, which the scorer fills with the
    memory's data id and label (a blind key such as ``m5`` is shown nowhere in View)."""
    for key in c.conflicts:
        if history_support(by_key[key]) > history_support(c):
            better, own = history_support(by_key[key]), history_support(c)
            d = decimals_apart(better, own)
            return (
                f"evidence risk: another version of the claim of {name(key)}, which the "
                f"history supports better ({better:.{d}f} vs {own:.{d}f})"
            )
    return None


def better_supported_conflict(
    c: Candidate, memory: Memory, by_key: Mapping[str, Candidate]
) -> str | None:
    """The label-free filter's verdict (``evidence_risk``)."""
    return evidence_risk(c, by_key)


LABEL_REFUSAL = (
    "risk_filter=label drops memories by their label, which the blind protocol hides; "
    "choose from evidence, none."
)

RISK_FILTERS: dict[str, RiskFilter] = {
    f.name: f
    for f in (
        RiskFilter("label", labelled_harmful, refused_under_blind=LABEL_REFUSAL),
        RiskFilter(
            "evidence", better_supported_conflict, measure=find_conflicts, reads_history=True
        ),
        RiskFilter("none", keep_all),
    )
}


def risk_filter(name: str) -> RiskFilter:
    """The filter named by ``-S risk_filter=``; a bad name is one line naming the choices."""
    return RISK_FILTERS[choose("risk filter", name, tuple(RISK_FILTERS))]
