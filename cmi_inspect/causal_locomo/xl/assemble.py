"""The XL v5 build: each conversation's store and the examples the verdict file confirms,
in stratified order, written atomically with a manifest (and, on request, every example
inline). Deterministic: the same LoCoMo and verdict file give the same bytes."""

from __future__ import annotations

import hashlib
import json
import statistics
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

from cmi_inspect.causal_locomo.data import TASK_FAMILIES, sha256_of
from cmi_inspect.causal_locomo.data_files import ExampleReference, MemoryStore, expand
from cmi_inspect.causal_locomo.xl.examples import BUILDER_VERSION, drafts, reference
from cmi_inspect.causal_locomo.xl.locomo import LOCOMO_SHA256, load_locomo, locomo_path
from cmi_inspect.causal_locomo.xl.store import conversation_store
from cmi_inspect.causal_locomo.xl.verdicts import VERDICTS, load_verdicts
from cmi_inspect.paths import cache_dir

T = TypeVar("T")

GROUPS = ("confirmed", "control", "unanswerable")
STORE_FILE = "causal_locomo_xl.jsonl"
INLINE_FILE = "causal_locomo_xl_inline.jsonl"
MANIFEST_FILE = "manifest.json"


def spread(group: list[T], stratum: Callable[[T], str]) -> list[tuple[float, str, T]]:
    """Key each item by (rank + 0.5) / size of its stratum, keeping the group's order."""
    strata: dict[str, list[T]] = {}
    for item in group:
        strata.setdefault(stratum(item), []).append(item)
    return [
        ((rank + 0.5) / len(members), name, item)
        for name, members in sorted(strata.items())
        for rank, item in enumerate(members)
    ]


def stratified_order(examples: list[ExampleReference]) -> list[ExampleReference]:
    """Families interleaved, and conversations within each, so any prefix is a fair sample;
    within a conversation the order is a hash of the id (it says nothing of a label)."""
    by_family: list[ExampleReference] = []
    for family in TASK_FAMILIES:
        members = [e for e in examples if e.task_family == family]
        members.sort(key=lambda e: e.example_id[-8:])
        keyed = spread(members, lambda e: e.store_id)
        by_family += [e for _, _, e in sorted(keyed, key=lambda k: k[:2])]
    keyed = spread(by_family, lambda e: e.task_family)
    return [e for _, _, e in sorted(keyed, key=lambda k: (k[0], TASK_FAMILIES.index(k[1])))]  # type: ignore[arg-type]


def _line(model: ExampleReference | MemoryStore) -> str:
    data = model.model_dump(mode="json", exclude_unset=True)
    return json.dumps(data, ensure_ascii=False, sort_keys=True) + "\n"


def write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=path.parent, delete=False) as tmp:
        tmp.write(data)
    Path(tmp.name).replace(path)


def inline_lines(stores: list[MemoryStore], examples: list[ExampleReference]) -> Iterator[str]:
    """Every example with its whole store and history, as a line of the release's schema."""
    by_id = {s.store_id: s for s in stores}
    for example in examples:
        record = expand(example, by_id[example.store_id])
        data = record.model_dump(mode="json", exclude_unset=True)
        yield json.dumps(data, ensure_ascii=False, sort_keys=True) + "\n"


def build_xl(
    source: Path, out_dir: Path, inline: bool = False, verdicts: Path | None = None
) -> dict[str, Any]:
    """Build XL from locomo10.json and a verdict file (the shipped one by default) into
    ``out_dir``; the manifest."""
    source, out_dir = Path(source), Path(out_dir)
    verdicts = verdicts or VERDICTS
    conversations = load_locomo(source)
    stores = {c.sample_id: conversation_store(c) for c in conversations}
    chosen = drafts(conversations, stores, load_verdicts(verdicts))
    examples = stratified_order([reference(d) for d in chosen])
    ordered = [stores[k] for k in sorted(stores)]
    path = out_dir / STORE_FILE
    text = "".join(_line(s) for s in ordered) + "".join(_line(e) for e in examples)
    write_atomic(path, text.encode("utf-8"))
    manifest = _manifest(source, verdicts, path, ordered, examples)
    if inline:
        partial = out_dir / (INLINE_FILE + ".partial")
        with partial.open("w", encoding="utf-8") as f:
            f.writelines(inline_lines(ordered, examples))
        partial.replace(out_dir / INLINE_FILE)
        manifest["inline_sha256"] = sha256_of(out_dir / INLINE_FILE)
    write_atomic(out_dir / MANIFEST_FILE, (json.dumps(manifest, indent=2) + "\n").encode())
    return manifest


def _manifest(
    source: Path,
    verdicts: Path,
    path: Path,
    stores: list[MemoryStore],
    examples: list[ExampleReference],
) -> dict[str, Any]:
    meta = [e.model_extra["metadata"] for e in examples if e.model_extra]
    groups = Counter(m["group"] for m in meta)
    by_conv = Counter((m["conversation"], m["group"]) for m in meta)
    confusers = Counter(len(m["confusers"]) for m in meta if m["group"] == "confirmed")
    sizes = [len(s.memory_store) for s in stores]
    return {
        "source_sha256": sha256_of(source),
        "verdicts_sha256": sha256_of(verdicts),
        "builder_version": BUILDER_VERSION,
        "sha256": sha256_of(path),
        "examples": len(examples),
        "groups": dict(sorted(groups.items())),
        "unanswerable_share": round(groups["unanswerable"] / len(examples), 4) if examples else 0,
        "families": dict(sorted(Counter(e.task_family for e in examples).items())),
        "by_conversation": {
            s.store_id: {g: by_conv[(s.store_id, g)] for g in GROUPS} for s in stores
        },
        "confusers_per_confirmed_example": dict(sorted(confusers.items())),
        "store_size": {"min": min(sizes), "median": statistics.median(sizes), "max": max(sizes)},
    }


@cache
def code_digest() -> str:
    """The sha256 (12 digits) of what XL is built by: the ``xl`` package (its verdict file
    included) and the modules it reads dates, text and records with, so that a cached
    build never outlives them."""
    root = Path(__file__).resolve().parents[2]  # the package, cmi_inspect/
    files = sorted(Path(__file__).resolve().parent.rglob("*.py")) + [VERDICTS]
    files += sorted((root / "dates").rglob("*.py"))
    files += [root / "text.py", root / "causal_locomo" / "data.py"]
    digest = hashlib.sha256()
    for file in files:
        path = file.resolve()
        name = path.relative_to(root).as_posix() if path.is_relative_to(root) else path.name
        digest.update(name.encode() + b"\0" + file.read_bytes())
    return digest.hexdigest()[:12]


def xl_path() -> Path:
    """XL, built into the cache from the pinned LoCoMo on first use and reused while its
    manifest's sha256 checks out."""
    out_dir = cache_dir() / "xl" / f"{BUILDER_VERSION}-{LOCOMO_SHA256[:12]}-{code_digest()}"
    path, manifest_path = out_dir / STORE_FILE, out_dir / MANIFEST_FILE
    if path.is_file() and manifest_path.is_file():
        try:
            manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        except json.JSONDecodeError:
            manifest = {}
        if manifest.get("sha256") == sha256_of(path):
            return path
    build_xl(locomo_path(), out_dir)
    return path
