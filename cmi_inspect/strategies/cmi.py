"""Causal Memory Intervention: keep a memory only if it improves the answer, stably (spec §1, §4).

Per sample: propose K candidates with a hybrid score, answer with no memory,
with each candidate and with a perturbed copy of it, score every answer with
the injected answer scorer, and select by utility and stability.

Cost: calls that do not depend on each other run concurrently, and a prompt
already answered in the sample is never sent again. In particular the final
prompt equals the no-memory prompt when nothing is selected, and the single
candidate's with-memory prompt when exactly one is, so those answers are
reused and the sample costs 2K+1 calls instead of 2K+2.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from inspect_ai.model import Model, ModelOutput
from inspect_ai.util import collect
from pydantic import BaseModel

from cmi_inspect.perturb import perturb
from cmi_inspect.prompts import memory_prompt, no_memory_prompt
from cmi_inspect.retrieval import Embedder, jaccard, min_max, top_k
from cmi_inspect.strategies.base import (
    AnswerScorer,
    MemoryNames,
    MemoryStrategy,
    MemoryTask,
    Pick,
    Selection,
)
from cmi_inspect.view import Memory


@dataclass(frozen=True)
class Ablation:
    """A variant of CMI's rule: which answers it asks for and how it decides."""

    name: str
    asks_with: bool = True
    """Answers with each candidate memory."""
    asks_perturbed: bool = True
    """Answers with each perturbed candidate."""
    tests_utility: bool = True
    """Rejects a candidate whose utility is not above tau_u."""
    tests_stability: bool = True
    """Rejects a candidate whose stability is below tau_s."""
    no_memory_as_perturbed: bool = False
    """Takes s_pert = s_no instead of asking for a perturbed answer."""
    by_label: bool = False
    """Selects exactly the candidates labelled useful, asking nothing (paper protocol only)."""
    skipped: str | None = None
    """Why no perturbed answer is asked for, as the log says it."""


ABLATIONS: dict[str, Ablation] = {
    a.name: a
    for a in (
        Ablation("full"),
        Ablation(
            "no_perturb",
            asks_perturbed=False,
            no_memory_as_perturbed=True,
            skipped="no_perturb ablation: s_pert = s_no",
        ),
        Ablation(
            "utility_only",
            asks_perturbed=False,
            tests_stability=False,
            skipped="utility_only ablation",
        ),
        Ablation("stability_only", tests_utility=False),
        Ablation(
            "oracle",
            asks_with=False,
            asks_perturbed=False,
            tests_utility=False,
            tests_stability=False,
            by_label=True,
            skipped="oracle ablation: no intervention",
        ),
    )
}
"""CMI and its ablations by name (the paper's reference code has these four)."""


@dataclass(frozen=True)
class CMIConfig:
    k: int = 3
    tau_u: float = 0.0
    tau_s: float = 0.0
    budget: int | None = None
    """Most memories kept; defaults to k."""
    ablation: str = "full"
    risk_filter: bool = True
    """Drop memories labelled harmful (``paper`` protocol only: blind has no labels)."""
    lazy_perturb: bool = False
    """Skip the perturbed call of a candidate whose utility already rules it out."""

    def __post_init__(self) -> None:
        if self.ablation not in ABLATIONS:
            raise ValueError(f"ablation must be one of {tuple(ABLATIONS)}, got {self.ablation!r}")
        if self.k < 1:
            raise ValueError("k must be at least 1")


class Candidate(BaseModel):
    """One candidate's interventions and verdict, as the log shows them."""

    key: str
    rank: int
    proposal_score: float
    perturbation: str | None = None
    answer_with: str | None = None
    answer_perturbed: str | None = None
    s_with: float | None = None
    s_pert: float | None = None
    utility: float | None = None
    stability: float | None = None
    perturbed_skipped: str | None = None
    """Why no perturbed answer was asked for, when none was."""
    selected: bool = False
    reason: str = ""


