"""Causal Memory Intervention: keep a memory only if it improves the answer, stably (spec §1, §4).

Per sample: propose K candidates with a hybrid score, answer with no memory,
with each candidate and with a perturbed copy of it, score every answer with
the intervention scorer, and select by utility and stability.

The intervention scorer and the risk filter follow the protocol unless named.
Under ``paper`` (the reference): answers are scored against the gold answer
and memories labelled harmful are dropped. Under ``blind`` (label-free):
answers are scored by their agreement with evidence from the agent's own
history (``BlindEvidence``, built from the blind ``MemoryTask`` alone), a
candidate that conflicts with one the history supports better is dropped,
and the proposal has no recency term (recency is what promoted poison).

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

from cmi_inspect.choices import (
    DEFAULT_INTERVENTION,
    DEFAULT_RISK_FILTER,
    intervention_name,
    label_filter_needs_labels,
    risk_filter_name,
)
from cmi_inspect.errors import choose, positive_int
from cmi_inspect.evidence import BlindEvidence, EvidenceWindow, Support, word_overlap
from cmi_inspect.perturb import perturb
from cmi_inspect.prompts import memory_prompt, no_memory_prompt
from cmi_inspect.retrieval import Embedder, jaccard, make_embedder, min_max, top_k
from cmi_inspect.strategies.base import (
    AnswerScorer,
    MemoryNames,
    MemoryStrategy,
    MemoryTask,
    Pick,
    Selection,
)
from cmi_inspect.view import Memory, ProtocolName


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


PREFER = ("utility", "proposal")
"""Orders in which CMI's passing candidates fill its budget."""


@dataclass(frozen=True)
class CMIConfig:
    k: int = 3
    tau_u: float = 0.0
    tau_s: float = 0.0
    budget: int | None = None
    """Most memories kept; defaults to k."""
    prefer: str = "utility"
    """Which passing candidates fill the budget first: ``utility`` (highest utility, the
    reference) or ``proposal`` (best proposal rank: the retriever's order, the interventions
    only vetoing)."""
    ablation: str = "full"
    risk_filter: str | bool | None = None
    """``label`` (drop memories labelled harmful; paper only), ``evidence`` (drop a memory
    that conflicts with a candidate the history supports better) or ``none``; None: the
    protocol's default (``DEFAULT_RISK_FILTER``). True and False read as None and ``none``."""
    lazy_perturb: bool = False
    """Skip the perturbed call of a candidate whose utility already rules it out."""
    intervention: str | None = None
    """How intervention answers are scored: ``gold`` or ``evidence``; None: the protocol's
    default (``DEFAULT_INTERVENTION``)."""
    conflict_similarity: float = 0.88
    """Embedding cosine from which two candidates count as versions of one claim (evidence
    risk filter): a poison is most often a close paraphrase of the memory it distorts."""
    conflict_overlap: float = 0.5
    """Or the share of the shorter memory's content words the other shares (``word_overlap``),
    from which they count as versions of one claim whatever the embedder's scale."""

    def __post_init__(self) -> None:
        choose("ablation", self.ablation, tuple(ABLATIONS))
        choose("prefer", self.prefer, PREFER)
        object.__setattr__(self, "k", positive_int("k", self.k))
        object.__setattr__(self, "risk_filter", risk_filter_name(self.risk_filter))
        intervention_name(self.intervention)

    def intervention_for(self, protocol: ProtocolName) -> str:
        return self.intervention or DEFAULT_INTERVENTION[protocol]

    def risk_filter_for(self, protocol: ProtocolName) -> str:
        name = str(self.risk_filter or DEFAULT_RISK_FILTER[protocol])
        if name == "label":
            label_filter_needs_labels(protocol)
        return name


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
    support_with: Support | None = None
    """The evidence's support of the with-memory answer (label-free scoring)."""
    support_perturbed: Support | None = None
    memory_support: Support | None = None
    """The evidence's support of the memory's own text (the evidence risk filter's check)."""
    conflicts: dict[str, float] = {}
    """Other candidates that are versions of the same claim, with their embedding cosine."""
    selected: bool = False
    reason: str = ""


