"""The v4 build: each conversation's history with its claim turns, its store, its examples,
in stratified order, written atomically with a manifest (and, on request, every example
inline)."""

from __future__ import annotations

import hashlib
import json
import re
import statistics
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from cmi_inspect.causal_locomo.data import SPLITS, Turn, sha256_of
from cmi_inspect.causal_locomo.data_files import ExampleReference, MemoryStore
from cmi_inspect.xl.answers import stems
from cmi_inspect.xl.build import cached_build, write_atomic
from cmi_inspect.xl.locomo import (
    Conversation,
    ExampleContext,
    example_contexts,
    load_locomo,
    normalise_evidence,
)
from cmi_inspect.xl.params import FAMILY_BY_CATEGORY
from cmi_inspect.xl.v3.build import inline_lines, stratified_order
from cmi_inspect.xl.v3.history import History, said_history
from cmi_inspect.xl.v3.params import LEGACY_SPLITS
from cmi_inspect.xl.v3.plan import Insert
from cmi_inspect.xl.v3.slots import Asked, Slot
from cmi_inspect.xl.v3.store import memory_store
from cmi_inspect.xl.v4.examples import (
    answerable_reference,
    stating_evidence,
    unanswerable_reference,
)
from cmi_inspect.xl.v4.params import (
    BUILDER_VERSION,
    INLINE_FILE,
    MANIFEST_FILE,
    SEVERAL_SHARE,
    STORE_FILE,
    UNANSWERABLE_SHARE,
    UNANSWERED,
)
from cmi_inspect.xl.v4.plan import Claimed, claim_of, framed_evidence, plan_turn
from cmi_inspect.xl.v4.values import ValuePool


@dataclass
class Part:
    """One conversation's share of the build."""

    store: MemoryStore
    examples: list[ExampleReference]
    history: History
    inserts: list[Insert]
    dropped: Counter[str] = field(default_factory=Counter)


def _hash(name: str) -> str:
    return hashlib.sha256(f"{BUILDER_VERSION}/{name}".encode()).hexdigest()


Candidate = tuple[ExampleContext, str, str]
"""An adversarial question, its adversarial answer, and the speaker it asks about."""


def _asked_person(conv: Conversation, question: str) -> str | None:
    """The one speaker the question names by first name, if exactly one."""
    named = [s for s in conv.speakers if re.search(rf"\b{re.escape(s.split()[0])}\b", question)]
    return named[0] if len(named) == 1 else None


def _wrong_person(conv: Conversation) -> tuple[list[Candidate], int]:
    """LoCoMo's adversarial questions that ask one speaker what only the other said (none of
    their evidence turns is the asked person's); and how many others there were (a swapped
    premise about the right person, or no clear person)."""
    found, other = [], 0
    for index, item in enumerate(conv.qa):
        adversarial = str(item.get("adversarial_answer") or "").strip()
        if int(item["category"]) != 5 or not adversarial:
            continue
        question = str(item["question"]).strip()
        turns = [conv.turn(i) for i in normalise_evidence(item.get("evidence", []))]
        evidence = [t for t in turns if t is not None]
        asked = _asked_person(conv, question)
        if asked is None or not evidence or any(t.speaker == asked for t in evidence):
            other += 1
            continue
        ctx = ExampleContext(conv=conv, example_id=f"{conv.sample_id}_qa_{index:04d}",
                             question=question, answer=UNANSWERED, category=5,
                             evidence=evidence, past=list(conv.sessions.values()))  # fmt: skip
        found.append((ctx, adversarial, asked))
    return found, other


def _says(history: History, speaker: str, value: str) -> bool:
    """True when a turn of ``speaker`` in the history holds ``value``'s content words."""
    wanted = stems(value)
    return bool(wanted) and any(
        t.speaker == speaker and wanted <= stems(t.text)
        for s in history.sessions.values()
        for t in s.turns
    )


Stated = tuple[ExampleContext, list[tuple[Turn, Slot]]]
"""An answerable example and its evidence turns that state the answer, each with its slot."""
ByTurn = dict[str, tuple[ExampleContext, Turn, dict[str, Asked]]]
"""An evidence turn's id -> the first example that rests on it, the turn, and its slots (the
first example asking each)."""


def _stated(conv: Conversation, dropped: Counter[str]) -> list[Stated]:
    """The answerable examples whose evidence turns each state (a part of) the answer as a
    slot a claim can make false."""
    stated = []
    for _, ctx, reason in example_contexts(conv):
        if ctx is None:
            if reason != "no_gold_answer":
                dropped[reason] += 1
            continue
        ctx = replace(ctx, past=list(conv.sessions.values()))
        evidence = stating_evidence(ctx)
        if not evidence:
            dropped["evidence_states_no_answer"] += 1
        elif any(slot is None for _, slot in evidence):
            dropped["evidence_without_slot"] += 1
        else:
            stated.append((ctx, [(t, s) for t, s in evidence if s is not None]))
    return stated


