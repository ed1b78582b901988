"""Causal-LoCoMo as an Inspect dataset: one sample per example.

A sample is an ordinary Inspect sample: its ``target`` holds the expected answer and its
aliases, its metadata the example's whole record (``CausalLocomoMetadata``: the bank with its
labels, the scoring criteria, the gold memories), so the scorers are pure functions of the
sample and ``inspect score`` re-scores a log anywhere. A strategy never receives the sample:
the strategy solver hands it its protocol's view (``SampleView``, built by ``view_of``), which
under ``blind`` holds no label, gold answer or criterion.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.log import EvalSample
from pydantic import BaseModel, Field

from cmi_inspect.causal_locomo.bank_size import DrawnBank, check_bank_size, draw_bank
from cmi_inspect.causal_locomo.data import (
    CAUSAL_LOCOMO_SHA256,
    SPLITS,
    TASK_FAMILIES,
    DataError,
    ExampleRecord,
    MemoryRecord,
    PastSession,
    ScoringCriteria,
    causal_locomo_path,
    sha256_of,
    user_path,
)
from cmi_inspect.causal_locomo.data_files import load_records
from cmi_inspect.causal_locomo.protocol import ProtocolName, named_protocol
from cmi_inspect.causal_locomo.view import Memory, memory_view
from cmi_inspect.errors import UserError, choose

DATASETS = ("release", "xl")
"""``release``: the paper's 87 examples; ``xl``: Causal-LoCoMo-XL, built from LoCoMo."""


class CausalLocomoMetadata(BaseModel, frozen=True):
    """An example's whole record under its protocol: what its sample carries (the scorers
    read it) and what the log keeps. A strategy is handed its view (``view_of``) instead."""

    example_id: str
    protocol: ProtocolName
    task_family: str
    conversation: str = Field(default="", exclude_if=lambda name: not name)
    """What its standard errors are clustered by (``scorers.CLUSTER``): its LoCoMo
    conversation (``conversation_of``), else its own id (a log from before 9-C: '')."""
    memory_bank: list[MemoryRecord]
    past_sessions: list[PastSession]
    scoring_criteria: ScoringCriteria
    gold_behavior: str
    gold_memory_ids: list[str]
    bad_memory_ids: list[str]
    dated_by_source: bool = Field(default=False, exclude_if=lambda dated: not dated)
    """``ExampleRecord.dated_by_source``: the view shows every memory's own date."""
    data_file: str = Field(default="", exclude_if=lambda path: not path)
    """The data file the sample was read from (a log from before task version 7-B: '')."""
    data_sha256: str = Field(default="", exclude_if=lambda digest: not digest)
    bank_size: int | None = Field(default=None, exclude_if=lambda size: size is None)
    """``-T bank_size``: ``memory_bank`` is the smaller bank drawn from the example's
    (``bank_size.draw_bank``); ``gold_memory_ids`` stays whole, so a useful memory the draw
    left out counts for no recall."""
    useful_lost: int = Field(default=0, exclude_if=lambda n: not n)
    """Under ``bank_size``: the useful memories the draw left out."""
    harmful_lost: int = Field(default=0, exclude_if=lambda n: not n)
    """Under ``bank_size``: the harmful memories the draw left out."""

    @property
    def labels(self) -> dict[str, str]:
        """Memory id -> label."""
        return {m.memory_id: m.label for m in self.memory_bank}

    @property
    def harmful_ids(self) -> set[str]:
        return {m.memory_id for m in self.memory_bank if m.label == "harmful"}

    @property
    def target(self) -> list[str]:
        """The gold answers (expected answer, then its aliases), as the sample's target."""
        criteria = self.scoring_criteria
        return list(dict.fromkeys([criteria.expected_answer, *criteria.answer_aliases]))


class SampleView(BaseModel, frozen=True):
    """What a strategy is shown of a sample: no label the protocol hides, no gold answer, no
    criterion (``view_of``)."""

    example_id: str
    protocol: ProtocolName
    task_family: str
    memories: list[Memory]
    """The bank as the protocol shows it (``view.memory_view``)."""
    past_sessions: list[PastSession]
    """Oldest first."""
    data_file: str
    data_sha256: str
    bank_size: int | None = Field(default=None, exclude_if=lambda size: size is None)
    """``-T bank_size``: the bank is a smaller one drawn from the example's."""


EXAMPLE_ID = re.compile(r"(?P<conversation>.+?)_(?:qa_\d+|x[0-9a-f]{8})")
"""How the release and XL name an example: its LoCoMo conversation, ``_qa_``, its index."""