class CMIDiagnostics(BaseModel):
    """Everything CMI measured for one sample: the log's record of why it chose."""

    config: dict[str, Any]
    embedder: str
    intervention: str = "gold"
    """The intervention scorer that ran: ``gold`` or ``evidence``."""
    risk_filter: str = "label"
    """The risk filter that ran: ``label``, ``evidence`` or ``none``."""
    proposal: str = "hybrid"
    """``hybrid`` (cosine, recency, Jaccard: the reference) or ``relevance`` (no recency)."""
    evidence: list[EvidenceWindow] = []
    """The history windows answers were checked against (label-free scoring)."""
    support_no_memory: Support | None = None
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


DEFAULT_EMBEDDER: dict[ProtocolName, str] = {"paper": "hashing", "blind": "e5"}
"""The proposal's embedder unless one is named: ``paper`` keeps the reproduction's exact
selections (and speed); ``blind`` uses e5, whose relevance separates useful from
irrelevant memories far better than character n-grams do."""


def proposal_scores(
    cosines: list[float], memories: list[Memory], request: str, recency: bool = True
) -> list[float]:
    """0.7 x cosine mapped to [0, 1] + 0.2 x min-max recency + 0.1 x token Jaccard.

    Without ``recency`` (the label-free proposal) the recency term is left out: a memory's
    date says nothing about its effect, and in the release it singled out the poison.
    """
    ages = min_max([float(m.timestamp) for m in memories]) if recency else [0.0] * len(memories)
    return [
        0.7 * (c + 1) / 2 + 0.2 * r + 0.1 * jaccard(request, m.content)
        for c, r, m in zip(cosines, ages, memories, strict=True)
    ]


