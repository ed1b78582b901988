"""Label-free features of CMI's candidates, which the learned selector (``selector``) weighs.

``candidate_features`` computes them for one sample from what CMI measured there (its
candidates' ranks, supports and intervention answers), the texts of the candidates and of
the whole bank, and the request: at run time and from a log alike (``FeatureInputs``), so a
selector fitted on logged runs reads exactly what a running CMI computes. Each feature is
one entry of ``FEATURES``; a ``causal`` one reads the intervention answers, so it needs the
response model, and the others read only the request, the memories and the history.

Two memories are versions of one claim when they share at least half of the shorter one's
words once the words that most of the bank shares are left out (``bank_overlap``): the
memories of one conversation share its people, frames and dates, which tell nothing about
whether two of them state the same thing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

from cmi_inspect.causal_locomo.negation import NEGATOR
from cmi_inspect.causal_locomo.strategies.cmi.diagnostics import Candidate
from cmi_inspect.causal_locomo.strategies.cmi.evidence import Support
from cmi_inspect.retrieval import Embedder
from cmi_inspect.text import content_words

COMMON_SHARE = 0.5
"""A word in at least this share of a bank's memories is common to the bank (and more than
one memory has it): it tells no two memories apart."""
VERSION_OVERLAP = 0.5
"""Bank-specific word overlap from which two candidates count as versions of one claim."""


def words(text: str | None) -> frozenset[str]:
    """A text's content words as a set (none for no text)."""
    return frozenset(content_words(text)) if text else frozenset()


def common_words(bank: Sequence[str]) -> frozenset[str]:
    """The words at least ``COMMON_SHARE`` of the bank's memories (and two or more) have."""
    counts: Counter[str] = Counter(w for text in bank for w in words(text))
    least = max(2.0, COMMON_SHARE * len(bank))
    return frozenset(w for w, n in counts.items() if n >= least)


def overlap(a: frozenset[str], b: frozenset[str]) -> float:
    """Share of the smaller set that the other has too (0 when either is empty)."""
    return len(a & b) / min(len(a), len(b)) if a and b else 0.0


def same_answer(a: str | None, b: str | None) -> bool:
    """Whether two answers are the same text, case and spacing aside."""
    return " ".join((a or "").lower().split()) == " ".join((b or "").lower().split())


def score_of(support: Support | None) -> float:
    return support.score if support is not None else 0.0


@dataclass(frozen=True)
class FeatureInputs:
    """One sample as the features read it: what CMI measured and the texts it measured."""

    request: str
    candidates: Sequence[Candidate]
    """In rank order, with what CMI recorded on them (supports; answers when it intervened)."""
    texts: Mapping[str, str]
    """Each candidate's memory text, by key."""
    bank: Sequence[str]
    """Every memory text of the sample's bank, candidates included."""
    cosines: Mapping[str, float]
    """Each candidate's embedding cosine to the request."""
    answer_no_memory: str | None = None
    support_no_memory: Support | None = None

    @cached_property
    def common(self) -> frozenset[str]:
        return common_words(self.bank)

    def specific(self, key: str) -> frozenset[str]:
        """The candidate's words that the bank does not share."""
        return words(self.texts[key]) - self.common

    def bank_overlap(self, a: str, b: str) -> float:
        return overlap(self.specific(a), self.specific(b))

    def others(self, c: Candidate) -> list[Candidate]:
        return [d for d in self.candidates if d.key != c.key]

    def versions(self, c: Candidate) -> list[Candidate]:
        """The other candidates that state another version of ``c``'s claim."""
        return [d for d in self.others(c) if self.bank_overlap(c.key, d.key) >= VERSION_OVERLAP]


FeatureFunction = Callable[[FeatureInputs, Candidate], float]


@dataclass(frozen=True)
class Feature:
    """One number about a candidate, and whether it needs the intervention answers."""

    name: str
    compute: FeatureFunction
    causal: bool = False


def _rank(x: FeatureInputs, c: Candidate) -> float:
    return float(c.rank)


def _proposal_gap(x: FeatureInputs, c: Candidate) -> float:
    """How far below the best candidate's proposal score it is (0 for the best)."""
    return c.proposal_score - max(d.proposal_score for d in x.candidates)


def _cosine_gap(x: FeatureInputs, c: Candidate) -> float:
    return x.cosines[c.key] - max(x.cosines.values())


def _request_coverage(x: FeatureInputs, c: Candidate) -> float:
    """Share of the request's words the memory has (lexical relevance)."""
    asked = words(x.request)
    return len(asked & words(x.texts[c.key])) / len(asked) if asked else 0.0