def conversation_of(example_id: str) -> str | None:
    """The LoCoMo conversation an example comes from (``conv-26`` for ``conv-26_qa_0000``),
    or None for an id of another form (a data file of one's own). The release's records
    have no conversation field, only this id; XL's carry it too, as ``source_sample_id``,
    but a scored sample's record (``CausalLocomoMetadata``) holds the id alone."""
    found = EXAMPLE_ID.fullmatch(example_id)
    return found["conversation"] if found else None


def differing_fields(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[str]:
    """The keys, sorted, whose values differ between two metadata mappings (missing counts)."""
    return sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))


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
    text = (
        resources.files("cmi_inspect.causal_locomo")
        .joinpath(RELEASE_ATTACK_KINDS)
        .read_text("utf-8")
    )
    kinds: dict[str, str] = json.loads(text)
    return kinds


def record_metadata(
    record: ExampleRecord,
    protocol: ProtocolName,
    data_file: str = "",
    data_sha256: str = "",
    drawn: DrawnBank | None = None,
) -> CausalLocomoMetadata:
    """The example's whole record under ``protocol``; with ``drawn`` (``-T bank_size``), its
    bank the drawn one, and how many useful and harmful memories the draw left out."""
    bank = drawn.record.memory_bank if drawn else record.memory_bank
    return CausalLocomoMetadata(
        example_id=record.example_id,
        protocol=protocol,
        task_family=record.task_family,
        conversation=conversation_of(record.example_id) or record.example_id,
        memory_bank=bank,
        past_sessions=record.past_sessions,
        scoring_criteria=record.scoring_criteria,
        gold_behavior=record.gold_behavior,
        gold_memory_ids=record.gold_memory_ids,
        bad_memory_ids=drawn.record.bad_memory_ids if drawn else record.bad_memory_ids,
        dated_by_source=record.dated_by_source,
        data_file=data_file,
        data_sha256=data_sha256,
        bank_size=drawn.size if drawn else None,
        useful_lost=drawn.useful_lost if drawn else 0,
        harmful_lost=drawn.harmful_lost if drawn else 0,
    )


def view_of(meta: CausalLocomoMetadata) -> SampleView:
    """What the sample's strategy is shown under its protocol (``SampleView``)."""
    sessions = sorted(meta.past_sessions, key=lambda s: s.timestamp)
    stamps = [s.timestamp for s in sessions]
    return SampleView(
        example_id=meta.example_id,
        protocol=meta.protocol,
        task_family=meta.task_family,
        memories=memory_view(
            meta.example_id, meta.memory_bank, meta.protocol, stamps, meta.dated_by_source
        ),
        past_sessions=sessions,
        data_file=meta.data_file,
        data_sha256=meta.data_sha256,
        bank_size=meta.bank_size,
    )


def shown_texts(meta: CausalLocomoMetadata) -> dict[str, str]:
    """Each memory's text by the key its protocol's view shows it under: what exposure is
    read against (``selection.examine``)."""
    return {m.key: m.content for m in view_of(meta).memories}


def record_to_sample(
    record: ExampleRecord,
    protocol: ProtocolName,
    data_file: str,
    data_sha256: str,
    bank_size: int | None = None,
) -> Sample:
    """The example's sample: its request, the gold answers as its target, its whole record
    (its bank drawn down to ``bank_size``, ``bank_size.draw_bank``) as its metadata."""
    drawn = draw_bank(record, bank_size) if bank_size else None
    meta = record_metadata(record, protocol, data_file, data_sha256, drawn)
    return Sample(
        id=record.example_id,
        input=record.current_task.instruction,
        target=meta.target,
        metadata=meta.model_dump(mode="json"),
    )


SCORED_RECORD = "ScoredExample:record"
"""Where the scorers of task versions 5 to 9-A wrote a sample's record, in its store (its
metadata then held only the view)."""


def scored_record(sample: EvalSample) -> CausalLocomoMetadata:
    """A logged sample's whole record: its metadata, else (a log of task versions 5 to 9-A)
    what the scorers wrote in its store; a ``DataError`` for a sample that kept neither."""
    record = sample.metadata
    if "scoring_criteria" not in record:
        record = sample.store.get(SCORED_RECORD) or {}
    if "scoring_criteria" not in record:
        raise DataError(f"Sample {sample.id!r}: its log keeps no record of its example.")
    return CausalLocomoMetadata.model_validate(record)


def load_examples(path: Path, data_sha256: str) -> list[ExampleRecord]:
    """The records of a data file whose content has ``data_sha256`` (the release's with our
    attack-kind annotation); a file that changed since is refused."""
    found = sha256_of(path)
    if found != data_sha256:
        raise DataError(
            f"{path} changed during the run: sha256 {found[:12]}..., not the "
            f"{data_sha256[:12]}... it was read with; rerun on one version of the data."
        )
    records = load_records(path)
    if data_sha256 == CAUSAL_LOCOMO_SHA256:
        records = [with_release_attack_kinds(r) for r in records]
    return records


