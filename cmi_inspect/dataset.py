"""Causal-LoCoMo as an Inspect dataset: one sample per example."""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import cache
from importlib import resources
from pathlib import Path

from inspect_ai.dataset import MemoryDataset, Sample
from pydantic import BaseModel

from cmi_inspect.data import (
    TASK_FAMILIES,
    DataError,
    ExampleRecord,
    MemoryRecord,
    PastSession,
    ScoringCriteria,
    causal_locomo_path,
    load_records,
)
from cmi_inspect.errors import UserError, choose
from cmi_inspect.view import PROTOCOLS, ProtocolName

DATASETS = ("release", "xl")
"""``release``: the paper's 87 examples; ``xl``: Causal-LoCoMo-XL, built from LoCoMo."""


class CausalLocomoMetadata(BaseModel, frozen=True):
    """A sample's typed record: solvers read it only through a protocol view, scorers whole."""

    example_id: str
    protocol: ProtocolName
    task_family: str
    memory_bank: list[MemoryRecord]
    past_sessions: list[PastSession]
    scoring_criteria: ScoringCriteria
    gold_behavior: str
    gold_memory_ids: list[str]
    bad_memory_ids: list[str]

    @property
    def labels(self) -> dict[str, str]:
        """Memory id -> label."""
        return {m.memory_id: m.label for m in self.memory_bank}

    @property
    def harmful_ids(self) -> set[str]:
        return {m.memory_id for m in self.memory_bank if m.label == "harmful"}


RELEASE_ATTACK_KINDS = "annotations/release_harmful_kinds.json"
"""Our hand classification of the release's harmful memories, by example id (one each)."""


def with_release_attack_kinds(record: ExampleRecord) -> ExampleRecord:
    """The release record with its harmful memory's ``attack_kind`` from our annotation."""
    kinds = _release_attack_kinds()
    if record.example_id not in kinds:
        return record
    bank = [
        m.model_copy(update={"attack_kind": kinds[record.example_id]})
        if m.label == "harmful"
        else m
        for m in record.memory_bank
    ]
    return record.model_copy(update={"memory_bank": bank})


@cache
def _release_attack_kinds() -> dict[str, str]:
    text = resources.files("cmi_inspect").joinpath(RELEASE_ATTACK_KINDS).read_text("utf-8")
    kinds: dict[str, str] = json.loads(text)
    return kinds


def record_to_sample(record: ExampleRecord, protocol: ProtocolName) -> Sample:
    criteria = record.scoring_criteria
    target = list(dict.fromkeys([criteria.expected_answer, *criteria.answer_aliases]))
    metadata = CausalLocomoMetadata(
        example_id=record.example_id,
        protocol=protocol,
        task_family=record.task_family,
        memory_bank=record.memory_bank,
        past_sessions=record.past_sessions,
        scoring_criteria=criteria,
        gold_behavior=record.gold_behavior,
        gold_memory_ids=record.gold_memory_ids,
        bad_memory_ids=record.bad_memory_ids,
    )
    return Sample(
        id=record.example_id,
        input=record.current_task.instruction,
        target=target,
        metadata=metadata.model_dump(mode="json"),
    )


def dataset_path(dataset: str) -> Path:
    """The verified data file of a named dataset (built or downloaded on first use)."""
    if choose("dataset", dataset, DATASETS) == "xl":
        from cmi_inspect.xl import xl_path

        return xl_path()
    return causal_locomo_path()


def causal_locomo_dataset(
    protocol: ProtocolName = "paper",
    task_families: Sequence[str] | None = None,
    data_file: str | Path | None = None,
    dataset: str = "release",
) -> MemoryDataset:
    """The benchmark (or a file in its schema), optionally restricted to some families."""
    choose("protocol", protocol, PROTOCOLS)
    families = list(task_families) if task_families else None
    if families:
        unknown = sorted(set(families) - set(TASK_FAMILIES))
        if unknown:
            raise UserError(
                f"Unknown task families {unknown}; choose from {', '.join(TASK_FAMILIES)}."
            )
    path = Path(data_file) if data_file else dataset_path(dataset)
    records = load_records(path)
    if not data_file and dataset == "release":
        records = [with_release_attack_kinds(r) for r in records]
    samples = [
        record_to_sample(r, protocol)
        for r in records
        if families is None or r.task_family in families
    ]
    if not samples:
        which = f" of families {', '.join(families)}" if families else ""
        raise DataError(f"No examples{which} in {path}.")
    name = "causal_locomo" if data_file or dataset == "release" else f"causal_locomo_{dataset}"
    return MemoryDataset(samples, name=name, location=str(path))
