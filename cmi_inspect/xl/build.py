"""The build: every QA item's record, in stratified order, written atomically with a manifest."""

from __future__ import annotations

import hashlib
import itertools
import json
import tempfile
from collections import Counter
from collections.abc import Callable, Mapping
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

from cmi_inspect.causal_locomo.data import SPLITS, TASK_FAMILIES, Split, sha256_of
from cmi_inspect.paths import cache_dir
from cmi_inspect.xl.locomo import LOCOMO_SHA256, example_contexts, load_locomo, locomo_path
from cmi_inspect.xl.params import (
    BUILDER_VERSION,
    EXAMPLES_BY_CONVERSATION,
    MANIFEST_FILE,
    SPLIT_SHARES,
    XL_FILE,
    seeded,
)
from cmi_inspect.xl.records import XLExample, build_record

T = TypeVar("T")


def spread(group: list[T], stratum: Callable[[T], str]) -> list[tuple[float, str, T]]:
    """Key each record by (rank + 0.5) / size of its stratum, keeping the group's order
    (XL v2's and v3's stratified orders)."""
    strata: dict[str, list[T]] = {}
    for record in group:
        strata.setdefault(stratum(record), []).append(record)
    return [
        ((rank + 0.5) / len(members), name, record)
        for name, members in sorted(strata.items())
        for rank, record in enumerate(members)
    ]


def stratified_order(records: list[XLExample]) -> list[XLExample]:
    """Interleave families, and conversations within each, so every prefix is a fair sample.

    Sorting by the spread keys puts each family (and each conversation within a family) in
    any prefix in proportion to its size, give or take one.
    """
    by_family: list[XLExample] = []
    for family in TASK_FAMILIES:
        members = [r for r in records if r.task_family == family]
        seeded(family, "order").shuffle(members)
        keyed = spread(members, lambda r: r.source_sample_id)
        by_family += [r for _, _, r in sorted(keyed, key=lambda k: k[:2])]
    keyed = spread(by_family, lambda r: r.task_family)
    return [r for _, _, r in sorted(keyed, key=lambda k: (k[0], TASK_FAMILIES.index(k[1])))]


def assign_splits(counts: Mapping[str, int]) -> dict[str, Split]:
    """Conversation -> split: of every assignment of whole conversations, the one whose
    split sizes are closest to ``SPLIT_SHARES`` (squared error; ties to the first found,
    conversations taken in sorted order, splits in ``SPLITS`` order)."""
    names = sorted(counts)
    total = sum(counts.values())
    best: tuple[float, tuple[Split, ...]] | None = None
    for choice in itertools.product(SPLITS, repeat=len(names)):
        sizes = Counter[str]()
        for name, split in zip(names, choice, strict=True):
            sizes[split] += counts[name]
        error = sum((sizes[s] - SPLIT_SHARES[s] * total) ** 2 for s in SPLITS)
        if best is None or error < best[0]:
            best = (error, choice)
    return dict(zip(names, best[1] if best else (), strict=True))


@cache
def conversation_splits() -> dict[str, Split]:
    """Each LoCoMo conversation's split in XL, as the build assigns it (from the pinned
    ``EXAMPLES_BY_CONVERSATION``, so no build is needed): what keeps test conversations out
    of anything fitted or chosen (``strategies.cmi.fitting_gate``)."""
    return assign_splits(EXAMPLES_BY_CONVERSATION)


def split_order(records: list[XLExample]) -> list[XLExample]:
    """Each split in stratified order, the splits interleaved in proportion to their sizes:
    any prefix of a split, and of the whole file, is a stratified sample."""
    ordered = [r for s in SPLITS for r in stratified_order([r for r in records if r.split == s])]
    keyed = spread(ordered, lambda r: str(r.split))
    return [r for _, _, r in sorted(keyed, key=lambda k: (k[0], SPLITS.index(k[1])))]


def write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=path.parent, delete=False) as tmp:
        tmp.write(data)
    Path(tmp.name).replace(path)


def build_xl(source: Path, out_dir: Path) -> dict[str, Any]:
    """Build Causal-LoCoMo-XL from locomo10.json into ``out_dir``; return the manifest."""
    source, out_dir = Path(source), Path(out_dir)
    records: list[XLExample] = []
    dropped: Counter[str] = Counter()
    for conv in load_locomo(source):
        for _, ctx, reason in example_contexts(conv):
            record = build_record(ctx) if ctx else None
            if record is None:
                dropped[reason] += 1
            else:
                records.append(record)
    splits = assign_splits(Counter(r.source_sample_id for r in records))
    records = [r.model_copy(update={"split": splits[r.source_sample_id]}) for r in records]
    records = split_order(records)
    jsonl = out_dir / XL_FILE
    write_atomic(jsonl, "".join(r.line() for r in records).encode("utf-8"))
    kinds = Counter(m.attack_kind for r in records for m in r.memory_bank if m.attack_kind)
    manifest = {
        "source_sha256": sha256_of(source),
        "builder_version": BUILDER_VERSION,
        "sha256": sha256_of(jsonl),
        "examples": len(records),
        "families": dict(sorted(Counter(r.task_family for r in records).items())),
        "attack_kinds": dict(sorted(kinds.items())),
        "splits": {
            s: {
                "conversations": sorted(c for c, t in splits.items() if t == s),
                "examples": sum(r.split == s for r in records),
            }
            for s in SPLITS
        },
        "dropped": dict(sorted(dropped.items())),
    }
    write_atomic(out_dir / MANIFEST_FILE, (json.dumps(manifest, indent=2) + "\n").encode())
    return manifest


@cache
def _code_digest() -> str:
    """The sha256 (12 digits) of the code XL is built by: the ``xl`` package and the modules
    it reads dates, text and records with, so that a cached build never outlives its code."""
    root = Path(__file__).resolve().parent.parent
    files = sorted((root / "xl").rglob("*.py")) + sorted((root / "dates").rglob("*.py"))
    files += [root / "text.py", root / "causal_locomo" / "data.py"]
    digest = hashlib.sha256()
    for file in files:
        digest.update(file.relative_to(root).as_posix().encode() + b"\0" + file.read_bytes())
    return digest.hexdigest()[:12]


def cached_build(
    builder_version: str, name: str, manifest_name: str, build: Callable[[Path, Path], object]
) -> Path:
    """The cached build of ``builder_version`` (from the pinned LoCoMo and the code of now),
    reused while its manifest's sha256 checks out, else built by ``build(locomo, out_dir)``
    (each XL version's ``*_path``)."""
    out_dir = cache_dir() / "xl" / f"{builder_version}-{LOCOMO_SHA256[:12]}-{_code_digest()}"
    path, manifest_path = out_dir / name, out_dir / manifest_name
    if path.is_file() and manifest_path.is_file():
        try:
            manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        except json.JSONDecodeError:
            manifest = {}
        if manifest.get("sha256") == sha256_of(path):
            return path
    build(locomo_path(), out_dir)
    return path


def xl2_path() -> Path:
    """Causal-LoCoMo-XL v2, built into the cache on first use and reused while it checks out."""
    return cached_build(BUILDER_VERSION, XL_FILE, MANIFEST_FILE, build_xl)
