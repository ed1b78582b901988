"""The v3 build: each conversation's history and store, its examples, in stratified order,
written atomically with a manifest (and, on request, every example inline)."""

from __future__ import annotations

import hashlib
import json
import statistics
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from cmi_inspect.causal_locomo.data import SPLITS, TASK_FAMILIES, sha256_of
from cmi_inspect.causal_locomo.data_files import ExampleReference, MemoryStore, expand
from cmi_inspect.dates import format_day
from cmi_inspect.xl.build import cached_build, spread, write_atomic
from cmi_inspect.xl.locomo import (
    Conversation,
    ExampleContext,
    example_contexts,
    load_locomo,
    normalise_evidence,
)
from cmi_inspect.xl.memories import is_sound, resolve_dates
from cmi_inspect.xl.params import FAMILY_BY_CATEGORY
from cmi_inspect.xl.phrasing import statements
from cmi_inspect.xl.v3.examples import answerable_reference, unanswerable_reference
from cmi_inspect.xl.v3.history import History, said_history
from cmi_inspect.xl.v3.params import (
    BUILDER_VERSION,
    CHANNELS,
    INLINE_FILE,
    LEGACY_SPLITS,
    MANIFEST_FILE,
    STORE_FILE,
    UNANSWERABLE_RATIO,
    UNANSWERED,
    seeded,
)
from cmi_inspect.xl.v3.plan import Insert, plan_turn
from cmi_inspect.xl.v3.slots import Asked, find_slot
from cmi_inspect.xl.v3.store import memory_store


@dataclass
class Part:
    """One conversation's share of the build."""

    store: MemoryStore
    examples: list[ExampleReference]
    history: History
    inserts: list[Insert]
    dropped: Counter[str] = field(default_factory=Counter)


def sound(ctx: ExampleContext) -> bool:
    """The evidence turns' memories hold the answer (``memories.is_sound``), read from what
    any phrasing of them writes: the speakers, the day, the statements with dates resolved."""
    said = []
    for turn in ctx.evidence:
        session = ctx.session(turn.session)
        kept = resolve_dates(statements(turn.text), session.day)
        said.append(f"{turn.speaker} {ctx.conv.listener(turn.speaker)} "
                    f"{format_day(session.day)}: {kept}")  # fmt: skip
    return is_sound(said, ctx.answer)


def _unanswerable(conv: Conversation, wanted: int) -> tuple[list[tuple[ExampleContext, str]], int]:
    """The conversation's adversarial questions (category 5) that become examples: the
    first ``wanted`` by a hash of their id, in the conversation's order; and how many not."""
    items = []
    for index, item in enumerate(conv.qa):
        adversarial = str(item.get("adversarial_answer") or "").strip()
        if int(item["category"]) != 5 or not adversarial:
            continue
        example_id = f"{conv.sample_id}_qa_{index:04d}"
        turns = [conv.turn(i) for i in normalise_evidence(item.get("evidence", []))]
        ctx = ExampleContext(
            conv=conv, example_id=example_id, question=str(item["question"]).strip(),
            answer=UNANSWERED, category=5, evidence=[t for t in turns if t is not None],
            past=list(conv.sessions.values()),
        )  # fmt: skip
        items.append((ctx, adversarial))
    drawn = sorted(items, key=lambda c: _hash(c[0].example_id))[:wanted]
    chosen = {c[0].example_id for c in drawn}
    return [c for c in items if c[0].example_id in chosen], len(items) - len(chosen)


def _hash(name: str) -> str:
    return hashlib.sha256(f"{BUILDER_VERSION}/{name}".encode()).hexdigest()


def conversation_part(conv: Conversation) -> Part:
    """A conversation's history with its poison said, its store and its examples."""
    dropped: Counter[str] = Counter()
    answerable = []
    for _, ctx, reason in example_contexts(conv):
        if ctx is None:
            if reason != "no_gold_answer":
                dropped[reason] += 1
            continue
        ctx = replace(ctx, past=list(conv.sessions.values()))
        if sound(ctx):
            answerable.append(ctx)
        else:
            dropped["unsound"] += 1
    unanswerable, undrawn = _unanswerable(conv, round(len(answerable) * UNANSWERABLE_RATIO))
    dropped["unanswerable_not_drawn"] += undrawn
    slots = {ctx.example_id: find_slot(ctx) for ctx in answerable}
    asked: dict[str, dict[str, Asked]] = {}
    for ctx in answerable:
        slot = slots[ctx.example_id]
        if slot is not None:
            asked.setdefault(slot.turn.dia_id, {}).setdefault(slot.key, (ctx, slot))
    inserts = [i for by_key in asked.values() for i in plan_turn(list(by_key.values()))]
    history = said_history(conv, inserts)
    store = memory_store(conv, history.sessions)
    by_turn: dict[str, list[Insert]] = {}
    for insert in inserts:
        by_turn.setdefault(insert.turn.dia_id, []).append(insert)
    split = LEGACY_SPLITS.get(conv.sample_id)
    examples = []
    for ctx in answerable:
        about = [i for t in ctx.evidence for i in by_turn.get(t.dia_id, [])]
        family = FAMILY_BY_CATEGORY[ctx.category]
        examples.append(
            answerable_reference(ctx, family, slots[ctx.example_id], history, about, split)
        )
    examples += [unanswerable_reference(c, a, history, split) for c, a in unanswerable]
    return Part(store, examples, history, inserts, dropped)