def _by_turn(stated: list[Stated]) -> ByTurn:
    by_turn: ByTurn = {}
    for ctx, evidence in stated:
        for turn, slot in evidence:
            by_turn.setdefault(turn.dia_id, (ctx, turn, {}))[2].setdefault(slot.key, (ctx, slot))
    return by_turn


def _drawn(stated: list[Stated], dropped: Counter[str]) -> list[Stated]:
    """Every example resting on two or more evidence turns, and single-evidence ones drawn
    by hash so that the former are SEVERAL_SHARE of the conversation's examples."""
    several = [e for e in stated if len(e[1]) >= 2]
    single = sorted((e for e in stated if len(e[1]) < 2), key=lambda e: _hash(e[0].example_id))
    room = round(len(several) * (1 - SEVERAL_SHARE) / SEVERAL_SHARE)
    chosen = {e[0].example_id for e in several + single[:room]}
    dropped["single_evidence_not_drawn"] += max(len(single) - room, 0)
    return [e for e in stated if e[0].example_id in chosen]


def conversation_part(conv: Conversation, pool: ValuePool) -> Part:
    """A conversation's history with its claim turns, its store and its examples."""
    dropped: Counter[str] = Counter()
    stated = _stated(conv, dropped)
    by_turn = _by_turn(stated)
    avoid = sorted({str(item.get("answer", "")) for item in conv.qa} - {""})
    claims = {d: claim_of(c, t, list(k.values()), pool, avoid) for d, (c, t, k) in by_turn.items()}
    poisoned = [e for e in stated if all(claims[t.dia_id].false_text for t, _ in e[1])]
    dropped["evidence_not_poisonable"] += len(stated) - len(poisoned)
    answerable = _drawn(poisoned, dropped)
    candidates, premise = _wrong_person(conv)
    dropped["unanswerable_not_wrong_person"] += premise
    protected = {t.dia_id for ctx, _, _ in candidates for t in ctx.evidence}
    used = sorted({t.dia_id for _, evidence in answerable for t, _ in evidence}, key=_turn_order)
    inserts = [i for d in used for i in plan_turn(*by_turn[d][:2], claims[d], d in protected)]
    framed = _framed(conv, {d: by_turn[d][1] for d in used}, claims)
    history = said_history(framed, inserts)
    store = memory_store(framed, history.sessions)
    split = LEGACY_SPLITS.get(conv.sample_id)
    examples = [
        answerable_reference(
            ctx,
            FAMILY_BY_CATEGORY[ctx.category],
            evidence,
            history,
            _about(inserts, evidence),
            split,
        )  # fmt: skip
        for ctx, evidence in answerable
    ]
    clean = [c for c in candidates if not _says(history, c[2], c[1])]
    dropped["unanswerable_said_by_asked_person"] += len(candidates) - len(clean)
    wanted = round(len(examples) * UNANSWERABLE_SHARE / (1 - UNANSWERABLE_SHARE))
    drawn = sorted(clean, key=lambda c: _hash(c[0].example_id))[:wanted]
    dropped["unanswerable_not_drawn"] += len(clean) - len(drawn)
    ids = {c[0].example_id for c in drawn}
    examples += [unanswerable_reference(c, a, p, history, split) for c, a, p in clean
                 if c.example_id in ids]  # fmt: skip
    return Part(store, examples, history, inserts, dropped)


def _framed(conv: Conversation, turns: dict[str, Turn], claims: dict[str, Claimed]) -> Conversation:
    """The conversation with every evidence turn said as v4 says it (``framed_evidence``)."""

    def said(turn: Turn) -> Turn:
        if turn.dia_id not in turns:
            return turn
        name = f"{conv.sample_id}/{turn.dia_id}"
        return replace(turn, text=framed_evidence(claims[turn.dia_id], name))

    sessions = {
        i: replace(s, turns=tuple(said(t) for t in s.turns)) for i, s in conv.sessions.items()
    }
    return replace(conv, sessions=sessions)


def _turn_order(dia_id: str) -> tuple[int, int]:
    session, turn = dia_id[1:].split(":")
    return int(session), int(turn)


def _about(inserts: list[Insert], evidence: list[tuple[Turn, Slot]]) -> list[Insert]:
    turns = {t.dia_id for t, _ in evidence}
    return [i for i in inserts if i.turn.dia_id in turns]


