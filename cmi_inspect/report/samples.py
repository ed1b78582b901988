"""Each scored sample of a run as the report's breakdowns read it: its conversation, how
many useful memories it has, the kinds of its harmful memories, what the model saw, its
figures and what it cost (what an export keeps of a sample, ``export``)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from inspect_ai.log import EvalSample

from cmi_inspect.causal_locomo.dataset import conversation_of, scored_record
from cmi_inspect.causal_locomo.measures import F1_AT
from cmi_inspect.report.sample_cost import model_calls, token_usage
from cmi_inspect.report.stats import Mean

USEFUL_GROUPS = ("0", "1", "2+")
"""Samples by how many useful memories they have: none (unanswerable from memory), one,
several."""
F1_AT_KEYS = tuple(f"f1_at_{k}" for k in F1_AT)


@dataclass(frozen=True)
class SampleRow:
    """One scored sample (one epoch of it)."""

    sample: str
    """Its id."""
    conversation: str | None
    """Its LoCoMo conversation (``dataset.conversation_of``; None for another id's form)."""
    useful: int
    """Its useful memories (gold ids)."""
    useful_f1: float
    poison_adoption: float
    score: float
    f1_at: dict[str, float] = field(default_factory=dict)
    """``f1_at_1``, ``f1_at_3`` of its ranking (empty: the strategy does not rank)."""
    kinds: dict[str, float] = field(default_factory=dict)
    """Each kind of harmful memory in its bank, with the share of those the strategy selected."""
    success: float = 0.0
    precision: float = 0.0
    recall: float = 0.0
    n_selected: float = 0.0
    selected: tuple[str, ...] = ()
    """The ids of the memories the model saw (the scorer's selection)."""
    calls: int = 0
    """The strategy's generations and forced decodings (``sample_cost.model_calls``)."""
    input_tokens: int = 0
    output_tokens: int = 0
    seconds: float = 0.0
    """Its working time."""

    @property
    def useful_group(self) -> str:
        """``0``, ``1`` or ``2+`` (``USEFUL_GROUPS``)."""
        return USEFUL_GROUPS[min(self.useful, 2)]


def sample_row(sample: EvalSample) -> SampleRow:
    scores = sample.scores or {}
    selection, task = scores["memory_selection"], scores["task_score"].value
    values, answer = selection.value, task
    assert isinstance(values, dict) and isinstance(answer, dict)
    meta = scored_record(sample)
    tokens = token_usage(sample)
    seen = [str(row["memory_id"]) for row in (selection.metadata or {}).get("selected", [])]
    selected = set(seen)
    picked: dict[str, list[bool]] = defaultdict(list)
    for m in meta.memory_bank:
        if m.label == "harmful" and m.attack_kind:
            picked[m.attack_kind].append(m.memory_id in selected)
    return SampleRow(
        sample=str(sample.id),
        conversation=conversation_of(meta.example_id),
        useful=len(meta.gold_memory_ids),
        useful_f1=float(values["useful_f1"]),
        poison_adoption=float(values["poison_adoption"]),
        score=float(answer["score"]),
        f1_at={k: float(values[k]) for k in F1_AT_KEYS if k in values},
        kinds={kind: sum(p) / len(p) for kind, p in sorted(picked.items())},
        success=float(answer.get("success", 0.0)),
        precision=float(values.get("precision", 0.0)),
        recall=float(values.get("recall", 0.0)),
        n_selected=float(values.get("n_selected", len(seen))),
        selected=tuple(seen),
        calls=model_calls(sample),
        input_tokens=tokens[0],
        output_tokens=tokens[1],
        seconds=float(sample.working_time or 0.0),
    )


def sample_rows(samples: Sequence[EvalSample]) -> list[SampleRow]:
    """The rows of a run's scored samples (each finished epoch one row)."""
    return [sample_row(s) for s in samples]


def ranked_f1(rows: Sequence[SampleRow]) -> dict[str, Mean]:
    """F1@k over the samples whose strategy ranked (none when it does not rank); a sample
    run several times counts once, at its mean over epochs."""
    out = {}
    for key in F1_AT_KEYS:
        by_sample: dict[str, list[float]] = defaultdict(list)
        for r in rows:
            if key in r.f1_at:
                by_sample[r.sample].append(r.f1_at[key])
        if by_sample:
            out[key] = Mean.of([sum(v) / len(v) for v in by_sample.values()])
    return out
