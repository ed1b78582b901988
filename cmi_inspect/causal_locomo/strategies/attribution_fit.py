"""The attribution baselines' threshold chosen by cross-fitting (``cmi-inspect fit-threshold``).

From logged runs of ``context_cite`` or ``leave_one_in`` (each candidate's attribution is in
its record), each fold holds out one conversation and chooses, on the others only, the
threshold of ``GRID`` whose replayed selection (the candidates attributed above it) has the
highest mean useful F1 less confuser adoption, the lowest on a tie. A run given the file
(``-S threshold=FILE``) keeps, for a sample, the candidates above its conversation's fold's
threshold, so no sample's threshold was chosen on its own conversation's labels.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inspect_ai.log import EvalSample
from pydantic import BaseModel, ConfigDict, ValidationError

from cmi_inspect.causal_locomo.dataset import scored_record
from cmi_inspect.causal_locomo.measures import selection_metrics
from cmi_inspect.causal_locomo.selection import MemorySelection
from cmi_inspect.causal_locomo.strategies.cmi import fitting_gate as gate
from cmi_inspect.causal_locomo.view import key_to_memory_id
from cmi_inspect.errors import UserError
from cmi_inspect.eval_logs import log_files, read_log

GRID = (0.0, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0)
"""Thresholds tried, in nats of the attributed answer's log-probability."""
STRATEGIES = ("context_cite", "leave_one_in")


class ThresholdFold(BaseModel, frozen=True):
    held_out: str
    threshold: float
    objective: float
    """Mean useful F1 less confuser adoption at that threshold on the other conversations."""


class ThresholdFile(BaseModel, frozen=True):
    """One threshold per held-out conversation, for one attribution baseline."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    strategy: str
    grid: list[float]
    folds: list[ThresholdFold]
    fitted_on: dict[str, Any] = {}

    def for_conversation(self, conversation: str | None, name: str) -> float:
        """The threshold of the fold that held ``conversation`` out, or one line."""
        for fold in self.folds:
            if fold.held_out == conversation:
                return fold.threshold
        held = ", ".join(f.held_out for f in self.folds)
        raise UserError(
            f"threshold file {name}: no fold holds out conversation {conversation} (its folds "
            f"hold out {held}); a sample's threshold comes only from the fold that never "
            "read its conversation."
        )

    def save(self, path: Path) -> None:
        path.write_text(json.dumps(self.model_dump(), indent=2) + "\n", encoding="utf-8")


def load_thresholds(path: str, strategy: str) -> ThresholdFile:
    """A threshold file for ``strategy``, or one line naming what is wrong with it."""
    try:
        found = ThresholdFile.model_validate_json(Path(path).read_text(encoding="utf-8"))
    except OSError as ex:
        raise UserError(f"-S threshold={path}: {ex.strerror or ex}.") from None
    except ValidationError as ex:
        error = ex.errors()[0]
        where = ".".join(str(p) for p in error["loc"]) or "the file"
        raise UserError(f"-S threshold={path}: {where}: {error['msg']}.") from None
    if found.strategy != strategy:
        raise UserError(f"-S threshold={path} was fitted for {found.strategy}, not {strategy}.")
    return found


@dataclass(frozen=True)
class Replayed:
    """A logged sample's candidates, their attributions and what keeping some would score."""

    conversation: str
    attributions: list[float]
    memory_ids: list[str]
    gold: list[str]
    bad: list[str]
    harmful: set[str]

    def objective(self, threshold: float) -> float:
        kept = [m for m, a in zip(self.memory_ids, self.attributions, strict=True) if a > threshold]
        metrics = selection_metrics(kept, self.gold, self.bad, self.harmful)
        return metrics["useful_f1"] - metrics["poison_adoption"]


def replayed(sample: EvalSample, strategy: str) -> Replayed | None:
    """A logged sample of ``strategy`` as a replay (None: another strategy, or unscored)."""
    record = sample.store_as(MemorySelection)
    if record.strategy != strategy or not sample.scores:
        return None
    candidates = (record.details or {}).get("candidates", [])
    meta = scored_record(sample)
    ids = key_to_memory_id(meta.example_id, meta.memory_bank, meta.protocol)
    return Replayed(
        conversation=gate.sample_conversation(sample),
        attributions=[float(c["attribution"]) for c in candidates],
        memory_ids=[ids[c["key"]] for c in candidates],
        gold=meta.gold_memory_ids,
        bad=meta.bad_memory_ids,
        harmful=meta.harmful_ids,
    )


def choose(samples: Sequence[Replayed], grid: Sequence[float] = GRID) -> tuple[float, float]:
    """The threshold with the highest mean objective over ``samples`` (the lowest on a tie)."""
    scored = [(statistics.fmean(s.objective(t) for s in samples), -t) for t in grid]
    best, negative = max(scored)
    return -negative, best


def fit_thresholds(log_dir: str, strategy: str) -> ThresholdFile:
    """One fold per conversation of the logged runs of ``strategy`` in ``log_dir``."""
    if strategy not in STRATEGIES:
        raise UserError(f"--strategy must be one of {', '.join(STRATEGIES)}, got {strategy!r}.")
    samples = [
        found
        for path in log_files(log_dir)
        for sample in read_log(path).samples or []
        if (found := replayed(sample, strategy)) is not None
    ]
    conversations = sorted({s.conversation for s in samples})
    if len(conversations) < 2:
        raise UserError(
            f"{log_dir}: cross-fitting needs scored {strategy} samples of two conversations "
            f"or more (found {len(conversations)})."
        )
    folds = []
    for held in conversations:
        threshold, objective = choose(gate.readable(samples, held))
        folds.append(ThresholdFold(held_out=held, threshold=threshold, objective=objective))
    fitted = {"log_dir": log_dir, "samples": len(samples), "conversations": conversations}
    return ThresholdFile(strategy=strategy, grid=list(GRID), folds=folds, fitted_on=fitted)