def _line(model: ExampleReference | MemoryStore) -> str:
    data = model.model_dump(mode="json", exclude_unset=True)
    return json.dumps(data, ensure_ascii=False, sort_keys=True) + "\n"


def build_xl4(source: Path, out_dir: Path, inline: bool = False) -> dict[str, Any]:
    """Build XL v4 from locomo10.json into ``out_dir``; return the manifest."""
    source, out_dir = Path(source), Path(out_dir)
    conversations = load_locomo(source)
    pool = ValuePool.from_conversations(conversations)
    parts = [conversation_part(conv, pool) for conv in conversations]
    stores = sorted((p.store for p in parts), key=lambda s: s.store_id)
    examples = stratified_order([e for p in parts for e in p.examples])
    path = out_dir / STORE_FILE
    text = "".join(_line(s) for s in stores) + "".join(_line(e) for e in examples)
    write_atomic(path, text.encode("utf-8"))
    manifest = _manifest(source, path, parts, examples)
    if inline:
        partial = out_dir / (INLINE_FILE + ".partial")
        with partial.open("w", encoding="utf-8") as f:
            f.writelines(inline_lines(stores, examples))
        partial.replace(out_dir / INLINE_FILE)
        manifest["inline_sha256"] = sha256_of(out_dir / INLINE_FILE)
    write_atomic(out_dir / MANIFEST_FILE, (json.dumps(manifest, indent=2) + "\n").encode())
    return manifest


def _share(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0


def _balance(examples: list[ExampleReference]) -> dict[str, dict[str, int]]:
    """Claims and evidence by who says them (the owner of the slot or the other speaker)
    and label: the counterbalance the design promises, counted over examples."""
    table: dict[str, Counter[str]] = {"useful": Counter(), "harmful": Counter()}
    for e in examples:
        meta = e.model_extra["metadata"] if e.model_extra else {}
        owners = {
            c["slot"]: c["speaker"] for c in meta.get("claims", []) if c["kind"] == "evidence"
        }
        for c in meta.get("claims", []):
            if c["kind"] == "claim":
                who = "owner" if owners.get(c["slot"]) == c["speaker"] else "other"
                table[c["label"]][who] += 1
            elif c["kind"] in ("evidence", "equivalent"):
                table[c["label"]][c["kind"]] += 1
    return {label: dict(sorted(counts.items())) for label, counts in table.items()}


def _manifest(
    source: Path, path: Path, parts: list[Part], examples: list[ExampleReference]
) -> dict[str, Any]:
    sizes = {p.store.store_id: len(p.store.memory_store) for p in parts}
    banks = [sizes[e.store_id] for e in examples]
    meta = [e.model_extra["metadata"] for e in examples if e.model_extra]
    answerable = [m for m in meta if m["answerable"]]
    several = sum(m["needs_several_memories"] for m in answerable)
    poisoned = sum(bool(m["attack_kinds"]) for m in answerable)
    dropped: Counter[str] = sum((p.dropped for p in parts), Counter())
    kinds = Counter(k for e in examples for k in e.attack_kinds.values())
    return {
        "source_sha256": sha256_of(source),
        "builder_version": BUILDER_VERSION,
        "sha256": sha256_of(path),
        "examples": len(examples),
        "answerable": len(answerable),
        "unanswerable": len(meta) - len(answerable),
        "unanswerable_share": _share(len(meta) - len(answerable), len(meta)),
        "needs_several_evidence_turns": several,
        "needs_several_share": _share(several, len(answerable)),
        "poisoned_share": _share(poisoned, len(answerable)),
        "equivalents": sum(c["kind"] == "equivalent" for m in meta for c in m["claims"]),
        "families": dict(sorted(Counter(e.task_family for e in examples).items())),
        "attack_kinds": dict(sorted(kinds.items())),
        "claims_by_voice": _balance(examples),
        "bank_size": {
            "min": min(banks),
            "median": statistics.median(banks),
            "max": max(banks),
            "by_conversation": dict(sorted(sizes.items())),
        },
        "history_turns": {
            p.store.store_id: {
                "locomo": len(p.history.new_ids),
                "inserted": len(p.inserts),
                "fillers": len(p.history.fillers),
            }
            for p in sorted(parts, key=lambda p: p.store.store_id)
        },
        "conversations": dict(sorted(Counter(e.store_id for e in examples).items())),
        "splits": {s: sorted(c for c in sizes if LEGACY_SPLITS.get(c) == s) for s in SPLITS},
        "dropped": dict(sorted(dropped.items())),
    }


def xl4_path() -> Path:
    """XL v4, built into the cache on first use and reused while it checks out."""
    return cached_build(BUILDER_VERSION, STORE_FILE, MANIFEST_FILE, build_xl4)