def stratified_order(examples: list[ExampleReference]) -> list[ExampleReference]:
    """Families interleaved, and conversations within each, so any prefix is a fair sample
    (each family, and each conversation in a family, in proportion, give or take one)."""
    by_family: list[ExampleReference] = []
    for family in TASK_FAMILIES:
        members = [e for e in examples if e.task_family == family]
        seeded(family, "order").shuffle(members)
        keyed = spread(members, lambda e: e.store_id)
        by_family += [e for _, _, e in sorted(keyed, key=lambda k: k[:2])]
    keyed = spread(by_family, lambda e: e.task_family)
    return [e for _, _, e in sorted(keyed, key=lambda k: (k[0], TASK_FAMILIES.index(k[1])))]  # type: ignore[arg-type]


def _line(model: ExampleReference | MemoryStore) -> str:
    data = model.model_dump(mode="json", exclude_unset=True)
    return json.dumps(data, ensure_ascii=False, sort_keys=True) + "\n"


def build_xl3(source: Path, out_dir: Path, inline: bool = False) -> dict[str, Any]:
    """Build XL v3 from locomo10.json into ``out_dir``; return the manifest."""
    source, out_dir = Path(source), Path(out_dir)
    parts = [conversation_part(conv) for conv in load_locomo(source)]
    stores = sorted((p.store for p in parts), key=lambda s: s.store_id)
    examples = stratified_order([e for p in parts for e in p.examples])
    path = out_dir / STORE_FILE
    text = "".join(_line(s) for s in stores) + "".join(_line(e) for e in examples)
    write_atomic(path, text.encode("utf-8"))
    if inline:
        _write_inline(out_dir / INLINE_FILE, stores, examples)
    manifest = _manifest(source, path, parts, examples)
    if inline:
        manifest["inline_sha256"] = sha256_of(out_dir / INLINE_FILE)
    write_atomic(out_dir / MANIFEST_FILE, (json.dumps(manifest, indent=2) + "\n").encode())
    return manifest


def inline_lines(stores: list[MemoryStore], examples: list[ExampleReference]) -> Iterator[str]:
    """Every example with its whole bank and history, as a line of the release's schema."""
    by_id = {s.store_id: s for s in stores}
    for example in examples:
        record = expand(example, by_id[example.store_id])
        data = record.model_dump(mode="json", exclude_unset=True)
        yield json.dumps(data, ensure_ascii=False, sort_keys=True) + "\n"


def _write_inline(path: Path, stores: list[MemoryStore], examples: list[ExampleReference]) -> None:
    partial = path.with_name(path.name + ".partial")
    with partial.open("w", encoding="utf-8") as f:
        f.writelines(inline_lines(stores, examples))
    partial.replace(path)


def _share(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0


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
    edits = Counter(c["edit"] for m in meta for c in m["claims"] if c["label"] == "harmful")
    return {
        "source_sha256": sha256_of(source),
        "builder_version": BUILDER_VERSION,
        "sha256": sha256_of(path),
        "examples": len(examples),
        "answerable": len(answerable),
        "unanswerable": len(meta) - len(answerable),
        "unanswerable_share": _share(len(meta) - len(answerable), len(meta)),
        "needs_several_memories": several,
        "needs_several_share": _share(several, len(answerable)),
        "two_or_more_useful_share": _share(
            sum(m["num_gold_memories"] >= 2 for m in answerable), len(answerable)
        ),
        "poisoned_share": _share(poisoned, len(answerable)),
        "families": dict(sorted(Counter(e.task_family for e in examples).items())),
        "attack_kinds": {kind: kinds[kind] for kind in sorted(CHANNELS)},
        "attack_edits": dict(sorted((k or "none", n) for k, n in edits.items())),
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


def xl3_path() -> Path:
    """XL v3, built into the cache on first use and reused while it checks out."""
    return cached_build(BUILDER_VERSION, STORE_FILE, MANIFEST_FILE, build_xl3)