def _support_gap(x: FeatureInputs, c: Candidate) -> float:
    """Its memory's support by the history against the best-supported other candidate's."""
    others = [score_of(d.memory_support) for d in x.others(c)]
    return score_of(c.memory_support) - max(others, default=0.0)


def _versions(x: FeatureInputs, c: Candidate) -> float:
    return float(len(x.versions(c)))


def _version_support_gap(x: FeatureInputs, c: Candidate) -> float:
    """Its support against the best-supported other version of its claim (0: none)."""
    found = [score_of(d.memory_support) for d in x.versions(c)]
    return score_of(c.memory_support) - max(found) if found else 0.0


def _max_overlap(x: FeatureInputs, c: Candidate) -> float:
    return max((x.bank_overlap(c.key, d.key) for d in x.others(c)), default=0.0)


def _utility(x: FeatureInputs, c: Candidate) -> float:
    """The history's support of its answer over the no-memory answer's."""
    return score_of(c.support_with) - score_of(x.support_no_memory)


def _stability(x: FeatureInputs, c: Candidate) -> float:
    """The history's support of its answer over the perturbed copy's answer's."""
    return score_of(c.support_with) - score_of(c.support_perturbed)


def _utility_gap(x: FeatureInputs, c: Candidate) -> float:
    return _utility(x, c) - max(_utility(x, d) for d in x.candidates)


def _answer_changed(x: FeatureInputs, c: Candidate) -> float:
    return float(not same_answer(c.answer_with, x.answer_no_memory))


def _perturbed_changed(x: FeatureInputs, c: Candidate) -> float:
    return float(not same_answer(c.answer_with, c.answer_perturbed))


def _answer_agreement(x: FeatureInputs, c: Candidate) -> float:
    """How far another candidate's answer says what its answer says (word overlap)."""
    mine = words(c.answer_with) - words(x.request)
    found = [overlap(mine, words(d.answer_with) - words(x.request)) for d in x.others(c)]
    return max(found, default=0.0)


def _answer_denies(x: FeatureInputs, c: Candidate) -> float:
    """Whether its answer holds a negator the request does not: the memory made the model
    take something back rather than answer (``negation.NEGATOR``)."""
    return float(bool(NEGATOR.search(c.answer_with or "")) and not NEGATOR.search(x.request))


def _answer_from_memory(x: FeatureInputs, c: Candidate) -> float:
    """Share of its answer's own words (not the request's) that its memory holds."""
    mine = words(c.answer_with) - words(x.request)
    return len(mine & words(x.texts[c.key])) / len(mine) if mine else 0.0


FEATURES: dict[str, Feature] = {
    f.name: f
    for f in (
        Feature("rank", _rank),
        Feature("proposal_score", lambda x, c: c.proposal_score),
        Feature("proposal_gap", _proposal_gap),
        Feature("cosine", lambda x, c: x.cosines[c.key]),
        Feature("cosine_gap", _cosine_gap),
        Feature("request_coverage", _request_coverage),
        Feature("memory_support", lambda x, c: score_of(c.memory_support)),
        Feature("support_gap", _support_gap),
        Feature("versions", _versions),
        Feature("version_support_gap", _version_support_gap),
        Feature("max_overlap", _max_overlap),
        Feature("utility", _utility, causal=True),
        Feature("stability", _stability, causal=True),
        Feature("utility_gap", _utility_gap, causal=True),
        Feature("answer_support", lambda x, c: score_of(c.support_with), causal=True),
        Feature("answer_changed", _answer_changed, causal=True),
        Feature("perturbed_changed", _perturbed_changed, causal=True),
        Feature("answer_agreement", _answer_agreement, causal=True),
        Feature("answer_denies", _answer_denies, causal=True),
        Feature("answer_from_memory", _answer_from_memory, causal=True),
    )
}
"""Every feature by name, label-free; ``causal`` ones need CMI's intervention answers."""
NON_CAUSAL = tuple(n for n, f in FEATURES.items() if not f.causal)
CAUSAL = tuple(FEATURES)


def feature_rows(x: FeatureInputs, names: Sequence[str]) -> list[dict[str, float]]:
    """The named features of each candidate, in the candidates' order."""
    return [{n: float(FEATURES[n].compute(x, c)) for n in names} for c in x.candidates]


async def request_cosines(
    embedder: Embedder, request: str, texts: Mapping[str, str]
) -> dict[str, float]:
    """Each text's embedding cosine to the request, by key."""
    found = await embedder.cosine(request, list(texts.values()))
    return {k: float(v) for k, v in zip(texts, found, strict=True)}
