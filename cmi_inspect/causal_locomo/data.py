"""Locate, download, verify and parse the Causal-LoCoMo JSONL release.

The release is never shipped with the package: it is fetched once from a
pinned commit, checked against its sha256 and cached. ``CMI_DATA_DIR`` points
at a local copy laid out like the upstream data folder instead.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
import urllib.error
import urllib.request
from collections.abc import Iterable
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, ValidationError

from cmi_inspect.errors import UserError
from cmi_inspect.paths import cache_dir

DATA_DIR_ENV = "CMI_DATA_DIR"

CAUSAL_LOCOMO_PATH = "causal-locomo/causal_locomo_final_with_history.jsonl"
CAUSAL_LOCOMO_URL = (
    "https://raw.githubusercontent.com/Saksham4796/causal-memory-intervention/"
    "65a66cb4347aeeb62a870132269e8a983211e036/causal_locomo_final_with_history.jsonl"
)
CAUSAL_LOCOMO_SHA256 = "413b490d77ac971dd33a3781dfa3e20c208e2486d920718655e590f736baa3eb"

TaskFamily = Literal[
    "temporal_memory_qa",
    "multi_evidence_memory_qa",
    "inferential_memory_qa",
    "factual_memory_qa",
]
"""The task families, in the paper's order: the one list of them."""
TASK_FAMILIES: tuple[TaskFamily, ...] = get_args(TaskFamily)

Split = Literal["train", "dev", "test"]
"""A data set's splits, by conversation (XL has them; the release has none)."""
SPLITS: tuple[Split, ...] = get_args(Split)


class DataError(UserError):
    """Raised for missing, corrupt or malformed benchmark data."""


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="allow")


MemoryLabel = Literal["useful", "irrelevant", "harmful"]


class MemoryRecord(_Lenient):
    """One entry of a memory bank, with its label-bearing fields."""

    memory_id: str
    content: str
    label: MemoryLabel
    timestamp: int
    scope: str | None = None
    type: str | None = None
    attack_kind: str | None = None
    """How a harmful memory misleads (XL records it; the release has our annotation)."""


class PastSession(_Lenient):
    session_id: str
    timestamp: int
    content: str
    """A date line, then one line a turn (``session_text``)."""
    date_time: str | None = None


DIA_ID = re.compile(r"D(?P<session>\d+):(?P<turn>\d+)")
"""A turn's id: ``D3:4`` is the 4th turn of session 3."""


@dataclass(frozen=True)
class Turn:
    """One dialogue turn: its id, who spoke, and what was said (without the speaker's name)."""

    dia_id: str
    speaker: str
    text: str

    @cached_property
    def session(self) -> int:
        """The session it was said in, from its id."""
        found = DIA_ID.fullmatch(self.dia_id)
        if found is None:
            raise DataError(f"Not a turn id: {self.dia_id!r} (expected the form D3:4).")
        return int(found["session"])

    def line(self) -> str:
        """The turn as a line of a past session: ``D3:4 Speaker: text``."""
        return f"{self.dia_id} {self.speaker}: {self.text}"


_TURN_LINE = re.compile(
    rf"^(?P<dia_id>{DIA_ID.pattern})\s+(?:(?P<speaker>[^:]{{1,40}}):\s+)?(?P<text>.*)$"
)


def session_text(date_time: str, turns: Iterable[Turn]) -> str:
    """A past session's ``content`` as the release writes it, which ``session_turns`` reads."""
    return "\n".join([f"Session date/time: {date_time}.", *(t.line() for t in turns)])


def session_turns(content: str) -> list[Turn]:
    """The turns of a past session's ``content``; a line that is not a turn (``Turn.line``)
    continues the previous one, and lines before the first turn are its header."""
    turns: list[Turn] = []
    for line in content.splitlines():
        found = _TURN_LINE.match(line.strip())
        if found:
            turns.append(Turn(found["dia_id"], found["speaker"] or "", found["text"]))
        elif turns and line.strip():
            turns[-1] = replace(turns[-1], text=f"{turns[-1].text} {line.strip()}")
    return turns


class CurrentTask(_Lenient):
    instruction: str


class ScoringCriteria(_Lenient):
    expected_answer: str
    answer_aliases: list[str] = []
    must_include: list[str] = []
    must_not_include: list[str] = []
    required_steps: list[str] | None = None
    style: str = ""
    max_words: int | None = None
    adversarial_answer: str | None = None
    judge_instructions: str = ""