class CMIDiagnostics(BaseModel):
    """Everything CMI measured for one sample: the log's record of why it chose."""

    config: dict[str, Any]
    embedder: str
    answer_no_memory: str
    s_no: float
    candidates: list[Candidate]
    model_calls: int
    final_answer_reused: bool


class _Answers:
    """The sample's answers by prompt: each distinct prompt is sent once, concurrently."""

    def __init__(self, model: Model, score: AnswerScorer) -> None:
        self.model = model
        self.score_answer = score
        self.outputs: dict[str, ModelOutput] = {}
        self.scores: dict[str, float] = {}

    async def run(self, prompts: list[str]) -> None:
        new = [p for p in dict.fromkeys(prompts) if p not in self.outputs]
        outputs = await collect(*(self.model.generate(p) for p in new))
        for prompt, output in zip(new, outputs, strict=True):
            self.outputs[prompt] = output
            self.scores[prompt] = await self.score_answer(output.completion)

    def text(self, prompt: str) -> str:
        return self.outputs[prompt].completion


def proposal_scores(cosines: list[float], memories: list[Memory], request: str) -> list[float]:
    """0.7 x cosine mapped to [0, 1] + 0.2 x min-max recency + 0.1 x token Jaccard."""
    recency = min_max([float(m.timestamp) for m in memories])
    return [
        0.7 * (c + 1) / 2 + 0.2 * r + 0.1 * jaccard(request, m.content)
        for c, r, m in zip(cosines, recency, memories, strict=True)
    ]


