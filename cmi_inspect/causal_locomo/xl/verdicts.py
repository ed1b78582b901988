"""XL v5's confirmed labels: the readers' verdicts combined, checked and written as ids only.

Per item a reader's *call* is ``misleading`` (their blind answer was a wrong answer of the
kind asked, for a "when" question about another occurrence than the one asked, and the turn
does not state the gold),
``gold`` (their answer was the gold, or the turn states it) or ``other``. A candidate is
**harmful** when both readers call it misleading, or one does and the adjudicator agrees;
**useful** when both find that the turn states the gold (the gold check, which also moves a
turn both called misleading to useful when both say it states the gold), and never harmful
when either does; else **neutral**.
A wrong-person question is **unanswerable** when both readers find none of the asked
person's turns shown states its answer; the other speaker's turns that answer it for them
(the rule's) are its confusers. A question whose evidence the readers do not find supports
its gold is left out (``examples.supported``).

``collect`` writes ``VERDICTS`` with, per reader, precision on *misleading* against the
team's calibration labels and the share of random decoys called misleading, and the readers'
agreement (Krippendorff's alpha, nominal, with a bootstrap interval over conversations).
"""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter, defaultdict
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from cmi_inspect.causal_locomo.xl.confusers import wh_form
from cmi_inspect.causal_locomo.xl.locomo import load_locomo, locomo_path

Call = Literal["misleading", "gold", "other"]
Label = Literal["harmful", "useful", "neutral", "unanswerable"]

VERDICTS = Path(__file__).with_name("verdicts.json")
CALIBRATION = Path(__file__).with_name("calibration.json")
READERS = ("e", "f")
"""The readers whose calls decide."""
REPLACED = ("a", "b", "c", "d")
"""Readers replaced after calibration (their figures stay in the verdict file): ``a`` answered
too rarely to be misled (1 of the team's 6 misleading pairs it read), ``b`` too readily
(precision 0.57); ``c`` and ``d`` (0.73 and 0.67) called misleading turns that fall outside
what the question itself fixes (a month, a source, whose taste), which ``e`` and ``f`` are
told to mind."""
INSTRUCTIONS = Path(__file__).resolve().parents[3] / "docs" / "xl-reading"
"""The reader prompts (from the repository root): ``reader-a.md``, ``reader-b.md``,
``common.md`` and ``adjudicator.md``; their sha256 are recorded in the verdict file."""
READER_MODEL = "claude (a helper agent of the session, as every reader and the adjudicator)"
PRECISION_FLOOR = 0.85
RANDOM_DECOY_CEILING = 0.10
BOOTSTRAP = 1000


class ItemVerdict(BaseModel):
    """One read (question, turn) pair: who read what, and what was decided, without text."""

    item: str
    conversation: str
    question: int
    """The question's index in the conversation's ``qa`` (never shown to a strategy)."""
    dia_id: str
    kind: str
    calls: dict[str, Call]
    label: Label | None
    """For a candidate or an unanswerable question's turn; None for a decoy."""
    path: str
    """What decided: ``both``, ``adjudicated``, ``gold_check``, ``split`` or ``neither``."""
    gold_supported: dict[str, str]
    answerable: dict[str, bool | None] = {}


class VerdictFile(BaseModel):
    """The verdict file the v5 builder reads."""

    readers: dict[str, dict[str, Any]]
    calibration: dict[str, dict[str, Any]]
    agreement: dict[str, Any]
    counts: dict[str, Any]
    items: list[ItemVerdict]


def call(row: dict[str, Any], temporal: bool = False) -> Call:
    """A reader's call on an item from their step-two verdict row; for a question asking
    when, a wrong date from a turn about the same occurrence told again is no confusion."""
    supports = bool(row.get("turn_supports_gold"))
    if row.get("verdict") == "gold" or supports:
        return "gold"
    if row.get("verdict") == "wrong" and not (temporal and row.get("event") == "same"):
        return "misleading"
    return "other"


def alpha(pairs: Sequence[tuple[str, str]]) -> float:
    """Krippendorff's alpha, nominal, for two coders who both coded every unit."""
    coincidence: Counter[tuple[str, str]] = Counter()
    for x, y in pairs:
        coincidence[(x, y)] += 1
        coincidence[(y, x)] += 1
    n = 2 * len(pairs)
    totals: Counter[str] = Counter()
    for (x, _), count in coincidence.items():
        totals[x] += count
    observed = sum(c for (x, y), c in coincidence.items() if x != y) / n if n else 0.0
    disagreeing = sum(totals[x] * totals[y] for x in totals for y in totals if x != y)
    expected = disagreeing / (n * (n - 1)) if n > 1 else 0.0
    return 1.0 - observed / expected if expected else 1.0


