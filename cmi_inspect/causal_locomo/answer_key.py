"""The answer key, sealed: the scorers' own copy of the labels and gold answers.

A running sample carries no answer key (``dataset.SampleView``), so nothing a strategy can
reach through Inspect holds one. The scorers read the key from the data file the task
named, checked against the sha256 the task recorded, and hold it as text (one JSON string
per example, digested; for a stored file, XL v3's, the example's line and its store's,
expanded when read, ``data_files.expand``); they then check that what the sample carries is
exactly what the key says it should carry, so a sample changed while it ran is reported,
never scored. A task run with ``-T bank_size`` names it, and the key draws the same bank
(``bank_size.draw_bank``); each score then records how many useful and harmful memories the
draw left out (``SealedExample.seal_record``), labels the strategy is never shown.
Once a sample is scored they write its whole record in its store (``ScoredExample``), for
the log: the report and the analyses read labels from there (``scored_record``), and the
sample's own metadata stays what it ran with.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import Any

from inspect_ai.log import EvalSample
from inspect_ai.util import StoreModel

from cmi_inspect.causal_locomo.bank_size import DrawnBank, draw_bank
from cmi_inspect.causal_locomo.data import ExampleRecord
from cmi_inspect.causal_locomo.data_files import ExampleReference, MemoryStore, expand, read_lines
from cmi_inspect.causal_locomo.dataset import (
    SEALED_TARGET,
    CausalLocomoMetadata,
    SampleView,
    differing_fields,
    load_examples,
    record_metadata,
    sample_view,
)
from cmi_inspect.causal_locomo.protocol import ProtocolName


class AnswerKeyError(RuntimeError):
    """A sample is missing from the sealed key, or carries what the key does not say."""


@dataclass(frozen=True)
class _Sealed:
    """A data file's key as text: each example's, and (a stored file's) each store's."""

    examples: Mapping[str, str]
    """Example id -> its record as JSON, or a stored file's example line."""
    stores: Mapping[str, str]
    """Store id -> its line (none for a file of inline records)."""


@cache
def _sealed(data_file: str, data_sha256: str) -> _Sealed:
    """The key of the file with that content (read once a run)."""
    records = load_examples(Path(data_file), data_sha256)  # checks every line and id
    lines = list(read_lines(data_file))
    stores = {line.store.store_id: line.text for line in lines if line.store}
    if not stores:
        examples = {r.example_id: r.model_dump_json() for r in records}
    else:
        examples = {line.reference.example_id: line.text for line in lines if line.reference}
    return _Sealed(MappingProxyType(examples), MappingProxyType(stores))


@dataclass(frozen=True)
class SealedExample:
    """One example of the sealed key, as the scorers read it."""

    record: ExampleRecord
    protocol: ProtocolName
    data_file: str
    data_sha256: str
    digest: str
    """The sha256 of the example's sealed record (its JSON text)."""
    bank_size: int | None = None
    """The task's ``-T bank_size``: ``record``'s bank is drawn down to it."""
    useful_lost: int = 0
    """How many of the example's useful memories the drawn bank left out."""
    harmful_lost: int = 0
    """How many of its harmful memories the drawn bank left out."""

    @property
    def metadata(self) -> CausalLocomoMetadata:
        """The whole record: what the scored sample's store holds (``ScoredExample``)."""
        return record_metadata(self.record, self.protocol)

    @property
    def target(self) -> list[str]:
        """The gold answers (expected answer, then its aliases)."""
        criteria = self.record.scoring_criteria
        return list(dict.fromkeys([criteria.expected_answer, *criteria.answer_aliases]))

    def changed(self, carried: Mapping[str, Any], target: list[str]) -> list[str]:
        """The fields in which a sample's metadata and target differ from what the key says
        it carries: its view, and the sealed note for a target (an older log's: none, or the
        gold answers); empty: none."""
        fields = differing_fields(self.view().model_dump(mode="json"), carried)
        if any(target) and target not in ([SEALED_TARGET], self.target):
            fields.append("target")
        return fields

    def view(self) -> SampleView:
        """What the example's sample carries while it runs."""
        return sample_view(
            self.record, self.protocol, self.data_file, self.data_sha256, self.bank_size
        )

    def shown(self) -> dict[str, str]:
        """Key -> text of each memory as the sample's strategy was shown it."""
        return {m.key: m.content for m in self.view().memories}

    def seal_record(self) -> dict[str, str | int]:
        """What a score records of the key it used: the data's and the example's sha256, and
        for a drawn bank its size and the useful and harmful memories it left out."""
        seal: dict[str, str | int] = {
            "data_sha256": self.data_sha256,
            "example_sha256": self.digest,
        }
        if self.bank_size is not None:
            seal |= {
                "bank_size": self.bank_size,
                "useful_lost": self.useful_lost,
                "harmful_lost": self.harmful_lost,
            }
        return seal


def sealed_example(
    data_file: str,
    data_sha256: str,
    example_id: str,
    protocol: ProtocolName,
    bank_size: int | None = None,
) -> SealedExample:
    """The sealed key's entry for one example, its bank drawn down to ``bank_size``."""
    sealed = _sealed(data_file, data_sha256)
    text = sealed.examples.get(example_id)
    if text is None:
        raise AnswerKeyError(f"Sample {example_id!r} is not in the answer key ({data_file}).")
    if sealed.stores:
        reference = ExampleReference.model_validate_json(text)
        store = MemoryStore.model_validate_json(sealed.stores[reference.store_id])
        record = expand(reference, store)
    else:
        record = ExampleRecord.model_validate_json(text)
    drawn = DrawnBank(record, 0, 0) if bank_size is None else draw_bank(record, bank_size)
    if bank_size is not None or sealed.stores:
        text = drawn.record.model_dump_json()
    return SealedExample(
        record=drawn.record,
        protocol=protocol,
        data_file=data_file,
        data_sha256=data_sha256,
        digest=hashlib.sha256(text.encode()).hexdigest(),
        bank_size=bank_size,
        useful_lost=drawn.useful_lost,
        harmful_lost=drawn.harmful_lost,
    )


class ScoredExample(StoreModel):
    """A scored sample's whole record, answer key included, as JSON (a null field kept, as
    the data file has it), written by its scorers for the log (empty: not scored)."""

    record: dict[str, Any] = {}


def scored_record(sample: EvalSample) -> CausalLocomoMetadata:
    """A logged sample's whole record: what its scorers wrote in its store, else (a log from
    before they did) its metadata, which they then replaced, else (a sample a resumed run
    carried over without its store) the key its score names, checked by its sha256."""
    record = sample.store_as(ScoredExample).record or sample.metadata
    if record.get("memory_bank") is None and sample.scores:
        return _rekeyed(sample)
    return CausalLocomoMetadata.model_validate(record)


def _rekeyed(sample: EvalSample) -> CausalLocomoMetadata:
    """The record the score's seal names (``SealedExample.seal_record``), from the data
    file the sample ran on; an ``AnswerKeyError`` when its sha256 is not the seal's."""
    meta = sample.metadata
    seal = next(
        (s.metadata["answer_key"] for s in (sample.scores or {}).values()
         if s.metadata and "answer_key" in s.metadata),
        None,
    )  # fmt: skip
    if not isinstance(seal, dict):
        raise AnswerKeyError(f"Sample {sample.id!r}: its log keeps no record and no seal.")
    size = seal.get("bank_size")
    key = sealed_example(meta["data_file"], meta["data_sha256"], str(meta["example_id"]),
                         meta["protocol"], int(size) if size is not None else None)  # fmt: skip
    if key.digest != seal.get("example_sha256"):
        raise AnswerKeyError(f"Sample {sample.id!r}: {meta['data_file']} holds another record "
                             "than the one it was scored on.")  # fmt: skip
    return key.metadata
