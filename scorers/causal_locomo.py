"""The paper's hybrid task score and the memory-selection metrics as Inspect scorers."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from inspect_ai.model import get_model, model_roles
from inspect_ai.scorer import (
    Metric,
    SampleScore,
    Score,
    Scorer,
    Target,
    mean,
    metric,
    scorer,
    stderr,
)
from inspect_ai.solver import TaskState

from cmi_inspect.dataset import CausalLocomoMetadata
from cmi_inspect.judge import (
    JUDGE_PROMPT_VERSION,
    alias_verdict,
    judge_prompt,
    llm_verdict,
)
from cmi_inspect.memory import key_to_memory_id
from cmi_inspect.scoring import (
    SUCCESS_THRESHOLD,
    deterministic_score,
    selection_metrics,
)
from cmi_inspect.scoring import task_score as hybrid_score
from cmi_inspect.strategy import MemorySelection

SELECTION_KEYS = (
    "recall",
    "precision",
    "useful_f1",
    "poison_adoption",
    "bad_rejection",
    "n_selected",
)


@metric
def family_score() -> Metric:
    """Mean task score per task family (the paper's Table 2)."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        groups: dict[str, list[float]] = defaultdict(list)
        for s in scores:
            family = (s.sample_metadata or {}).get("task_family", "unknown")
            value = s.score.value
            assert isinstance(value, dict)
            groups[family].append(float(value["score"]))
        return {family: sum(v) / len(v) for family, v in sorted(groups.items())}

    return compute


@scorer(
    metrics=[
        {
            "score": [mean(), stderr()],
            "deterministic": [mean()],
            "judge": [mean()],
            "success": [mean(), stderr()],
        },
        family_score(),
    ]
)
def task_score() -> Scorer:
    """0.7 x deterministic rules + 0.3 x judge; success when the score is at least 0.7.

    The judge is the ``grader`` model role when one is given, else the
    deterministic alias-match fallback; the score's metadata names which.
    """

    async def score(state: TaskState, target: Target) -> Score:
        meta = state.metadata_as(CausalLocomoMetadata)
        response = state.output.completion
        det = deterministic_score(response, meta.scoring_criteria)
        if "grader" in model_roles():
            prompt = judge_prompt(
                state.input_text, meta.gold_behavior, meta.scoring_criteria, response
            )
            verdict = await llm_verdict(get_model(role="grader"), prompt)
        else:
            verdict = alias_verdict(response, meta.scoring_criteria)
        total = hybrid_score(det, verdict.score)
        explanation = f"deterministic {det:.3f}, judge {verdict.score:.3f} ({verdict.judge})"
        if verdict.error:
            explanation += f"; judge verdict scored 0: {verdict.error}"
        return Score(
            value={
                "score": total,
                "deterministic": det,
                "judge": verdict.score,
                "success": 1.0 if total >= SUCCESS_THRESHOLD else 0.0,
            },
            answer=response,
            explanation=explanation,
            metadata={
                "judge": verdict.judge,
                "judge_raw": verdict.raw,
                "judge_error": verdict.error,
                "judge_prompt_version": JUDGE_PROMPT_VERSION,
            },
        )

    return score


def _selection_table(rows: list[dict[str, Any]]) -> str:
    lines = ["| rank | memory | label | score |", "| --- | --- | --- | --- |"]
    for r in rows:
        score = "" if r["score"] is None else f"{r['score']:.3f}"
        lines.append(f"| {r['rank']} | {r['memory_id']} | {r['label']} | {score} |")
    return "\n".join(lines)


def _cmi_table(details: dict[str, Any], ids: dict[str, str], labels: dict[str, str]) -> str:
    lines = [
        f"CMI: s_no = {details['s_no']:.3f}; {details['model_calls']} intervention calls; "
        f"final answer reused: {details['final_answer_reused']}",
        "",
        "| # | memory | label | s_with | s_pert | utility | stability | decision |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]

    def fmt(v: float | None) -> str:
        return "-" if v is None else f"{v:+.3f}"

    def pert(c: dict[str, Any]) -> str:
        skipped = c.get("perturbed_skipped")
        return f"{fmt(c['s_pert'])} ({skipped})" if skipped else fmt(c["s_pert"])

    for c in details["candidates"]:
        memory_id = ids.get(c["key"], c["key"])
        lines.append(
            f"| {c['rank']} | {memory_id} | {labels.get(memory_id, '?')} | {fmt(c['s_with'])} "
            f"| {pert(c)} | {fmt(c['utility'])} | {fmt(c['stability'])} | {c['reason']} |"
        )
    return "\n".join(lines)


@scorer(metrics=[{key: [mean(), stderr()] for key in SELECTION_KEYS}])
def memory_selection() -> Scorer:
    """Recall, precision, useful F1, poison adoption, bad rejection and count of the selection.

    Labels are joined here, after the strategy ran: the strategy's keys are
    mapped back to memory ids and compared with the sample's answer key.
    """

    async def score(state: TaskState, target: Target) -> Score:
        meta = state.metadata_as(CausalLocomoMetadata)
        record = state.store_as(MemorySelection)
        ids = key_to_memory_id(meta.example_id, meta.memory_bank, meta.protocol)
        labels = {m["memory_id"]: m["label"] for m in meta.memory_bank}
        selected = [ids[k] for k in record.selected]
        rows = [
            {"rank": i + 1, "memory_id": m, "label": labels[m], "score": s}
            for i, (m, s) in enumerate(zip(selected, record.scores, strict=True))
        ]
        explanation = f"{record.strategy}: {len(selected)} selected\n\n{_selection_table(rows)}"
        if record.strategy == "cmi":
            explanation += "\n\n" + _cmi_table(record.details, ids, labels)
        return Score(
            value=selection_metrics(selected, meta.record()),
            answer=", ".join(selected),
            explanation=explanation,
            metadata={"strategy": record.strategy, "selected": rows, "details": record.details},
        )

    return score
