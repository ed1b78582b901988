"""Seconds to embed one conversation's store: the first time, again in the same process,
and again in a new process (which reads e5's vectors back from the disk cache).

Every turn of one LoCoMo conversation becomes a memory dated by its session (about 600 for
conv-42); the embedder's ``cosine`` of the conversation's first question against all of
them is timed three times: with empty caches (under a fresh ``CMI_CACHE_DIR``), again in
this process (``embedding_cache``'s LRU), and in a new Python process given the same cache
folder (e5's SQLite store; the hashing and openai embedders keep vectors in memory only,
so a new process embeds again). It prints wall-clock and CPU seconds (all the process's
threads), which tell a loaded machine's figure from an idle one's.

    python benchmarks/embed_store.py [--conversation conv-42] [--embedder e5]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time

from cmi_inspect.causal_locomo.xl.locomo import Conversation, load_locomo, locomo_path
from cmi_inspect.dates import format_day
from cmi_inspect.retrieval import make_embedder


def store(conversation: str) -> tuple[str, list[str]]:
    """The conversation's first question and one memory per turn, dated by its session."""
    found = {c.sample_id: c for c in load_locomo(locomo_path())}
    if conversation not in found:
        sys.exit(f"No conversation {conversation!r}; choose from {', '.join(found)}.")
    conv: Conversation = found[conversation]
    memories = [
        f"On {format_day(s.day)}, {t.speaker} said: {t.text}"
        for s in conv.sessions.values()
        for t in s.turns
    ]
    return str(conv.qa[0]["question"]), memories


async def embed_seconds(embedder: str, request: str, memories: list[str]) -> tuple[float, float]:
    """Wall-clock and CPU seconds (all the process's threads) for one ``cosine`` of the
    request against every memory, model load included."""
    start, cpu = time.perf_counter(), time.process_time()
    await make_embedder(embedder).cosine(request, memories)
    return time.perf_counter() - start, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversation", default="conv-42")
    parser.add_argument("--embedder", default="e5", choices=("e5", "hashing", "openai"))
    parser.add_argument("--again", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    request, memories = store(args.conversation)
    if args.again:  # the new process: print its figures for the parent
        print(*asyncio.run(embed_seconds(args.embedder, request, memories)))
        return
    with tempfile.TemporaryDirectory() as folder:
        os.environ["CMI_CACHE_DIR"] = folder
        first = asyncio.run(embed_seconds(args.embedder, request, memories))
        again = asyncio.run(embed_seconds(args.embedder, request, memories))
        command = [sys.executable, __file__, "--again", "--conversation", args.conversation,
                   "--embedder", args.embedder]  # fmt: skip
        done = subprocess.run(command, check=True, capture_output=True, text=True)
        wall, cpu = (float(x) for x in done.stdout.split())
    print(f"{args.conversation}: {len(memories)} memories and a question, embedder {args.embedder}")
    print("| embedded | seconds | CPU seconds |")
    print("| --- | --- | --- |")
    rows = [("the first time", *first), ("again, same process", *again),
            ("again, a new process (a new embedder; e5 reads the disk)", wall, cpu)]  # fmt: skip
    for name, seconds, used in rows:
        print(f"| {name} | {seconds:.3f} | {used:.3f} |")


if __name__ == "__main__":
    main()
