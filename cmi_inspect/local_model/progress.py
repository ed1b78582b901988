"""What the embedded engine is doing while a run waits on it, said on standard error.

The first run on a machine probes the CPU (the extra weight buffers, then batching) and
loads the model before any sample starts: minutes on two cores, during which Inspect shows
nothing. Each such step says what it is and how long it usually takes when it starts, and
how long it took when it ends.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager


def say(text: str) -> None:
    print(f"cmi-inspect: {text}", file=sys.stderr, flush=True)


@contextmanager
def step(what: str, usually: str) -> Iterator[None]:
    """Say ``what`` is starting (it ``usually`` takes that long), then how long it took."""
    say(f"{what} ({usually})...")
    start = time.perf_counter()
    try:
        yield
    finally:
        say(f"{what}: done in {time.perf_counter() - start:.0f} s")
