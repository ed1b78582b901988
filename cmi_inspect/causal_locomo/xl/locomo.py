"""LoCoMo, the source XL is built from: the pinned file, its conversations, and its QA items
as the examples they become."""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cmi_inspect.causal_locomo.data import (
    DIA_ID,
    PAPER_FAMILIES,
    DataError,
    TaskFamily,
    Turn,
    pinned_file,
)
from cmi_inspect.dates import session_date

LOCOMO_PATH = "locomo/locomo10.json"
LOCOMO_URL = (
    "https://raw.githubusercontent.com/snap-research/locomo/"
    "3eb6f2c585f5e1699204e3c3bdf7adc5c28cb376/data/locomo10.json"
)
LOCOMO_SHA256 = "79fa87e90f04081343b8c8debecb80a9a6842b76a7aa537dc9fdf651ea698ff4"

FAMILY_BY_CATEGORY: dict[int, TaskFamily] = dict(zip((2, 1, 3, 4), PAPER_FAMILIES, strict=True))
"""LoCoMo's question categories as the release mapped them: 2 temporal, 1 multi-hop,
3 open-domain (inferential), 4 single-hop (factual); category 5 has no gold answer."""


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

    def turn(self, dia_id: str) -> Turn | None:
        """The turn with this dia_id, if it exists."""
        found = DIA_ID.fullmatch(dia_id)
        session = self.sessions.get(int(found["session"])) if found else None
        return next((t for t in session.turns if t.dia_id == dia_id), None) if session else None


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
