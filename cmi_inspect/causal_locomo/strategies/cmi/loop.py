"""CMI's selection for one sample: propose, intervene, score, filter, decide.

Cost: calls that do not depend on each other run concurrently, and a prompt already
answered in the sample is never sent again. In particular the final prompt equals the
no-memory prompt when nothing is selected, and the single candidate's with-memory prompt
when exactly one is, so those answers are reused and the sample costs 2K+1 calls instead
of 2K+2.
"""

from __future__ import annotations

import logging
from typing import Any

from inspect_ai.model import Model, ModelOutput
from inspect_ai.util import collect

from cmi_inspect.causal_locomo.prompts import memory_prompt, no_memory_prompt
from cmi_inspect.causal_locomo.protocol import Protocol, ProtocolName
from cmi_inspect.causal_locomo.strategies.base import (
    AnswerScorer,
    AnswerScorerFactory,
    MemoryNames,
    MemoryStrategy,
    MemoryTask,
    Pick,
    Selection,
)
from cmi_inspect.causal_locomo.strategies.cmi.config import (
    CMIArgs,
    CMIConfig,
    injected_scorer,
    settings,
)
from cmi_inspect.causal_locomo.strategies.cmi.diagnostics import STRATEGY, Candidate, CMIDiagnostics
from cmi_inspect.causal_locomo.strategies.cmi.effect import (
    LOGPROB_USER,
    GradedEffect,
    Measure,
    effect,
    forced_scorer,
)
from cmi_inspect.causal_locomo.strategies.cmi.explain import explain
from cmi_inspect.causal_locomo.strategies.cmi.features import (
    FeatureInputs,
    feature_rows,
    request_cosines,
)
from cmi_inspect.causal_locomo.strategies.cmi.history import History
from cmi_inspect.causal_locomo.strategies.cmi.perturb import perturb
from cmi_inspect.causal_locomo.strategies.cmi.profiles import PROFILES
from cmi_inspect.causal_locomo.strategies.cmi.proposal import propose
from cmi_inspect.causal_locomo.strategies.cmi.rules import Choices, check_before_run, decide
from cmi_inspect.causal_locomo.strategies.cmi.selector import RULE, CrossFitFile
from cmi_inspect.causal_locomo.view import Memory
from cmi_inspect.retrieval import Embedder, make_embedder

logger = logging.getLogger(__name__)
_warned: set[str] = set()


def warn_once(message: str) -> None:
    """One warning line per message and process: every sample of a run would repeat it."""
    if message not in _warned:
        _warned.add(message)
        logger.warning("cmi: %s", message)


class Answers:
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

    def get(self, prompt: str) -> str | None:
        """The answer to ``prompt``, None when it was not asked."""
        output = self.outputs.get(prompt)
        return output.completion if output is not None else None

    def score_of(self, text: str) -> float:
        """The score of an answer given to one of the prompts."""
        return next(self.scores[p] for p, o in self.outputs.items() if o.completion == text)


class Prompts:
    """The sample's intervention prompts: no memory, and each candidate with and perturbed."""

    def __init__(self, request: str, memories: dict[str, Memory]) -> None:
        self.none = no_memory_prompt(request)
        self.with_memory = {k: memory_prompt(request, [m.line()]) for k, m in memories.items()}
        self.perturbation: dict[str, str] = {}
        self.perturbed: dict[str, str] = {}
        for key, memory in memories.items():
            self.perturbation[key], copy = perturb(memory)
            self.perturbed[key] = memory_prompt(request, [copy.line()])


