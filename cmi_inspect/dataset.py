"""Causal-LoCoMo as an Inspect dataset: one sample per example."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from inspect_ai.dataset import MemoryDataset, Sample
from pydantic import BaseModel

from cmi_inspect.data import (
    TASK_FAMILIES,
    DataError,
    ExampleRecord,
    causal_locomo_path,
    load_records,
)
from cmi_inspect.memory import PROTOCOLS, Protocol


class CausalLocomoMetadata(BaseModel, frozen=True):
    """Everything solvers and scorers need; solvers read it only through a protocol view."""

    example_id: str
    protocol: Protocol
    task_family: str
    memory_bank: list[dict[str, Any]]
    past_sessions: list[dict[str, Any]]
    scoring_criteria: dict[str, Any]
    gold_behavior: str
    gold_memory_ids: list[str]
    bad_memory_ids: list[str]
    harmful_memory_ids: list[str]

    def record(self) -> dict[str, Any]:
        """The fields of the raw dataset line that the selection metrics read."""
        return {
            "memory_bank": self.memory_bank,
            "gold_memory_ids": self.gold_memory_ids,
            "bad_memory_ids": self.bad_memory_ids,
        }


def record_to_sample(record: ExampleRecord, protocol: Protocol) -> Sample:
    criteria = record.scoring_criteria
    target = list(dict.fromkeys([criteria.expected_answer, *criteria.answer_aliases]))
    bank = [m.model_dump(mode="json") for m in record.memory_bank]
    metadata = CausalLocomoMetadata(
        example_id=record.example_id,
        protocol=protocol,
        task_family=record.task_family,
        memory_bank=bank,
        past_sessions=[s.model_dump(mode="json") for s in record.past_sessions],
        scoring_criteria=criteria.model_dump(mode="json"),
        gold_behavior=record.gold_behavior,
        gold_memory_ids=record.gold_memory_ids,
        bad_memory_ids=record.bad_memory_ids,
        harmful_memory_ids=[m["memory_id"] for m in bank if m["label"] == "harmful"],
    )
    return Sample(
        id=record.example_id,
        input=record.current_task.instruction,
        target=target,
        metadata=metadata.model_dump(),
    )


def causal_locomo_dataset(
    protocol: Protocol = "paper",
    task_families: Sequence[str] | None = None,
    data_file: str | Path | None = None,
) -> MemoryDataset:
    """The benchmark (or a file in its schema), optionally restricted to some families."""
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol must be one of {PROTOCOLS}, got {protocol!r}")
    families = list(task_families) if task_families else None
    if families:
        unknown = sorted(set(families) - set(TASK_FAMILIES))
        if unknown:
            raise ValueError(f"Unknown task families {unknown}; choose from {TASK_FAMILIES}")
    path = Path(data_file) if data_file else causal_locomo_path()
    records = load_records(path)
    samples = [
        record_to_sample(r, protocol)
        for r in records
        if families is None or r.task_family in families
    ]
    if not samples:
        raise DataError(f"No examples of families {families} in {path}.")
    return MemoryDataset(samples, name="causal_locomo", location=str(path))
