"""What the attribution baselines share (``context_cite``, ``leave_one_in``): CMI's
candidates, the answer generated with every one of them in the context, that answer's
log-probability in other contexts by forced decoding, and the record of it all.

Each attributes one answer, the one the model gives with every candidate in its context, to
the candidates, and keeps those whose attribution (in nats of that answer's log-probability)
is above a threshold of at least 0. Neither reads a label or a gold answer, under either
protocol (under ``paper`` the candidates' lines carry the labels the protocol shows, as
every strategy's prompt does). A model that cannot return a prompt's log-probabilities is
refused in one line. Forced decoding is no Inspect model call, so the log's calls and tokens
leave it out: the record counts it (``Cost``).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar

from inspect_ai.model import ChatMessage, ChatMessageUser, Model
from pydantic import BaseModel

from cmi_inspect.causal_locomo.prompts import memory_prompt
from cmi_inspect.causal_locomo.strategies.attribution_fit import load_thresholds
from cmi_inspect.causal_locomo.strategies.base import (
    MemoryNames,
    MemoryStrategy,
    MemoryTask,
    Pick,
    Selection,
)
from cmi_inspect.causal_locomo.strategies.cmi import CMI, PROFILES
from cmi_inspect.causal_locomo.strategies.cmi.effect import forced_scorer, forced_tokens
from cmi_inspect.causal_locomo.strategies.cmi.proposal import propose
from cmi_inspect.causal_locomo.view import Memory
from cmi_inspect.errors import finite_float, positive_int
from cmi_inspect.local_model.capability import ContinuationLogprobs
from cmi_inspect.retrieval import make_embedder


class Cost(BaseModel):
    """The sample's model work: its generation (the log holds it too) and its forced
    decodings (only this record holds them)."""

    generate_calls: int = 0
    generate_input_tokens: int = 0
    forced_calls: int = 0
    forced_prompt_tokens: int = 0
    """The prompts decoded, as the model's tokenizer and chat template count them."""
    forced_answer_tokens: int = 0
    """The answer's tokens decoded after each prompt, its end of turn included."""


class Attributed(BaseModel):
    """One candidate: its place in CMI's proposal, its attribution, whether it was kept."""

    key: str
    rank: int
    proposal_score: float
    attribution: float
    selected: bool


class AttributionDetails(BaseModel):
    """An attribution baseline's record of one sample."""

    k: int
    embedder: str
    proposal: str
    threshold: float
    answer: str | None
    """The answer attributed: the model's, with every candidate in its context (None: no
    candidate)."""
    candidates: list[Attributed]
    cost: Cost


class AnswerLogprob:
    """One answer's log-probability as the model's whole reply to a prompt, by forced
    decoding: each prompt decoded once, its cost counted."""

    def __init__(self, model: Model, scorer: ContinuationLogprobs, answer: str, cost: Cost):
        self.model, self.scorer, self.answer, self.cost = model, scorer, answer, cost
        self.found: dict[str, float] = {}

    async def __call__(self, prompt: str) -> float:
        if prompt not in self.found:
            [per_token] = await forced_tokens(self.scorer, prompt, [self.answer])
            self.found[prompt] = sum(per_token)
            self.cost.forced_calls += 1
            asked: list[ChatMessage] = [ChatMessageUser(content=prompt)]
            self.cost.forced_prompt_tokens += await self.model.api.count_tokens(asked)
            self.cost.forced_answer_tokens += len(per_token)
        return self.found[prompt]


def _is_file(threshold: object) -> bool:
    """``-S threshold=`` names a file (a path that is not a number)."""
    try:
        float(str(threshold))
    except ValueError:
        return isinstance(threshold, str)
    return False


def context(request: str, memories: Sequence[Memory]) -> str:
    """The answer prompt with these memories (none: the no-memory prompt)."""
    return memory_prompt(request, [m.line() for m in memories])


