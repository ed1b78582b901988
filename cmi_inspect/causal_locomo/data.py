"""Locate, download, verify and parse the Causal-LoCoMo JSONL release.

The release is never shipped with the package: it is fetched once from a
pinned commit, checked against its sha256 and cached. ``CMI_DATA_DIR`` points
at a local copy laid out like the upstream data folder instead.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
import urllib.error
import urllib.request
from collections.abc import Iterable
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

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
    "unanswerable_memory_qa",
]
"""The task families: the paper's four, in its order, then XL v3's questions that the
conversation does not answer (LoCoMo's adversarial category): the one list of them."""
TASK_FAMILIES: tuple[TaskFamily, ...] = get_args(TaskFamily)
PAPER_FAMILIES: tuple[TaskFamily, ...] = TASK_FAMILIES[:4]
"""The families the paper reports (its Table 2's columns)."""

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
    speaker: str | None = Field(default=None, exclude_if=lambda v: v is None)
    said_on: str | None = Field(default=None, exclude_if=lambda v: v is None)
    """Who said the turn a memory is, and the day of its session (``7 May 2023``): XL's
    memories are a conversation's turns verbatim, so these travel as fields, shown under
    every protocol (neither is a label)."""


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
    answer_rule: str = Field(default="contains", exclude_if=lambda rule: rule == "contains")
    """How an answer is credited (``answer_rules.ANSWER_RULES``): it ``contains`` the expected
    answer (the paper's rule), or it ``abstains`` (XL v3's unanswerable questions); left
    out of the criteria's JSON (and so of the judge's prompt) when ``contains``."""


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
    dated_by_source: bool = Field(default=False, exclude_if=lambda dated: not dated)
    """Every memory is dated by the session of the turn it was made from (XL v3), so the
    blind view shows each date as it is (``blinding.blind_timestamps``); left out of a
    record's JSON when false."""


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