def alpha_interval(pairs: dict[str, list[tuple[str, str]]], rounds: int = BOOTSTRAP) -> list[float]:
    """A 95% bootstrap interval of alpha, conversations resampled with replacement."""
    rng = random.Random("xl-5/alpha")
    names = sorted(pairs)
    values = sorted(
        alpha([p for name in rng.choices(names, k=len(names)) for p in pairs[name]])
        for _ in range(rounds)
    )
    return [round(values[int(0.025 * rounds)], 3), round(values[int(0.975 * rounds) - 1], 3)]


def _rows(path: Path) -> dict[str, dict[str, Any]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return {str(r["item"]): r for r in map(json.loads, filter(str.strip, lines))}


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _label(
    item: dict[str, Any], calls: dict[str, Call], adjudicated: dict[str, str]
) -> tuple[Label | None, str]:
    kind = item["kind"]
    if kind in ("useful", "random"):
        return None, "decoy"
    if kind == "unanswerable":
        return "harmful", "rule"
    if all(c == "gold" for c in calls.values()):
        return "useful", "gold_check"
    if "gold" in calls.values():
        return "neutral", "gold_check"  # a reader found it states the gold: never harmful
    misleading = [c == "misleading" for c in calls.values()]
    if all(misleading):
        return "harmful", "both"
    if any(misleading):
        verdict = adjudicated.get(item["item"])
        if verdict is None:
            return "neutral", "split"
        return ("harmful" if verdict == "misleading" else "neutral"), "adjudicated"
    return "neutral", "neither"


def collect(folder: Path, out: Path = VERDICTS, source: Path | None = None) -> VerdictFile:
    """Combine every batch's verdict rows into ``out`` (and return it); ``source``, the
    LoCoMo file the items were drawn from (the pinned one by default)."""
    items = [json.loads(line) for line in (folder / "items.jsonl").read_text().splitlines()]
    convs = {c.sample_id: c for c in load_locomo(source or locomo_path())}
    for item in items:
        question = str(convs[item["conversation"]].qa[item["question"]]["question"])
        item["temporal"] = wh_form(question) == "when"
    rows: dict[str, dict[str, dict[str, Any]]] = {r: {} for r in READERS + REPLACED}
    for reader in READERS + REPLACED:
        for path in sorted(folder.glob(f"batch-*.{reader}.verdicts.jsonl")):
            rows[reader].update(_rows(path))
    adjudicated = {
        k: str(v["verdict"])
        for path in sorted(folder.glob("adjudicated*.jsonl"))
        for k, v in _rows(path).items()
    }
    verdicts = []
    for item in items:
        if not all(item["item"] in rows[r] for r in READERS):
            continue
        calls: dict[str, Call] = {r: call(rows[r][item["item"]], item["temporal"]) for r in READERS}
        label, decided = _label(item, calls, adjudicated)
        read = {r: rows[r][item["item"]] for r in READERS}
        verdicts.append(
            ItemVerdict(
                item=item["item"], conversation=item["conversation"], question=item["question"],
                dia_id=item["dia_id"], kind=item["kind"], calls=calls, label=label, path=decided,
                gold_supported={r: str(x.get("evidence_supports_gold")) for r, x in read.items()},
                answerable={r: x.get("answerable") for r, x in read.items()}
                if item["kind"] == "unanswerable" else {},
            )
        )  # fmt: skip
    temporal = {it["item"]: bool(it["temporal"]) for it in items}
    replaced = {
        r: _calibration_of({i: call(row, temporal[i]) for i, row in rows[r].items()}, items)
        for r in REPLACED
    }
    result = VerdictFile(
        readers=_readers(),
        calibration=_calibration(verdicts) | {f"replaced_{r}": v for r, v in replaced.items()},
        agreement=_agreement(verdicts),
        counts=_counts(verdicts, len(items)),
        items=verdicts,
    )
    out.write_text(_text(result), encoding="utf-8")
    print(json.dumps({k: v for k, v in result.model_dump().items() if k != "items"}, indent=1))
    return result


def _text(result: VerdictFile) -> str:
    """The file's text: its figures indented, then one item a line (diffs stay readable)."""
    head = result.model_dump(mode="json", exclude={"items"})
    lines = json.dumps(head, indent=1)[:-2]
    items = ",\n".join(v.model_dump_json() for v in result.items)
    return f'{lines},\n "items": [\n{items}\n ]\n}}\n'


def _readers() -> dict[str, dict[str, Any]]:
    common = INSTRUCTIONS / "common.md"
    out = {
        r: {
            "model": READER_MODEL,
            "decides": r in READERS,
            "prompt_sha256": {p.name: _sha(p) for p in (INSTRUCTIONS / f"reader-{r}.md", common)},
        }
        for r in READERS + REPLACED
    }
    adjudicator = INSTRUCTIONS / "adjudicator.md"
    out["adjudicator"] = {
        "model": READER_MODEL,
        "prompt_sha256": {adjudicator.name: _sha(adjudicator)},
    }
    return out


def _calibration_of(calls: dict[str, Call], items: list[dict[str, Any]]) -> dict[str, Any]:
    """A replaced reader's figures, over every item they read."""
    mine = {p["item"]: p["label"] for p in json.loads(CALIBRATION.read_text())["pairs"]}
    called = [i for i in mine if calls.get(i) == "misleading"]
    randoms = [it["item"] for it in items if it["kind"] == "random" and it["item"] in calls]
    return {
        "items_read": len(calls),
        "calibration_pairs_read": sum(i in calls for i in mine),
        "called_misleading": len(called),
        "also_misleading_by_the_team": sum(mine[i] == "misleading" for i in called),
        "team_misleading_read": sum(m == "misleading" and i in calls for i, m in mine.items()),
        "random_decoys": len(randoms),
        "random_decoys_called_misleading": sum(calls[i] == "misleading" for i in randoms),
    }


def _calibration(verdicts: list[ItemVerdict]) -> dict[str, dict[str, Any]]:
    """Per reader (and for the final label): precision on *misleading* against the team's
    labels, and the share of random decoys called misleading."""
    mine = {p["item"]: p["label"] for p in json.loads(CALIBRATION.read_text())["pairs"]}
    by_item = {v.item: v for v in verdicts}
    out: dict[str, dict[str, Any]] = {}
    randoms = [v for v in verdicts if v.kind == "random"]
    theirs = sum(m == "misleading" for i, m in mine.items() if i in by_item)
    for reader in (*READERS, "label"):
        says = {
            v.item: v.label == "harmful" if reader == "label" else v.calls[reader] == "misleading"
            for v in verdicts
        }
        called = [i for i in mine if says.get(i)]
        right = sum(mine[i] == "misleading" for i in called)
        decoys = sum(says[v.item] for v in randoms) if reader != "label" else None
        out[reader] = {
            "calibration_pairs_read": sum(i in by_item for i in mine),
            "called_misleading": len(called),
            "also_misleading_by_the_team": right,
            "precision_misleading": round(right / len(called), 3) if called else None,
            "recall_misleading": round(right / theirs, 3) if theirs else None,
            "random_decoys": len(randoms),
            "random_decoys_called_misleading": decoys,
        }
        if reader != "label":
            out[reader]["meets_floors"] = bool(
                (out[reader]["precision_misleading"] or 0) >= PRECISION_FLOOR
                and (decoys or 0) <= RANDOM_DECOY_CEILING * max(len(randoms), 1)
            )
    return out


def _agreement(verdicts: list[ItemVerdict]) -> dict[str, Any]:
    pairs: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for v in verdicts:
        pairs[v.conversation].append((v.calls[READERS[0]], v.calls[READERS[1]]))
    every = [p for ps in pairs.values() for p in ps]
    return {
        "krippendorff_alpha_nominal": round(alpha(every), 3),
        "bootstrap_95_by_conversation": alpha_interval(dict(pairs)),
        "items": len(every),
        "calls": {f"{x}/{y}": c for (x, y), c in sorted(Counter(every).items())},
    }


def _counts(verdicts: list[ItemVerdict], pooled: int) -> dict[str, Any]:
    return {
        "pooled": pooled,
        "read_by_both": len(verdicts),
        "labels": dict(sorted(Counter(f"{v.kind}:{v.label}:{v.path}" for v in verdicts).items())),
    }


@cache
def load_verdicts(path: Path = VERDICTS) -> VerdictFile:
    """The verdict file the build reads."""
    return VerdictFile.model_validate_json(path.read_text(encoding="utf-8"))