class AttributionMemory(MemoryStrategy):
    """Keep CMI's candidates whose attribution of the full-context answer is above the
    threshold; ``attribute`` is each method's own."""

    Details: ClassVar[type[AttributionDetails]] = AttributionDetails

    def __init__(self, k: int, threshold: float | str, embedder: str | None) -> None:
        self.k = positive_int("k", k)
        # a number, or a file of thresholds cross-fitted by conversation (attribution_fit)
        self.fitted = threshold if _is_file(threshold) else None
        self.thresholds = load_thresholds(str(threshold), self.name) if self.fitted else None
        self.threshold = 0.0 if self.fitted else finite_float("threshold", threshold, 0.0)
        # the proposal's embedder as CMI's: the one named, else the protocol profile's
        self.proposer = CMI(make_embedder(embedder) if embedder else None)

    @abstractmethod
    async def attribute(
        self, request: str, memories: list[Memory], logprob: AnswerLogprob
    ) -> tuple[list[float], dict[str, Any]]:
        """Each candidate's attribution (nats), and what the method records beside them."""

    def check_model(self, model: Model) -> None:
        forced_scorer(model, f"Strategy {self.name!r}")

    async def select(self, task: MemoryTask) -> Selection:
        scorer = forced_scorer(task.model, f"Strategy {self.name!r}")
        threshold = self.threshold
        if self.thresholds is not None:
            threshold = self.thresholds.for_conversation(task.conversation, str(self.fitted))
        embedder = self.proposer.embedder(task.protocol)
        weights = PROFILES[task.protocol].proposal
        proposed = await propose(task, embedder, weights, self.k)
        memories = [m for m, _ in proposed]
        full = context(task.request, memories)
        cost, output = Cost(), None
        attributions: list[float] = []
        extra: dict[str, Any] = {}
        if memories:
            output = await task.model.generate(full)
            cost.generate_calls = 1
            cost.generate_input_tokens = output.usage.input_tokens if output.usage else 0
            logprob = AnswerLogprob(task.model, scorer, output.completion, cost)
            attributions, extra = await self.attribute(task.request, memories, logprob)
        candidates = [
            Attributed(
                key=m.key,
                rank=i + 1,
                proposal_score=s,
                attribution=a,
                selected=a > threshold,
            )
            for i, ((m, s), a) in enumerate(zip(proposed, attributions, strict=True))
        ]
        kept = [m for m, c in zip(memories, candidates, strict=True) if c.selected]
        prompt = context(task.request, kept)
        details = self.Details(
            k=self.k,
            embedder=embedder.name,
            proposal=weights.name,
            threshold=threshold,
            answer=output.completion if output else None,
            candidates=candidates,
            cost=cost,
            **extra,
        )
        ranked = sorted(candidates, key=lambda c: (-c.attribution, c.rank))
        return Selection(
            picks=[Pick(c.key, c.attribution) for c in candidates if c.selected],
            prompt=prompt,
            details=details,
            output=output if kept == memories else None,  # the full context's answer
            ranking=[c.key for c in ranked],
        )

    @classmethod
    def explain(cls, details: dict[str, Any], names: MemoryNames) -> str:
        """The answer attributed, the work it took, and each candidate's attribution."""
        d = cls.Details.model_validate(details)
        lines = [
            f"{cls.name}: the answer {d.answer!r} attributed to {len(d.candidates)} candidates "
            f"({d.proposal} proposal, {d.embedder}), keeping those above {d.threshold} nats; "
            f"{d.cost.generate_calls} generation, {d.cost.forced_calls} forced decodings "
            f"({d.cost.forced_prompt_tokens} prompt tokens).",
            "",
            "| # | memory | proposal score | attribution | kept |",
            "| --- | --- | --- | --- | --- |",
        ]
        lines += [
            f"| {c.rank} | {names.get(c.key, c.key)} | {c.proposal_score:.3f} "
            f"| {c.attribution:+.3f} | {'yes' if c.selected else 'no'} |"
            for c in d.candidates
        ]
        return "\n".join(lines)