class ExampleRecord(_Lenient):
    """One line of the release: a request, its memory bank and its answer key."""

    example_id: str
    task_family: TaskFamily
    current_task: CurrentTask
    memory_bank: list[MemoryRecord]
    past_sessions: list[PastSession] = []
    gold_memory_ids: list[str]
    bad_memory_ids: list[str]
    scoring_criteria: ScoringCriteria
    gold_behavior: str = ""
    split: Split | None = None
    """Where the example's conversation went (``train``, ``dev`` or ``test``), if the data
    set is split; not a label: it says nothing of a memory."""


def user_path(path: str | Path) -> Path:
    """A path as the user meant it: relative paths from where they ran the command.

    ``inspect eval`` loads a task from the task file's own folder, so the current
    directory is not the user's; the shell's ``PWD`` still is.
    """
    given = Path(path).expanduser()
    if given.is_absolute():
        return given
    bases = [Path(b) for b in (os.environ.get("PWD"), os.getcwd()) if b]
    for base in bases:
        if (base / given).exists():
            return base / given
    return bases[0] / given


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _verify(path: Path, expected: str) -> None:
    found = sha256_of(path)
    if found != expected:
        raise DataError(f"Checksum mismatch for {path}: expected sha256 {expected}, found {found}.")


def _download(url: str, dest: Path, expected: str, relative: str) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=dest.parent, delete=False) as tmp:
        tmp_path = Path(tmp.name)
        try:
            with urllib.request.urlopen(url, timeout=60) as response:
                while block := response.read(1 << 20):
                    tmp.write(block)
        except (urllib.error.URLError, OSError) as ex:
            tmp_path.unlink(missing_ok=True)
            raise DataError(
                f"Could not download {url} ({ex}). Without network access, set "
                f"{DATA_DIR_ENV} to a directory that holds {relative}."
            ) from ex
    try:
        _verify(tmp_path, expected)
    except DataError:
        tmp_path.unlink(missing_ok=True)
        raise
    tmp_path.replace(dest)


def pinned_file(relative: str, url: str, sha256: str) -> Path:
    """A verified copy of a pinned public file: under ``CMI_DATA_DIR``, cached, or downloaded."""
    local_dir = os.environ.get(DATA_DIR_ENV)
    if local_dir:
        path = user_path(local_dir) / relative
        if not path.is_file():
            raise DataError(
                f"{DATA_DIR_ENV}={local_dir} has no {relative}; point it "
                "at a directory laid out like the upstream data folder."
            )
        _verify(path, sha256)
        return path
    cached = cache_dir() / relative
    if cached.is_file():
        _verify(cached, sha256)
        return cached
    _download(url, cached, sha256, relative)
    return cached


def causal_locomo_path() -> Path:
    """Path of a verified copy of the release: local copy, cache, or a fresh download."""
    return pinned_file(CAUSAL_LOCOMO_PATH, CAUSAL_LOCOMO_URL, CAUSAL_LOCOMO_SHA256)


def _field_path(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


def parse_record(line: str, path: Path | str, lineno: int) -> ExampleRecord:
    """Validate one JSONL line; errors name the file, line and field."""
    try:
        raw: Any = json.loads(line)
    except json.JSONDecodeError as ex:
        raise DataError(f"{path}, line {lineno}: not valid JSON ({ex.msg}).") from ex
    if not isinstance(raw, dict):
        raise DataError(f"{path}, line {lineno}: expected a JSON object.")
    try:
        return ExampleRecord.model_validate(raw)
    except ValidationError as ex:
        err = ex.errors()[0]
        raise DataError(
            f"{path}, line {lineno}, field '{_field_path(err['loc'])}': {err['msg']}."
        ) from ex


def load_records(path: Path | str) -> list[ExampleRecord]:
    """Parse every non-empty line of a Causal-LoCoMo JSONL file."""
    path = user_path(path)
    if not path.is_file():
        raise DataError(f"No such data file: {path}.")
    records: list[ExampleRecord] = []
    seen: set[str] = set()
    with path.open("rb") as f:
        for lineno, raw in enumerate(f, start=1):
            line = _decode(raw.removeprefix(b"\xef\xbb\xbf") if lineno == 1 else raw, path, lineno)
            if not line.strip():
                continue
            record = parse_record(line, path, lineno)
            if record.example_id in seen:
                raise DataError(
                    f"{path}, line {lineno}, field 'example_id': duplicate id "
                    f"{record.example_id!r}."
                )
            seen.add(record.example_id)
            _check_ids(record, path, lineno)
            records.append(record)
    return records


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
