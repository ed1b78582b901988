"""Read a data file, in either of its forms, as records of the release's schema.

*Inline*: one example a line, with its whole memory bank and history (the release, XL v2,
XL v3's ``--inline-banks``). *Stored*: XL v3 writes each conversation's memory store once,
a line with ``memory_store`` (every memory of the conversation, labelled ``irrelevant``, and
the conversation's sessions), then its examples, each naming its store (``store_id``) and
the labels of its memories that are not irrelevant (``ExampleReference``). ``expand`` makes
a referenced example the record the release's schema describes, sharing the store's
memories and sessions between the examples of a conversation, so a thousand examples of
six hundred memories each load in the memory of one store per conversation.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from cmi_inspect.causal_locomo.data import (
    CurrentTask,
    DataError,
    ExampleRecord,
    MemoryLabel,
    MemoryRecord,
    PastSession,
    ScoringCriteria,
    Split,
    TaskFamily,
    user_path,
)


class MemoryStore(BaseModel):
    """A conversation's memory store: its sessions and one memory a turn."""

    model_config = ConfigDict(extra="allow")

    store_id: str
    past_sessions: list[PastSession]
    memory_store: list[MemoryRecord]
    """Each labelled ``irrelevant``: what a memory is to an example that gives it no label."""


class ExampleReference(BaseModel):
    """An example of a stored file: the release's fields less its bank, history and id
    lists, which its store and labels give (``expand``)."""

    model_config = ConfigDict(extra="allow")

    example_id: str
    store_id: str
    task_family: TaskFamily
    current_task: CurrentTask
    scoring_criteria: ScoringCriteria
    gold_behavior: str = ""
    split: Split | None = None
    memory_labels: dict[str, MemoryLabel]
    """The labels of the memories that are not irrelevant to it, by memory id."""
    attack_kinds: dict[str, str] = {}
    """How each harmful memory misleads, by memory id."""


_OWN_FIELDS = {"store_id", "memory_labels", "attack_kinds"}


def expand(reference: ExampleReference, store: MemoryStore) -> ExampleRecord:
    """The referenced example as a record of the release's schema: the store's memories in
    its order, those the example labels copied with their labels, the rest shared."""
    labels, kinds = reference.memory_labels, reference.attack_kinds
    bank = [
        m.model_copy(update={"label": labels[m.memory_id], "attack_kind": kinds.get(m.memory_id)})
        if m.memory_id in labels
        else m
        for m in store.memory_store
    ]
    fields = reference.model_dump(exclude=_OWN_FIELDS, exclude_unset=True)
    fields.update(
        current_task=reference.current_task,
        scoring_criteria=reference.scoring_criteria,
        memory_bank=bank,
        past_sessions=store.past_sessions,
        gold_memory_ids=[m.memory_id for m in bank if m.label == "useful"],
        bad_memory_ids=[m.memory_id for m in bank if m.label != "useful"],
        dated_by_source=True,
    )
    return ExampleRecord.model_validate(fields)