class CMI(MemoryStrategy):
    """Causal Memory Intervention: keep memories that improve the answer, stably.

    What it does unless told otherwise follows the protocol's profile and its preset
    (``strategies.cmi.config``): the ``rule`` (thresholds and a risk filter; paper's) or
    the ``learned`` selector (blind's). Its ``-S`` arguments are ``CMIArgs``'s fields.
    """

    name = STRATEGY
    Args = CMIArgs

    def __init__(self, embedder: Embedder | None = None, config: CMIConfig | None = None) -> None:
        """``embedder`` None: the protocol profile's (``Profile.embedder``), made on first use."""
        self.given_embedder = embedder
        self.named_embedders: dict[str, Embedder] = {}
        self.config = config or CMIConfig()

    @classmethod
    def from_args(cls, args: CMIArgs) -> CMI:
        config = CMIConfig(**args.model_dump(exclude={"embedder"}))
        return cls(make_embedder(args.embedder) if args.embedder else None, config)

    def answer_scorer(self) -> AnswerScorerFactory:
        """The named intervention scorer's (the gold one reads the sample's answer key),
        else each sample's protocol's."""
        return injected_scorer(self.config.intervention)

    def embedder(self, protocol: ProtocolName) -> Embedder:
        """The given embedder, else the protocol's (``config.settings``)."""
        if self.given_embedder is not None:
            return self.given_embedder
        return self.embedder_named(settings(self.config, protocol).embedder)

    def embedder_named(self, name: str) -> Embedder:
        """An embedder by name, the proposal's when it is that one (each made once)."""
        proposal = self.given_embedder
        if proposal is not None and proposal.name == name:
            return proposal
        if name not in self.named_embedders:
            self.named_embedders[name] = make_embedder(name)
        return self.named_embedders[name]

    async def select(self, task: MemoryTask) -> Selection:
        choices = Choices.of(self.config, task.protocol, task.conversation)
        choices = choices.for_model(str(task.model))
        if choices.selector_note:
            warn_once(choices.selector_note)
        cfg = choices.config
        choices.refuse_label_reading()
        embedder = self.embedder(task.protocol)
        proposed = await propose(task, embedder, choices.profile.proposal, cfg.k)
        memories = {m.key: m for m, _ in proposed}
        history = History.of(task, choices.reads_history, [m.content for m in memories.values()])
        answers = Answers(task.model, choices.scorer.make(task, history))
        prompts = Prompts(task.request, memories)
        candidates = [
            Candidate(
                key=m.key, rank=i + 1, proposal_score=s, perturbation=prompts.perturbation[m.key]
            )
            for i, (m, s) in enumerate(proposed)
        ]
        s_no = await self._intervene(candidates, prompts, answers, choices)
        for c in candidates:
            c.memory_support = history.support(memories[c.key].content)
            c.support_with = history.support(c.answer_with)
            c.support_perturbed = history.support(c.answer_perturbed)
        await choices.risk.measure(candidates, memories, embedder, cfg.conflicts, history)
        answer_no_memory = answers.get(prompts.none)
        support_no_memory = history.support(answer_no_memory)
        if choices.selector is not None:
            inputs = FeatureInputs(
                request=task.request,
                candidates=candidates,
                texts={k: m.content for k, m in memories.items()},
                bank=[m.content for m in task.memories],
                cosines=await request_cosines(
                    self.embedder_named(choices.selector.embedder),
                    task.request,
                    {k: m.content for k, m in memories.items()},
                ),
                answer_no_memory=answer_no_memory,
                support_no_memory=support_no_memory,
            )
            rows = feature_rows(inputs, choices.selector.features)
            for c, row in zip(candidates, rows, strict=True):
                c.features, c.probability = row, round(choices.selector.probability(row), 6)
        kept = self._decide(candidates, memories, choices)

        prompt = memory_prompt(task.request, [memories[c.key].line() for c in kept])
        diagnostics = CMIDiagnostics(
            config=cfg.model_dump(),
            embedder=embedder.name,
            intervention=choices.scorer.name,
            effect=choices.effect.name,
            budget=choices.budget,
            risk_filter=choices.risk.name,
            selector=choices.selector.name if choices.selector else RULE,
            selector_note=choices.selector_note,
            proposal=choices.profile.proposal.name,
            evidence=history.log(),
            support_no_memory=support_no_memory,
            answer_no_memory=answer_no_memory,
            s_no=s_no,
            candidates=candidates,
            model_calls=len(answers.outputs),
            final_answer_reused=prompt in answers.outputs,
        )
        return Selection(
            picks=[Pick(c.key, c.probability if c.features else c.utility) for c in kept],
            prompt=prompt,
            details=diagnostics,
            output=answers.outputs.get(prompt),
            ranking=[m.key for m, _ in proposed],  # the proposal's, which F1@k reads
        )

    async def _intervene(
        self, candidates: list[Candidate], prompts: Prompts, answers: Answers, choices: Choices
    ) -> float | None:
        """Ask for the answers the ablation reads, record each candidate's utility and
        stability, and return the no-memory answer's score (None: not asked for)."""
        cfg, ablation = choices.config, choices.ablation
        eager_pert = ablation.asks_perturbed and not cfg.lazy_perturb
        await answers.run(
            [
                *([prompts.none] if ablation.asks_no_memory else []),
                *(prompts.with_memory.values() if ablation.asks_with else []),
                *(prompts.perturbed.values() if eager_pert else []),
            ]
        )
        s_no = answers.scores.get(prompts.none)
        if ablation.asks_with:
            for c in candidates:
                c.answer_with = answers.text(prompts.with_memory[c.key])
                c.s_with = answers.scores[prompts.with_memory[c.key]]
                c.utility = c.s_with - (s_no or 0.0)
        if ablation.asks_perturbed:
            await self._perturbed(candidates, prompts, answers, cfg)
        if ablation.asks_with and choices.effect.measure and candidates:
            await self._graded(candidates, prompts, answers, choices.effect.measure)
        for c in candidates:
            if ablation.no_memory_as_perturbed:
                # the no-memory score under the effect that ran
                c.s_pert, c.stability = (c.s_with or 0.0) - (c.utility or 0.0), c.utility
            if ablation.skipped:
                c.perturbed_skipped = ablation.skipped
        return s_no

    async def _graded(
        self, candidates: list[Candidate], prompts: Prompts, answers: Answers, measure: Measure
    ) -> None:
        """Replace the candidates' answer scores by the effect's (``graded``: each context's
        expected answer score under the model's likelihood of the candidate's answers there;
        ``logprob``: the with-memory answer's log-probability there), for all of them or
        none: one effect's numbers are never ranked against the other's. A model that
        reports no log-probabilities for the first is not asked again."""
        first, *rest = candidates
        effects = [await self._effect_of(first, prompts, answers, measure)]
        if effects[0].graded:
            effects += await collect(*(self._effect_of(c, prompts, answers, measure) for c in rest))
        for c, e in zip(candidates, effects, strict=False):
            c.effect = e
        if len(effects) < len(candidates) or not all(e.graded for e in effects):
            return  # the answer effect stands for every candidate
        for c, e in zip(candidates, effects, strict=True):
            expected = {x.context: x.expected for x in e.contexts}
            c.s_with = expected["with"]
            c.utility = c.s_with - expected["none"]
            if "perturbed" in expected:
                c.s_pert = expected["perturbed"]
                c.stability = c.s_with - c.s_pert

    async def _effect_of(
        self, c: Candidate, prompts: Prompts, answers: Answers, measure: Measure
    ) -> GradedEffect:
        """The candidate's answers' likelihoods in each of its contexts."""
        contexts = {"none": prompts.none, "with": prompts.with_memory[c.key]}
        if c.answer_perturbed is not None:
            contexts["perturbed"] = prompts.perturbed[c.key]
        answered = {name: answers.text(p) for name, p in contexts.items()}
        return await measure(answers.model, contexts, answered, answers.score_of)

    def _decide(
        self, candidates: list[Candidate], memories: dict[str, Memory], choices: Choices
    ) -> list[Candidate]:
        """Record each candidate's verdict (the rule, then the risk filter, then the budget)
        and return those kept, in prompt order."""
        by_key = {c.key: c for c in candidates}
        rejections = {
            c.key: choices.rejection(c, memories[c.key].label)
            or choices.risk.verdict(c, memories[c.key], by_key)
            for c in candidates
        }
        decision = decide(candidates, rejections, choices.prefer, choices.budget)
        for c in candidates:
            c.reason, c.selected = decision.reasons[c.key], c.key in decision.kept
        return [by_key[k] for k in decision.kept]

    async def _perturbed(
        self, candidates: list[Candidate], prompts: Prompts, answers: Answers, cfg: CMIConfig
    ) -> None:
        """Ask for the perturbed answers still needed, and score each candidate's stability."""
        needed = []
        for c in candidates:
            assert cfg.tau_u is not None  # resolved
            if cfg.lazy_perturb and (c.utility or 0.0) <= cfg.tau_u:
                c.perturbed_skipped = "lazy_perturb: utility already rules it out"
            else:
                needed.append(c)
        await answers.run([prompts.perturbed[c.key] for c in needed])
        for c in needed:
            c.answer_perturbed = answers.text(prompts.perturbed[c.key])
            c.s_pert = answers.scores[prompts.perturbed[c.key]]
            c.stability = (c.s_with or 0.0) - c.s_pert

    def check_protocol(self, protocol: Protocol) -> None:
        """The ablation, the intervention scorer and the risk filter (each sample checks
        them again: ``Choices.refuse_label_reading``)."""
        check_before_run(self.config, protocol)

    def check_model(self, model: Model) -> None:
        """A cross-fitted selector fitted on another model's answers, and an effect that
        reads forced decoding on a model without it, refused before the run (each sample
        would be refused: ``Choices.for_model``)."""
        if self.config.effect is not None and effect(self.config.effect).needs_forced:
            forced_scorer(model, LOGPROB_USER)
        for protocol in PROFILES:
            found = settings(self.config, protocol).selector
            if isinstance(found, CrossFitFile):
                found.check_model(str(model))

    @classmethod
    def explain(cls, details: dict[str, Any], names: MemoryNames) -> str:
        return explain(details, names)
