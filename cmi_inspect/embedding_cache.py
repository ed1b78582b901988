"""Vectors computed once per embedder and text, however many samples and strategies ask.

Every embedder of ``retrieval`` (and the e5 the library adapters hand to mem0, LangMem and
Graphiti) looks a text up here before it embeds it, keyed by the embedder's identity (its
name, model and version: two embedders that would give a text another vector never share
one) and the exact text it reads. In this process the vectors are kept in a bounded LRU
(``MEMORY_VECTORS``), so the examples of one conversation, which share its store, embed it
once. e5's vectors are also kept on disk, one SQLite file per identity under the package's
cache folder (``paths.cache_dir``), so the separate processes of one ``cmi-inspect run``
(and later runs) read them back instead of embedding again: ``CMI_EMBEDDING_CACHE=memory``
keeps them in the process only. A folder that cannot be written is said once in the log and
the run goes on with the process's cache.
"""

from __future__ import annotations

import hashlib
import logging
import os
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from cmi_inspect.errors import choose
from cmi_inspect.paths import cache_dir

logger = logging.getLogger(__name__)

MEMORY_VECTORS = 50_000
"""The most vectors kept in the process (least recently used dropped first): ten LoCoMo
conversations' stores and their questions several times over; 50,000 of e5's 384 float32
numbers are 77 MB."""
CACHE_ENV = "CMI_EMBEDDING_CACHE"
"""``disk`` (the default: e5's vectors also on disk) or ``memory`` (in the process only)."""
CACHE_CHOICES = ("disk", "memory")
SQL_BATCH = 500
"""Texts per SQLite query (under SQLite's limit on bound parameters)."""


class MemoryVectors:
    """A process-wide LRU of vectors by (embedder identity, text); safe across threads."""

    def __init__(self, size: int = MEMORY_VECTORS) -> None:
        self.size = size
        self._items: OrderedDict[tuple[str, str], Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, identity: str, texts: Iterable[str]) -> dict[str, Any]:
        """The vectors held of ``texts``, by text (each found one becomes the most recent)."""
        found = {}
        with self._lock:
            for text in texts:
                key = (identity, text)
                if key in self._items:
                    self._items.move_to_end(key)
                    found[text] = self._items[key]
        return found

    def put(self, identity: str, vectors: Mapping[str, Any]) -> None:
        with self._lock:
            for text, vector in vectors.items():
                self._items[identity, text] = vector
                self._items.move_to_end((identity, text))
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def __len__(self) -> int:
        return len(self._items)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


class DiskVectors:
    """One embedder's dense vectors in a SQLite file, by the sha256 of the text; several
    processes may read and write it at once (SQLite's own locking, write-ahead log)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as db:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(
                "CREATE TABLE IF NOT EXISTS vectors "
                "(digest BLOB PRIMARY KEY, dtype TEXT NOT NULL, vector BLOB NOT NULL)"
            )

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=60)

    def get(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        by_digest = {_digest(t): t for t in texts}
        digests = list(by_digest)
        found = {}
        with self._connect() as db:
            for start in range(0, len(digests), SQL_BATCH):
                part = digests[start : start + SQL_BATCH]
                rows = db.execute(
                    "SELECT digest, dtype, vector FROM vectors WHERE digest IN "
                    f"({','.join('?' * len(part))})",
                    part,
                )
                for digest, dtype, blob in rows:
                    found[by_digest[digest]] = np.frombuffer(blob, dtype=dtype).copy()
        return found

    def put(self, vectors: Mapping[str, np.ndarray]) -> None:
        rows = [(_digest(t), v.dtype.str, v.tobytes()) for t, v in vectors.items()]
        with self._connect() as db:
            db.executemany("INSERT OR IGNORE INTO vectors VALUES (?, ?, ?)", rows)


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode()).digest()


MEMORY = MemoryVectors()
"""The process's vectors, shared by every embedder."""
_disks: dict[str, DiskVectors | None] = {}
_disks_lock = threading.Lock()


def cache_choice() -> str:
    """``CMI_EMBEDDING_CACHE`` (``disk`` when unset); another value is one line."""
    return choose(CACHE_ENV, os.environ.get(CACHE_ENV) or "disk", CACHE_CHOICES)


def disk_vectors(identity: str) -> DiskVectors | None:
    """The disk store of an embedder's vectors, opened once per process; None when the
    cache is kept in memory, or its folder cannot be written (said once in the log)."""
    if cache_choice() != "disk":
        return None
    with _disks_lock:
        if identity not in _disks:
            slug = hashlib.sha256(identity.encode()).hexdigest()[:16]
            path = cache_dir() / "embeddings" / f"{slug}.sqlite3"
            try:
                _disks[identity] = DiskVectors(path)
            except (OSError, sqlite3.Error) as ex:
                logger.warning("embedding cache %s not usable (%s): kept in memory", path, ex)
                _disks[identity] = None
        return _disks[identity]


def cached(identity: str, texts: Sequence[str], disk: DiskVectors | None) -> dict[str, Any]:
    """The vectors of ``texts`` already computed, by text: the process's, then the disk's
    (which the process then keeps too)."""
    found = MEMORY.get(identity, texts)
    missing = [t for t in dict.fromkeys(texts) if t not in found]
    if missing and disk is not None:
        try:
            stored = disk.get(missing)
        except sqlite3.Error as ex:
            logger.warning("embedding cache %s not readable (%s)", disk.path, ex)
            stored = {}
        MEMORY.put(identity, stored)
        found |= stored
    return found


def keep(identity: str, vectors: Mapping[str, Any], disk: DiskVectors | None) -> None:
    """Keep newly computed vectors in the process and, when given, on disk."""
    MEMORY.put(identity, vectors)
    if disk is not None and vectors:
        try:
            disk.put(vectors)
        except sqlite3.Error as ex:
            logger.warning("embedding cache %s not writable (%s)", disk.path, ex)
