"""Seconds for ``MemoryGuard().check`` on a conversation's store of 100, 500 and 2,000 memories.

The memories are the turns of one LoCoMo conversation (conv-47: 689 turns), each written as
a memory system might keep it, dated by its session; the store is extended to 2,000 by
writing the turns again in another of three phrasings (so the later memories restate
earlier ones in other words, as a store kept by several extractors would). The history is
the conversation's sessions, the request its first question. Each size is checked once
with a fresh guard (its default, claim-level relation, which reads no embedding), and the
script prints the wall-clock and CPU seconds (the CPU seconds tell a loaded machine's figure
from an idle one's), how many memories the guard dropped and the most conflicts any memory
had; each size runs in a new process, so nothing is cached from another (the seconds
include reading the store's dates and words, not Python's start). ``--profile`` prints the
functions the largest size spent most time in. ``--near-copies`` checks instead a store of
one turn said again and again, each copy dated a day later: every copy a version of one
claim, the store that makes comparing memories pairwise quadratic.

    python benchmarks/guard_scale.py [--conversation conv-47] [--sizes 100,500,2000] [--profile]
    python benchmarks/guard_scale.py --near-copies --sizes 2000,10000
"""

from __future__ import annotations

import argparse
import cProfile
import datetime as dt
import pstats
import subprocess
import sys
import time

from cmi_inspect.causal_locomo.xl.locomo import load_locomo, locomo_path
from cmi_inspect.dates import format_day
from cmi_inspect.guard import MemoryGuard, Session

PHRASINGS = (
    "On {day}, {speaker} said: {text}",
    "{speaker}, on {day}: {text}",
    "I noted on {day} that {speaker} told me: {text}",
)


def store(
    conversation: str, size: int, near_copies: bool = False
) -> tuple[str, list[str], list[Session]]:
    """The conversation's first question, ``size`` memories of its turns (or near copies of
    its first long turn) and its sessions."""
    found = {c.sample_id: c for c in load_locomo(locomo_path())}
    if conversation not in found:
        sys.exit(f"No conversation {conversation!r}; choose from {', '.join(found)}.")
    conv = found[conversation]
    turns = [(s, t) for s in conv.sessions.values() for t in s.turns]
    memories: list[str] = []
    if near_copies:
        s, t = next((s, t) for s, t in turns if len(t.text.split()) >= 12)
        for i in range(size):
            day = format_day(s.day + dt.timedelta(days=i))
            memories.append(PHRASINGS[0].format(day=day, speaker=t.speaker, text=t.text))
    else:
        for phrasing in PHRASINGS * (size // (len(PHRASINGS) * len(turns)) + 1):
            for s, t in turns:
                day = format_day(s.day)
                memories.append(phrasing.format(day=day, speaker=t.speaker, text=t.text))
    sessions = [
        Session(s.date_time, [(t.speaker, t.text) for t in s.turns]) for s in conv.sessions.values()
    ]
    return str(conv.qa[0]["question"]), memories[:size], sessions


def check(conversation: str, size: int, profile: bool, near_copies: bool = False) -> str:
    """One size, in this process: its table row (and the profile, when asked)."""
    request, memories, sessions = store(conversation, size, near_copies)
    guard = MemoryGuard()
    profiler = cProfile.Profile()
    start, cpu = time.perf_counter(), time.process_time()
    if profile:
        profiler.enable()
    verdicts = guard.check(request, memories, sessions)
    profiler.disable()
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    if profile:
        pstats.Stats(profiler, stream=sys.stderr).sort_stats("cumulative").print_stats(25)
    dropped = sum(not v.kept for v in verdicts)
    most = max(len(v.conflicts) for v in verdicts)
    return f"| {size} | {seconds:.2f} | {cpu:.2f} | {dropped} | {most} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversation", default="conv-47")
    parser.add_argument("--sizes", default="100,500,2000")
    parser.add_argument("--profile", action="store_true", help="profile the largest size")
    parser.add_argument("--near-copies", action="store_true", help="copies of one turn")
    parser.add_argument("--only", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.only:  # one size, in a new process
        print(check(args.conversation, args.only, args.profile, args.near_copies))
        return
    sizes = [int(n) for n in args.sizes.split(",")]
    print(f"{args.conversation}, request {store(args.conversation, 1)[0]!r}")
    print("| memories | seconds | CPU seconds | dropped | most conflicts of one memory |")
    print("| --- | --- | --- | --- | --- |")
    for size in sizes:
        command = [
            sys.executable,
            __file__,
            "--conversation",
            args.conversation,
            "--only",
            str(size),
        ]
        if args.profile and size == max(sizes):
            command.append("--profile")
        if args.near_copies:
            command.append("--near-copies")
        done = subprocess.run(command, check=True, stdout=subprocess.PIPE, text=True)
        print(done.stdout.strip(), flush=True)


if __name__ == "__main__":
    main()