class CMI(MemoryStrategy):
    name = "cmi"

    def __init__(self, embedder: Embedder, config: CMIConfig | None = None) -> None:
        self.embedder = embedder
        self.config = config or CMIConfig()
        self.ablation = ABLATIONS[self.config.ablation]

    async def propose(self, task: MemoryTask) -> list[tuple[Memory, float]]:
        cosines = await self.embedder.cosine(task.request, [m.content for m in task.memories])
        scores = proposal_scores(list(cosines), task.memories, task.request)
        return top_k(task.memories, scores, self.config.k)

    async def select(self, task: MemoryTask) -> Selection:
        cfg, ablation = self.config, self.ablation
        if ablation.by_label and task.protocol != "paper":
            raise ValueError("The oracle ablation selects by label: it needs -T protocol=paper.")
        if task.score_answer is None:
            raise ValueError("cmi needs an answer scorer for its interventions.")
        proposed = await self.propose(task)
        memories = {m.key: m for m, _ in proposed}
        candidates = [Candidate(key=m.key, rank=i + 1, proposal_score=s)
                      for i, (m, s) in enumerate(proposed)]
        answers = _Answers(task.model, task.score_answer)
        no_prompt = no_memory_prompt(task.request)
        with_prompt = {
            c.key: memory_prompt(task.request, [memories[c.key].line()]) for c in candidates
        }
        pert_prompt: dict[str, str] = {}
        for c in candidates:
            c.perturbation, perturbed = perturb(memories[c.key])
            pert_prompt[c.key] = memory_prompt(task.request, [perturbed.line()])

        eager_pert = ablation.asks_perturbed and not cfg.lazy_perturb
        await answers.run(
            [
                no_prompt,
                *(with_prompt.values() if ablation.asks_with else []),
                *(pert_prompt.values() if eager_pert else []),
            ]
        )
        s_no = answers.scores[no_prompt]
        if ablation.asks_with:
            for c in candidates:
                c.answer_with = answers.text(with_prompt[c.key])
                c.s_with = answers.scores[with_prompt[c.key]]
                c.utility = c.s_with - s_no
        if ablation.asks_perturbed:
            await self._perturbed(candidates, pert_prompt, answers)
        for c in candidates:
            if ablation.no_memory_as_perturbed:
                c.s_pert, c.stability = s_no, c.utility
            if ablation.skipped:
                c.perturbed_skipped = ablation.skipped

        kept = self._decide(candidates, memories)
        prompt = memory_prompt(task.request, [memories[c.key].line() for c in kept])
        diagnostics = CMIDiagnostics(
            config=asdict(cfg),
            embedder=self.embedder.name,
            answer_no_memory=answers.text(no_prompt),
            s_no=s_no,
            candidates=candidates,
            model_calls=len(answers.outputs),
            final_answer_reused=prompt in answers.outputs,
        )
        return Selection(
            picks=[Pick(c.key, c.utility) for c in kept],
            prompt=prompt,
            details=diagnostics,
            output=answers.outputs.get(prompt),
        )

    async def _perturbed(
        self, candidates: list[Candidate], pert_prompt: dict[str, str], answers: _Answers
    ) -> None:
        cfg = self.config
        needed = []
        for c in candidates:
            if cfg.lazy_perturb and (c.utility or 0.0) <= cfg.tau_u:
                c.perturbed_skipped = "lazy_perturb: utility already rules it out"
            else:
                needed.append(c)
        await answers.run([pert_prompt[c.key] for c in needed])
        for c in needed:
            c.answer_perturbed = answers.text(pert_prompt[c.key])
            c.s_pert = answers.scores[pert_prompt[c.key]]
            c.stability = (c.s_with or 0.0) - c.s_pert

    def _decide(self, candidates: list[Candidate], memories: dict[str, Memory]) -> list[Candidate]:
        cfg = self.config
        passing: list[Candidate] = []
        for c in candidates:
            reason = self._rule(c, memories[c.key])
            if reason is None and cfg.risk_filter and memories[c.key].label == "harmful":
                reason = "risk filter: labelled harmful"
            if reason is None:
                passing.append(c)
            c.reason = reason or ""
        passing.sort(key=lambda c: (-(c.utility or 0.0), c.rank))
        budget = cfg.budget if cfg.budget is not None else cfg.k
        for i, c in enumerate(passing):
            c.selected = i < budget
            c.reason = "selected" if c.selected else "over budget"
        return [c for c in passing if c.selected]

    def _rule(self, c: Candidate, memory: Memory) -> str | None:
        """Why the ablation's rule rejects the candidate, or None if it passes."""
        cfg, ablation = self.config, self.ablation
        if ablation.by_label:
            return None if memory.label == "useful" else f"oracle: labelled {memory.label}"
        if ablation.tests_utility:
            assert c.utility is not None
            if c.utility <= cfg.tau_u:
                return f"utility {c.utility:+.3f} <= tau_u {cfg.tau_u}"
        if ablation.tests_stability:
            assert c.stability is not None
            if c.stability < cfg.tau_s:
                return f"stability {c.stability:+.3f} < tau_s {cfg.tau_s}"
        return None

    @classmethod
    def explain(cls, details: dict[str, Any], names: MemoryNames) -> str:
        """Each candidate's scores and decision as a Markdown table."""
        d = CMIDiagnostics.model_validate(details)
        lines = [
            f"CMI: s_no = {d.s_no:.3f}; {d.model_calls} intervention calls; "
            f"final answer reused: {d.final_answer_reused}",
            "",
            "| # | memory | s_with | s_pert | utility | stability | decision |",
            "| --- | --- | --- | --- | --- | --- | --- |",
        ]

        def fmt(v: float | None) -> str:
            return "-" if v is None else f"{v:+.3f}"

        for c in d.candidates:
            s_pert = fmt(c.s_pert) + (f" ({c.perturbed_skipped})" if c.perturbed_skipped else "")
            lines.append(
                f"| {c.rank} | {names.get(c.key, c.key)} | {fmt(c.s_with)} | {s_pert} "
                f"| {fmt(c.utility)} | {fmt(c.stability)} | {c.reason} |"
            )
        return "\n".join(lines)