def _field_path(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


def _validated(model: type[Any], raw: dict[str, Any], path: Path | str, lineno: int) -> Any:
    try:
        return model.model_validate(raw)
    except ValidationError as ex:
        err = ex.errors()[0]
        raise DataError(
            f"{path}, line {lineno}, field '{_field_path(err['loc'])}': {err['msg']}."
        ) from ex


def _object(line: str, path: Path | str, lineno: int) -> dict[str, Any]:
    try:
        raw: Any = json.loads(line)
    except json.JSONDecodeError as ex:
        raise DataError(f"{path}, line {lineno}: not valid JSON ({ex.msg}).") from ex
    if not isinstance(raw, dict):
        raise DataError(f"{path}, line {lineno}: expected a JSON object.")
    return raw


def parse_record(line: str, path: Path | str, lineno: int) -> ExampleRecord:
    """Validate one inline JSONL line; errors name the file, line and field."""
    record: ExampleRecord = _validated(ExampleRecord, _object(line, path, lineno), path, lineno)
    return record


@dataclass(frozen=True)
class Line:
    """One non-empty line of a data file, read: a store, or an example of either form."""

    lineno: int
    text: str
    store: MemoryStore | None = None
    reference: ExampleReference | None = None
    record: ExampleRecord | None = None


def read_lines(path: Path | str) -> Iterator[Line]:
    """Every non-empty line of a data file, validated; errors name the file, line and field."""
    path = user_path(path)
    if not path.is_file():
        raise DataError(f"No such data file: {path}.")
    with path.open("rb") as f:
        for lineno, raw in enumerate(f, start=1):
            line = _decode(raw.removeprefix(b"\xef\xbb\xbf") if lineno == 1 else raw, path, lineno)
            if not line.strip():
                continue
            data = _object(line, path, lineno)
            if "memory_store" in data:
                yield Line(lineno, line, store=_validated(MemoryStore, data, path, lineno))
            elif "store_id" in data:
                reference = _validated(ExampleReference, data, path, lineno)
                yield Line(lineno, line, reference=reference)
            else:
                yield Line(lineno, line, record=_validated(ExampleRecord, data, path, lineno))


def load_records(path: Path | str) -> list[ExampleRecord]:
    """Every example of a data file as a record of the release's schema (a stored
    file's examples expanded, ``expand``)."""
    path = user_path(path)
    stores: dict[str, MemoryStore] = {}
    records: list[ExampleRecord] = []
    seen: set[str] = set()
    for line in read_lines(path):
        if line.store is not None:
            if line.store.store_id in stores:
                raise DataError(
                    f"{path}, line {line.lineno}, field 'store_id': duplicate store "
                    f"{line.store.store_id!r}."
                )
            _check_store(line.store, path, line.lineno)
            stores[line.store.store_id] = line.store
            continue
        record = line.record or _expanded(line, stores, path)
        if record.example_id in seen:
            raise DataError(
                f"{path}, line {line.lineno}, field 'example_id': duplicate id "
                f"{record.example_id!r}."
            )
        seen.add(record.example_id)
        if line.record is not None:  # an expanded record's ids are its store's, checked
            _check_ids(record, path, line.lineno)
        records.append(record)
    return records


def _expanded(line: Line, stores: dict[str, MemoryStore], path: Path) -> ExampleRecord:
    reference = line.reference
    assert reference is not None
    store = stores.get(reference.store_id)
    if store is None:
        raise DataError(
            f"{path}, line {line.lineno}, field 'store_id': no store {reference.store_id!r} "
            "on an earlier line."
        )
    ids = {m.memory_id for m in store.memory_store}
    for field in ("memory_labels", "attack_kinds"):
        for memory_id in getattr(reference, field):
            if memory_id not in ids:
                raise DataError(
                    f"{path}, line {line.lineno}, field '{field}.{memory_id}': not a memory "
                    f"of store {reference.store_id!r}."
                )
    return expand(reference, store)


def _check_store(store: MemoryStore, path: Path, lineno: int) -> None:
    seen: set[str] = set()
    for i, memory in enumerate(store.memory_store):
        if memory.memory_id in seen:
            raise DataError(
                f"{path}, line {lineno}, field 'memory_store[{i}].memory_id': duplicate id "
                f"{memory.memory_id!r}."
            )
        seen.add(memory.memory_id)


def _decode(raw: bytes, path: Path, lineno: int) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as ex:
        raise DataError(
            f"{path}, line {lineno}: not UTF-8 text (byte {ex.start + 1} of the line); "
            "save the file as UTF-8."
        ) from None


def _check_ids(record: ExampleRecord, path: Path, lineno: int) -> None:
    bank_ids: set[str] = set()
    for i, memory in enumerate(record.memory_bank):
        if memory.memory_id in bank_ids:
            raise DataError(
                f"{path}, line {lineno}, field 'memory_bank[{i}].memory_id': duplicate id "
                f"{memory.memory_id!r}."
            )
        bank_ids.add(memory.memory_id)
    for field in ("gold_memory_ids", "bad_memory_ids"):
        for i, memory_id in enumerate(getattr(record, field)):
            if memory_id not in bank_ids:
                raise DataError(
                    f"{path}, line {lineno}, field '{field}[{i}]': {memory_id!r} is "
                    "not in memory_bank."
                )