class CMI(MemoryStrategy):
    name = "cmi"

    def __init__(self, embedder: Embedder | None = None, config: CMIConfig | None = None) -> None:
        """``embedder`` None: the protocol's default (``DEFAULT_EMBEDDER``), made on first use."""
        self.given_embedder = embedder
        self.default_embedders: dict[ProtocolName, Embedder] = {}
        self.config = config or CMIConfig()
        self.ablation = ABLATIONS[self.config.ablation]

    def embedder(self, protocol: ProtocolName) -> Embedder:
        """The given embedder, else the protocol's default."""
        if self.given_embedder is not None:
            return self.given_embedder
        if protocol not in self.default_embedders:
            self.default_embedders[protocol] = make_embedder(DEFAULT_EMBEDDER[protocol])
        return self.default_embedders[protocol]

    async def propose(self, task: MemoryTask) -> list[tuple[Memory, float]]:
        embedder = self.embedder(task.protocol)
        cosines = await embedder.cosine(task.request, [m.content for m in task.memories])
        recency = task.protocol == "paper"
        scores = proposal_scores(list(cosines), task.memories, task.request, recency)
        return top_k(task.memories, scores, self.config.k)

    async def select(self, task: MemoryTask) -> Selection:
        cfg, ablation = self.config, self.ablation
        if ablation.by_label and task.protocol != "paper":
            raise ValueError("The oracle ablation selects by label: it needs -T protocol=paper.")
        scoring, risk = cfg.intervention_for(task.protocol), cfg.risk_filter_for(task.protocol)
        evidence = BlindEvidence.from_task(task) if "evidence" in (scoring, risk) else None
        score_answer = task.score_answer
        if evidence is not None and scoring == "evidence":
            score_answer = evidence.score
        if score_answer is None:
            raise ValueError("cmi with -S intervention=gold needs the gold answer scorer.")
        proposed = await self.propose(task)
        memories = {m.key: m for m, _ in proposed}
        candidates = [Candidate(key=m.key, rank=i + 1, proposal_score=s)
                      for i, (m, s) in enumerate(proposed)]
        answers = _Answers(task.model, score_answer)
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

        if evidence is not None:
            self._check_evidence(candidates, memories, evidence)
        if risk == "evidence":
            await self._find_conflicts(candidates, memories, self.embedder(task.protocol))
        kept = self._decide(candidates, memories, risk)
        prompt = memory_prompt(task.request, [memories[c.key].line() for c in kept])
        diagnostics = CMIDiagnostics(
            config=asdict(cfg),
            embedder=self.embedder(task.protocol).name,
            intervention=scoring,
            risk_filter=risk,
            proposal="hybrid" if task.protocol == "paper" else "relevance",
            evidence=evidence.log() if evidence is not None else [],
            support_no_memory=evidence.support(answers.text(no_prompt)) if evidence else None,
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

    @staticmethod
    def _check_evidence(
        candidates: list[Candidate], memories: dict[str, Memory], evidence: BlindEvidence
    ) -> None:
        """Record how far the history supports each candidate's memory and answers."""
        for c in candidates:
            c.memory_support = evidence.support(memories[c.key].content)
            if c.answer_with is not None:
                c.support_with = evidence.support(c.answer_with)
            if c.answer_perturbed is not None:
                c.support_perturbed = evidence.support(c.answer_perturbed)

    async def _find_conflicts(
        self, candidates: list[Candidate], memories: dict[str, Memory], embedder: Embedder
    ) -> None:
        """Pair up candidates whose memories are close paraphrases or one-value edits of each
        other: versions of one claim, of which at most one can be right."""
        cfg = self.config
        for c in candidates:
            text = memories[c.key].content
            others = [d for d in candidates if d.key != c.key]
            cosines = await embedder.cosine(text, [memories[d.key].content for d in others])
            c.conflicts = {
                d.key: round(float(cos), 3)
                for d, cos in zip(others, cosines, strict=True)
                if cos >= cfg.conflict_similarity
                or word_overlap(text, memories[d.key].content) >= cfg.conflict_overlap
            }

    @staticmethod
    def _evidence_risk(c: Candidate, by_key: dict[str, Candidate]) -> str | None:
        """Why the evidence risk filter drops ``c``: a conflicting candidate (whether or not it
        passed the rule) is better supported.

        Support is the history's support of the memory's text plus that of the answer it
        produced, so both what the memory says and what it makes the model say count.
        """

        def support(d: Candidate) -> float:
            answer = d.support_with.score if d.support_with is not None else 0.0
            return (d.memory_support.score if d.memory_support is not None else 0.0) + answer

        for key in c.conflicts:
            if support(by_key[key]) > support(c):
                return (
                    f"evidence risk: another version of the claim of {key}, which the history "
                    f"supports better ({support(by_key[key]):.2f} vs {support(c):.2f})"
                )
        return None

    def _decide(
        self, candidates: list[Candidate], memories: dict[str, Memory], risk: str
    ) -> list[Candidate]:
        cfg = self.config
        by_key = {c.key: c for c in candidates}
        passing: list[Candidate] = []
        for c in candidates:
            reason = self._rule(c, memories[c.key])
            if reason is None and risk == "label" and memories[c.key].label == "harmful":
                reason = "risk filter: labelled harmful"
            if reason is None and risk == "evidence":
                reason = self._evidence_risk(c, by_key)
            if reason is None:
                passing.append(c)
            c.reason = reason or ""
        if cfg.prefer == "utility":
            passing.sort(key=lambda c: (-(c.utility or 0.0), c.rank))
        else:
            passing.sort(key=lambda c: c.rank)
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
            f"final answer reused: {d.final_answer_reused}; intervention scorer: {d.intervention}; "
            f"risk filter: {d.risk_filter}; proposal: {d.proposal}",
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
        if d.evidence:
            lines += cls._explain_evidence(d, names)
        return "\n".join(lines)

    @staticmethod
    def _explain_evidence(d: CMIDiagnostics, names: MemoryNames) -> list[str]:
        """The evidence windows, and what of each candidate's memory and answer they support."""

        def cell(support: Support | None) -> str:
            if support is None:
                return "-"
            missing = f"; lacks {', '.join(support.missing)}" if support.missing else ""
            return f"{support.score:.2f}{missing}".replace("|", "/")

        lines = ["", "Evidence from the history:", ""]
        lines += [f"- {w.ref} (relevance {w.relevance:.2f}; dates: {', '.join(w.dates) or '-'}): "
                  f"{w.text}" for w in d.evidence]
        lines += ["", f"No-memory answer support: {cell(d.support_no_memory)}", "",
                  "| # | memory | memory support | answer support | perturbed answer support "
                  "| conflicts |",
                  "| --- | --- | --- | --- | --- | --- |"]
        for c in d.candidates:
            conflicts = ", ".join(f"{names.get(k, k)} ({v:.2f})" for k, v in c.conflicts.items())
            conflicts = conflicts or "-"
            lines.append(f"| {c.rank} | {names.get(c.key, c.key)} | {cell(c.memory_support)} "
                         f"| {cell(c.support_with)} | {cell(c.support_perturbed)} | {conflicts} |")
        return lines
