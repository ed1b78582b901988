"""The paper's hybrid task score and the memory-selection metrics as Inspect scorers.

Both are pure functions of the scored sample: its record (``CausalLocomoMetadata``, its
metadata) and its target (the gold answers), with the selection its strategy solver recorded
in its store and the model calls its transcript holds. Nothing is read from the data file
and nothing is written, so ``inspect score`` re-scores a log anywhere to the same figures.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from inspect_ai.log import transcript
from inspect_ai.model import Model, model_roles
from inspect_ai.scorer import (
    Metric,
    SampleScore,
    Score,
    Scorer,
    Target,
    grouped,
    mean,
    metric,
    scorer,
    stderr,
)
from inspect_ai.solver import TaskState

from cmi_inspect.causal_locomo.answer_rules import answer_rule
from cmi_inspect.causal_locomo.data import ScoringCriteria
from cmi_inspect.causal_locomo.dataset import CausalLocomoMetadata, shown_texts
from cmi_inspect.causal_locomo.hedge import Hedge, hedge
from cmi_inspect.causal_locomo.judge import JUDGE_PROMPT_VERSION, Verdict, answers, judge_answer
from cmi_inspect.causal_locomo.measures import (
    SELECTION_KEYS,
    SUCCESS_THRESHOLD,
    deterministic_score,
    f1_at_k,
    hybrid_score,
    selection_metrics,
)
from cmi_inspect.causal_locomo.negation import Negation, negation
from cmi_inspect.causal_locomo.selection import Exposure, MemorySelection, examine, fill
from cmi_inspect.causal_locomo.view import key_to_memory_id
from cmi_inspect.errors import choose

SCORINGS = ("paper", "strict")
"""``-T scoring=``: how success is counted (the default is the protocol's, ``Protocol.scoring``)."""


def criteria_of(meta: CausalLocomoMetadata, target: Target) -> ScoringCriteria:
    """The record's scoring criteria with the target's answers: the expected answer first,
    the rest its aliases (``inspect score`` with an edited target scores against it)."""
    answers = list(target.target) or meta.target
    return meta.scoring_criteria.model_copy(
        update={"expected_answer": answers[0], "answer_aliases": answers[1:]}
    )


def exposure(state: TaskState, meta: CausalLocomoMetadata) -> Exposure:
    """The sample's declared and exposed picks, once its selection and answer are checked
    (``selection.examine``: a sample whose record or answer fails is not scored)."""
    record = state.store_as(MemorySelection)
    shown = shown_texts(meta)
    return examine(record, transcript().events, state.output.completion, shown, state.input_text)


@metric
def count() -> Metric:
    """How many samples have a true (non-zero) value: judge errors, say."""

    def compute(scores: list[SampleScore]) -> float:
        return float(sum(1 for s in scores if s.score.as_float()))

    return compute


@dataclass(frozen=True)
class AnswerScore:
    """An answer's task score and what it was made of."""

    total: float
    """0.7 x deterministic + 0.3 x judge."""
    det: float
    verdict: Verdict
    hedged: Hedge
    negated: Negation
    success: bool


async def answer_score(
    response: str,
    request: str,
    gold_behavior: str,
    criteria: ScoringCriteria,
    scoring: str = "paper",
    grader: Model | list[Model] | None = None,
) -> AnswerScore:
    """The task score of one answer (``task_score``'s, and a replay's of a logged answer):
    the judge is ``grader``, else the offline alias match, which credits no hedge and no
    denial of the answer under either scoring. Under ``strict`` a denial earns nothing from
    the rules either, and neither a hedge nor a denial is a success. An answer that abstains
    (``answer_rules``) names no value to hedge on or deny."""
    reads = answer_rule(criteria).names_a_value
    hedged = (
        hedge(response, criteria.expected_answer, request, criteria.answer_aliases)
        if reads
        else Hedge(False)
    )
    negated = negation(response, answers(criteria), request) if reads else Negation(False)
    strict = scoring == "strict"
    det = 0.0 if strict and negated.negated else deterministic_score(response, criteria)
    verdict = await judge_answer(
        grader, request, gold_behavior, criteria, response, hedged, negated
    )
    total = 0.0 if strict and negated.negated else hybrid_score(det, verdict.score)
    refused = strict and (hedged.hedged or negated.negated)
    return AnswerScore(
        total, det, verdict, hedged, negated, total >= SUCCESS_THRESHOLD and not refused
    )


CLUSTER = "conversation"
"""The sample metadata key the standard errors are clustered by (``stderr(cluster=)``):
questions on one conversation share its memories, so they are not independent."""


# Metrics as a dict, not a list holding a dict: Inspect would log an empty entry for the
# list, first, and View's log list, `inspect log list` and evals_df() read the first one
@scorer(
    metrics={
        "score": [mean(), stderr(cluster=CLUSTER), grouped(mean(), "task_family", all=False)],
        "deterministic": [mean()],
        "judge": [mean()],
        "success": [mean(), stderr(cluster=CLUSTER)],
        "judge_error": [count()],
        "hedged": [mean()],
        "negated": [mean()],
    }
)
def task_score(scoring: str = "paper") -> Scorer:
    """0.7 x deterministic rules + 0.3 x judge; success when the score is at least 0.7.

    The judge is the ``grader`` model role when one is given, else the
    deterministic alias-match fallback; the score's metadata names which. A
    grader reply that is no readable verdict scores 0 and is counted in the
    ``judge_error`` metric, so a broken judge shows at a glance. ``hedged`` marks an
    answer that lists several values of the kind asked for or offers the answer only in
    doubt (``hedge``); ``negated`` one that denies the expected answer it names
    (``negation``). The alias judge, which stands in for an LLM judge, credits neither under
    either scoring. Under ``scoring="strict"`` neither is a success whatever its score, and
    a negated answer scores 0 (the rules' share too); under ``paper`` the paper's rules
    stand.

    Args:
        scoring: ``paper`` (success as the paper counts it) or ``strict`` (a hedge or a
            negated answer is never a success).
    """
    choose("scoring", scoring, SCORINGS)

    async def score(state: TaskState, target: Target) -> Score:
        meta = state.metadata_as(CausalLocomoMetadata)
        exposure(state, meta)  # an answer no recorded call gave is not scored
        response = state.output.completion
        criteria = criteria_of(meta, target)
        scored = await answer_score(
            response,
            state.input_text,
            meta.gold_behavior,
            criteria,
            scoring,
            model_roles().get("grader"),
        )
        det, verdict, hedged, negated = scored.det, scored.verdict, scored.hedged, scored.negated
        total, success = scored.total, scored.success
        explanation = (
            f"deterministic {det:.3f}, judge {verdict.score:.3f} ({verdict.judge}); "
            f"expected {criteria.expected_answer!r}"
        )
        if verdict.error:
            explanation += f"; judge verdict scored 0: {verdict.error}"
        if hedged.hedged:
            explanation += f"; {hedged.describe()}"
        if negated.negated:
            explanation += f"; {negated.describe()}"
        return Score(
            value={
                "score": total,
                "deterministic": det,
                "judge": verdict.score,
                "success": 1.0 if success else 0.0,
                "judge_error": 1.0 if verdict.error else 0.0,
                "hedged": 1.0 if hedged.hedged else 0.0,
                "negated": 1.0 if negated.negated else 0.0,
            },
            answer=response,
            explanation=explanation,
            metadata={
                "judge": verdict.judge,
                "judge_raw": verdict.raw,
                "judge_error": verdict.error,
                "judge_prompt_version": JUDGE_PROMPT_VERSION,
                "scoring": scoring,
                "hedge_values": hedged.values,
                "negated_clauses": negated.clauses,
            },
        )

    return score


def _selection_table(rows: list[dict[str, Any]]) -> str:
    lines = ["| rank | memory | label | score |", "| --- | --- | --- | --- |"]
    for r in rows:
        score = "" if r["score"] is None else f"{r['score']:.3f}"
        lines.append(f"| {r['rank']} | {r['memory_id']} | {r['label']} | {score} |")
    return "\n".join(lines)


def _differences(seen: Exposure, names: dict[str, str]) -> list[str]:
    """The explanation's lines on picks declared and exposed apart (none when they agree,
    or when the declared ones stand for derived text the model read)."""
    lines = []
    if seen.undeclared:
        lines.append(
            "Exposed but not declared (the prompt held their text; scored as selected): "
            + ", ".join(names[k] for k in seen.undeclared)
        )
    if seen.unshown and seen.exposed:
        lines.append(
            "Declared but not in the prompt as shown (derived text or bookkeeping; scored as "
            "selected): " + ", ".join(names[k] for k in seen.unshown)
        )
    return lines


@scorer(
    metrics={
        **{key: [mean(), stderr(cluster=CLUSTER)] for key in SELECTION_KEYS},
        "undeclared": [count()],
    }
)
def memory_selection() -> Scorer:
    """Recall, precision, useful F1, poison adoption, bad rejection and count of the selection.

    A strategy that ranks the bank (``MemorySelection.ranking``) also gets ``f1_at_1`` and
    ``f1_at_3`` in each sample's value, the useful F1 of its ranking's top k
    (``measures.f1_at_k``); they are not run metrics, since a strategy that does not rank
    has none (``cmi-inspect report`` averages them).

    Labels are joined here, after the strategy ran: the strategy's keys are mapped back to
    memory ids and compared with the record's labels. The selection is what the strategy
    declared and what its prompt exposed (``exposure``); ``undeclared`` counts the samples
    whose prompt held memories the strategy did not declare. Under ``-T bank_size`` the
    record's bank is the drawn one, and a useful memory the draw left out counts for no
    recall; the score's metadata records how many useful and harmful memories it left out.
    """

    async def score(state: TaskState, target: Target) -> Score:
        meta = state.metadata_as(CausalLocomoMetadata)
        seen = exposure(state, meta)
        record = state.store_as(MemorySelection)
        ids = key_to_memory_id(meta.example_id, meta.memory_bank, meta.protocol)
        labels = meta.labels
        given = dict(zip(record.selected, record.scores, strict=True))
        selected = [ids[k] for k in seen.scored]
        rows = [
            {"rank": i + 1, "memory_id": ids[k], "label": labels[ids[k]], "score": given.get(k)}
            for i, k in enumerate(seen.scored)
        ]
        explanation = f"{record.strategy}: {len(selected)} selected\n\n{_selection_table(rows)}"
        names = {key: f"{m} ({labels[m]})" for key, m in ids.items()}
        explanation += "".join(f"\n\n{line}" for line in _differences(seen, names))
        if record.explanation:
            explanation += "\n\n" + fill(record.explanation, names)
        if record.guard is not None and record.guard.dropped:
            explanation += f"\n\nThe {record.guard.guard} guard dropped:\n\n" + "\n".join(
                f"- {names[key]}: {fill(why, names)}" for key, why in record.guard.dropped.items()
            )
        metrics = selection_metrics(
            selected, meta.gold_memory_ids, meta.bad_memory_ids, meta.harmful_ids
        )
        if record.ranking is not None:  # F1@k: only a strategy that ranks has it
            metrics |= f1_at_k([ids[k] for k in record.ranking], meta.gold_memory_ids)
        return Score(
            value={**metrics, "undeclared": float(len(seen.undeclared))},
            answer=", ".join(selected),
            explanation=explanation,
            metadata={
                "strategy": record.strategy,
                "selected": rows,
                "declared": [ids[k] for k in seen.declared],
                "exposed": [ids[k] for k in seen.exposed],
                "undeclared": [ids[k] for k in seen.undeclared],
                **bank_draw(meta),
            },
        )

    return score


def bank_draw(meta: CausalLocomoMetadata) -> dict[str, Any]:
    """A drawn bank's size and what it left out, for the score's metadata (none: whole)."""
    if meta.bank_size is None:
        return {}
    return {"bank": {"bank_size": meta.bank_size, "useful_lost": meta.useful_lost,
                     "harmful_lost": meta.harmful_lost}}  # fmt: skip
