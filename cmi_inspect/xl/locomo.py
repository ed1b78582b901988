"""LoCoMo, the source XL is built from: the pinned file, its conversations, and its QA items
as the examples they become."""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cmi_inspect.causal_locomo.data import DIA_ID, DataError, Turn, pinned_file
from cmi_inspect.dates import MONTH_NAMES, WEEKDAYS, session_date
from cmi_inspect.xl.params import FAMILY_BY_CATEGORY

LOCOMO_PATH = "locomo/locomo10.json"
LOCOMO_URL = (
    "https://raw.githubusercontent.com/snap-research/locomo/"
    "3eb6f2c585f5e1699204e3c3bdf7adc5c28cb376/data/locomo10.json"
)
LOCOMO_SHA256 = "79fa87e90f04081343b8c8debecb80a9a6842b76a7aa537dc9fdf651ea698ff4"


def locomo_path() -> Path:
    """A verified locomo10.json: under CMI_DATA_DIR when set, else a cached download."""
    return pinned_file(LOCOMO_PATH, LOCOMO_URL, LOCOMO_SHA256)


@dataclass(frozen=True)
class Session:
    """One dated session of a conversation."""

    index: int
    date_time: str
    day: dt.date
    turns: tuple[Turn, ...]


@dataclass(frozen=True)
class Conversation:
    """A LoCoMo conversation: its two speakers, sessions and QA items."""

    sample_id: str
    speakers: tuple[str, str]
    sessions: dict[int, Session]
    qa: tuple[dict[str, Any], ...]
    entities: tuple[str, ...]

    def turn(self, dia_id: str) -> Turn | None:
        """The turn with this dia_id, if it exists."""
        found = DIA_ID.fullmatch(dia_id)
        session = self.sessions.get(int(found["session"])) if found else None
        return next((t for t in session.turns if t.dia_id == dia_id), None) if session else None

    def listener(self, speaker: str) -> str:
        """The other participant."""
        return self.speakers[1] if speaker == self.speakers[0] else self.speakers[0]


@dataclass
class ExampleContext:
    """One answerable QA item with everything the memory and attack generators read."""

    conv: Conversation
    example_id: str
    question: str
    answer: str
    category: int
    evidence: list[Turn]
    past: list[Session]
    """The sessions up to the last that holds evidence: the example's history."""
    same_category_answers: list[str] = field(default_factory=list)

    def session(self, index: int) -> Session:
        return self.conv.sessions[index]


def normalise_evidence(evidence: Iterable[Any]) -> list[str]:
    """Evidence ids cleaned of LoCoMo's typos (``D:11:26``, ``D30:05``, ``D8:6; D9:17``)."""
    ids: list[str] = []
    for item in evidence:
        for part in re.split(r"[;,\s]+", str(item)):
            m = re.fullmatch(r"D:?(\d+):0*(\d+)", part.strip())
            if m and (dia_id := f"D{int(m[1])}:{int(m[2])}") not in ids:
                ids.append(dia_id)
    return ids


def _turn_text(raw: dict[str, Any]) -> str:
    """What a turn says, with the caption of a photo it shares."""
    text = str(raw["text"]).strip()
    caption = raw.get("blip_caption")
    return f"{text} [shares {caption}]" if caption else text


_ENTITY = re.compile(r"(?<![.!?]\s)(?<!^)\b([A-Z][a-z]{2,})\b")
_NOT_ENTITIES = frozenset(
    {m.lower() for m in MONTH_NAMES}
    | set(WEEKDAYS)
    | {"the", "this", "that", "thanks", "wow", "yeah", "hey", "and", "but", "what", "how"}
)


def _entities(turns: Iterable[Turn], speakers: Sequence[str]) -> tuple[str, ...]:
    """Capitalised words used mid-sentence: names and places of the conversation."""
    names = set(speakers)
    for turn in turns:
        for m in _ENTITY.finditer(turn.text):
            if m[1].lower() not in _NOT_ENTITIES:
                names.add(m[1])
    return tuple(sorted(names))


def _session(index: int, date_time: str, raw_turns: list[Any], where: str) -> Session:
    day = session_date(date_time)
    if day is None:
        raise DataError(f"{where}: cannot read a date from session stamp {date_time!r}.")
    turns = tuple(Turn(str(t["dia_id"]), str(t["speaker"]), _turn_text(t)) for t in raw_turns)
    for turn in turns:
        if turn.session != index:
            raise DataError(f"{where}: turn {turn.dia_id} is in session_{index}.")
    return Session(index, date_time, day, turns)


def _parse_conversation(raw: dict[str, Any], where: str) -> Conversation:
    conv = raw["conversation"]
    speakers = (str(conv["speaker_a"]), str(conv["speaker_b"]))
    sessions: dict[int, Session] = {}
    for key, value in conv.items():
        m = re.fullmatch(r"session_(\d+)", key)
        if m and isinstance(value, list) and value:
            index = int(m[1])
            sessions[index] = _session(index, str(conv[f"session_{index}_date_time"]), value, where)
    return Conversation(
        sample_id=str(raw["sample_id"]),
        speakers=speakers,
        sessions=dict(sorted(sessions.items())),
        qa=tuple(raw["qa"]),
        entities=_entities((t for s in sessions.values() for t in s.turns), speakers),
    )


def load_locomo(source: Path) -> list[Conversation]:
    """Parse locomo10.json; any malformed content raises a DataError naming the file."""
    if not source.is_file():
        raise DataError(f"No such LoCoMo file: {source}.")
    try:
        raw = json.loads(source.read_text(encoding="utf-8"))
        return [_parse_conversation(c, str(source)) for c in raw]
    except json.JSONDecodeError as ex:
        raise DataError(f"{source}: not valid JSON ({ex.msg}, line {ex.lineno}).") from ex
    except DataError:
        raise
    except (KeyError, TypeError, AttributeError, ValueError) as ex:
        raise DataError(f"{source}: not in LoCoMo's format ({type(ex).__name__}: {ex}).") from ex


def example_contexts(conv: Conversation) -> Iterator[tuple[str, ExampleContext | None, str]]:
    """Each QA item as (example_id, its context or None, the reason it would be dropped)."""
    by_category: dict[int, list[str]] = {}
    for item in conv.qa:
        if "answer" in item:
            by_category.setdefault(int(item["category"]), []).append(str(item["answer"]))
    for index, item in enumerate(conv.qa):
        example_id = f"{conv.sample_id}_qa_{index:04d}"
        category = int(item["category"])
        if category not in FAMILY_BY_CATEGORY or "answer" not in item:
            yield example_id, None, "no_gold_answer"
            continue
        turns = [conv.turn(i) for i in normalise_evidence(item.get("evidence", []))]
        evidence = [t for t in turns if t is not None]
        if not evidence:
            yield example_id, None, "evidence_not_found"
            continue
        cutoff = max(t.session for t in evidence)
        answer = str(item["answer"]).strip()
        yield example_id, ExampleContext(
            conv=conv, example_id=example_id, question=str(item["question"]).strip(),
            answer=answer, category=category, evidence=evidence,
            past=[s for i, s in conv.sessions.items() if i <= cutoff],
            same_category_answers=sorted(set(by_category[category]) - {answer}),
        ), "unsound"  # fmt: skip
