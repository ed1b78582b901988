"""The paper's hybrid task score and the memory-selection metrics as Inspect scorers.

Both read the answer key from the sealed copy (``answer_key``), never from the sample: the
task hands them its data file, sha256 and protocol. A sample whose metadata or target no
longer match what the key says it carries fails, naming its strategy, instead of being
scored; each score records the data's and the example's sha256.
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

from cmi_inspect.causal_locomo.answer_key import (
    AnswerKeyError,
    ScoredExample,
    SealedExample,
    sealed_example,
)
from cmi_inspect.causal_locomo.answer_rules import answer_rule
from cmi_inspect.causal_locomo.data import ScoringCriteria
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
from cmi_inspect.causal_locomo.protocol import named_protocol
from cmi_inspect.causal_locomo.selection import Exposure, MemorySelection, examine, fill
from cmi_inspect.causal_locomo.view import key_to_memory_id
from cmi_inspect.errors import choose

SCORINGS = ("paper", "strict")
"""``-T scoring=``: how success is counted (the default is the protocol's, ``Protocol.scoring``)."""


def sealed(
    state: TaskState, data_file: str, data_sha256: str, protocol: str, bank_size: int | None
) -> SealedExample:
    """The sample's entry of the sealed key, once what the sample carries is checked against
    it; its store then holds the whole record, for the log (``ScoredExample``)."""
    shown = named_protocol(protocol).name
    example = sealed_example(data_file, data_sha256, str(state.sample_id), shown, bank_size)
    changed = example.changed(state.metadata, list(state.target.target))
    if changed:
        strategy = state.store_as(MemorySelection).strategy or "none recorded"
        raise AnswerKeyError(
            f"Sample {state.sample_id!r} carries a {', '.join(changed)} that the answer key "
            f"(sha256 {data_sha256[:12]}...) does not: it was changed while it ran (strategy "
            f"{strategy!r}), so it is not scored."
        )
    state.store_as(ScoredExample).record = example.metadata.model_dump(mode="json")
    return example


def exposure(state: TaskState, example: SealedExample) -> Exposure:
    """The sample's declared and exposed picks, once its selection and answer are checked
    (``selection.examine``: a sample whose record or answer fails is not scored)."""
    record = state.store_as(MemorySelection)
    return examine(
        record, transcript().events, state.output.completion, example.shown(), state.input_text
    )


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


# Metrics as a dict, not a list holding a dict: Inspect would log an empty entry for the
# list, first, and View's log list, `inspect log list` and evals_df() read the first one
@scorer(
    metrics={
        "score": [mean(), stderr(), grouped(mean(), "task_family", all=False)],
        "deterministic": [mean()],
        "judge": [mean()],
        "success": [mean(), stderr()],
        "judge_error": [count()],
        "hedged": [mean()],
        "negated": [mean()],
    }
)
def task_score(
    data_file: str,
    data_sha256: str,
    protocol: str,
    scoring: str = "paper",
    bank_size: int | None = None,
) -> Scorer:
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
        data_file: The data file the answer key is read from.
        data_sha256: Its content's sha256, as the task recorded it.
        protocol: The task's protocol.
        scoring: ``paper`` (success as the paper counts it) or ``strict`` (a hedge or a
            negated answer is never a success).
        bank_size: The task's ``-T bank_size`` (the key draws the same bank).
    """
    choose("scoring", scoring, SCORINGS)

    async def score(state: TaskState, target: Target) -> Score:
        example = sealed(state, data_file, data_sha256, protocol, bank_size)
        exposure(state, example)  # an answer no recorded call gave is not scored
        meta = example.metadata
        response = state.output.completion
        criteria = meta.scoring_criteria
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
                "answer_key": example.seal_record(),
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


@scorer(metrics={**{key: [mean(), stderr()] for key in SELECTION_KEYS}, "undeclared": [count()]})
def memory_selection(
    data_file: str, data_sha256: str, protocol: str, bank_size: int | None = None
) -> Scorer:
    """Recall, precision, useful F1, poison adoption, bad rejection and count of the selection.

    A strategy that ranks the bank (``MemorySelection.ranking``) also gets ``f1_at_1`` and
    ``f1_at_3`` in each sample's value, the useful F1 of its ranking's top k
    (``measures.f1_at_k``); they are not run metrics, since a strategy that does not rank
    has none (``cmi-inspect report`` averages them).

    Labels are joined here, after the strategy ran: the strategy's keys are
    mapped back to memory ids and compared with the sealed answer key. The selection is what
    the strategy declared and what its prompt exposed (``exposure``); ``undeclared`` counts
    the samples whose prompt held memories the strategy did not declare.

    Args:
        data_file: The data file the answer key is read from.
        data_sha256: Its content's sha256, as the task recorded it.
        protocol: The task's protocol.
        bank_size: The task's ``-T bank_size``: the key draws the same bank and the metrics
            read its labels (a useful memory the draw left out counts for no recall); the
            score's ``answer_key`` records how many useful and harmful memories it left out.
    """

    async def score(state: TaskState, target: Target) -> Score:
        example = sealed(state, data_file, data_sha256, protocol, bank_size)
        seen = exposure(state, example)
        meta = example.metadata
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
                "answer_key": example.seal_record(),
            },
        )

    return score