@cache
def _records_by_id(data_file: str, data_sha256: str) -> Mapping[str, ExampleRecord]:
    return {r.example_id: r for r in load_examples(Path(data_file), data_sha256)}


def data_file_record(sample: EvalSample) -> CausalLocomoMetadata:
    """A logged sample's record as its data file holds it today (the file named in the
    sample's metadata, refused unless its sha256 is the one logged; the bank drawn as the
    sample's was): what ``cmi-inspect verify`` re-scores against, never trusting the log."""
    meta = sample.metadata
    records = _records_by_id(meta["data_file"], meta["data_sha256"])
    record = records.get(str(sample.id))
    if record is None:
        raise DataError(f"Sample {sample.id!r} is not in {meta['data_file']}.")
    size = meta.get("bank_size")
    drawn = draw_bank(record, int(size)) if size else None
    return record_metadata(record, meta["protocol"], meta["data_file"], meta["data_sha256"], drawn)


def family_order(records: list[ExampleRecord]) -> list[ExampleRecord]:
    """The records interleaved by family, so that any prefix (``--limit N``) is a stratified
    sample: every family's first example first (in ``TASK_FAMILIES`` order), then each family
    in proportion to its size (within two of its share in any prefix of the release); each
    family keeps its file order. The same records, reordered: a full run scores the same
    examples under the same ids."""
    by_family: dict[str, list[ExampleRecord]] = {}
    for record in records:
        by_family.setdefault(record.task_family, []).append(record)
    keyed = [
        (rank / len(members), TASK_FAMILIES.index(family), record)  # type: ignore[arg-type]
        for family, members in by_family.items()
        for rank, record in enumerate(members)
    ]
    return [record for *_, record in sorted(keyed, key=lambda k: k[:2])]


def in_split(records: list[ExampleRecord], split: str, source: str) -> list[ExampleRecord]:
    """The records of one split, in their file's order; a data set without splits is one line."""
    if all(r.split is None for r in records):
        raise UserError(
            f"-T split={split}: {source} has no splits; XL has (-T dataset=xl), by conversation."
        )
    return [r for r in records if r.split == split]


def dataset_path(dataset: str) -> Path:
    """The verified data file of a named dataset (built or downloaded on first use)."""
    if choose("dataset", dataset, DATASETS) == "xl":
        from cmi_inspect.causal_locomo.xl import xl_path

        return xl_path()
    return causal_locomo_path()


def causal_locomo_dataset(
    protocol: ProtocolName = "paper",
    task_families: Sequence[str] | None = None,
    data_file: str | Path | None = None,
    dataset: str = "release",
    split: str | None = None,
    bank_size: int | None = None,
) -> MemoryDataset:
    """The benchmark (or a file in its schema), optionally restricted to some families and
    to one split (``train``, ``dev`` or ``test``: XL's, by conversation), each bank drawn
    down to ``bank_size`` memories (``bank_size.draw_bank``). The release's
    samples come interleaved by family (``family_order``) and XL's in its file's stratified
    order, so any ``--limit`` prefix sees every family; a file of one's own keeps its order."""
    named_protocol(protocol)
    bank_size = check_bank_size(bank_size)
    if split is not None:
        choose("split", split, SPLITS)
    families = list(task_families) if task_families else None
    if families:
        unknown = sorted(set(families) - set(TASK_FAMILIES))
        if unknown:
            raise UserError(
                f"Unknown task families {unknown}; choose from {', '.join(TASK_FAMILIES)}."
            )
    path = user_path(data_file) if data_file else dataset_path(dataset)
    if not path.is_file():
        raise DataError(f"No such data file: {path}.")
    digest = sha256_of(path)
    records = load_examples(path, digest)
    if digest == CAUSAL_LOCOMO_SHA256:  # the release's file lists 3 temporal questions first
        records = family_order(records)
    if split is not None:
        source = "the release" if digest == CAUSAL_LOCOMO_SHA256 else path.name
        records = in_split(records, split, source)
    samples = [
        record_to_sample(r, protocol, str(path), digest, bank_size)
        for r in records
        if families is None or r.task_family in families
    ]
    if not samples:
        which = f" of families {', '.join(families)}" if families else ""
        which += f" in split {split}" if split else ""
        raise DataError(f"No examples{which} in {path}.")
    name = "causal_locomo" if data_file or dataset == "release" else f"causal_locomo_{dataset}"
    return MemoryDataset(samples, name=name, location=str(path))
