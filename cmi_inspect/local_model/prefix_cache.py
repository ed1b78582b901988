"""Saved KV states of earlier prompts and the rule for reusing them exactly (pure logic).

With flash attention on the CPU, llama.cpp computes a token in a batch of at least
``LARGE_BATCH`` tokens identically wherever the batch starts; smaller batches run other
kernels. A prompt may start from a saved state only where every remaining token is then
decoded in the same kind of batch as in a fresh run, so completions stay bit-for-bit
those of a fresh run (``benchmarks/prefix_exactness.py`` measures it).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

LARGE_BATCH = 64
"""With flash attention on the CPU, llama.cpp computes a token in a batch of at least this
many tokens identically wherever the batch starts and however long it is; smaller batches
run other kernels, whose results differ in the last bits. Measured on the embedded model:
``benchmarks/prefix_exactness.py``."""


class State(Protocol):
    """A serialised KV state: anything with a size in bytes."""

    def __len__(self) -> int: ...


@dataclass
class ReuseStats:
    """Prompt tokens an engine was asked for, those it actually evaluated, and the reply
    tokens it scored by forced decoding."""

    calls: int = 0
    prompt_tokens: int = 0
    evaluated_tokens: int = 0
    scored_tokens: int = 0

    def add(self, other: ReuseStats) -> None:
        self.calls += other.calls
        self.prompt_tokens += other.prompt_tokens
        self.evaluated_tokens += other.evaluated_tokens
        self.scored_tokens += other.scored_tokens


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """How many leading tokens ``a`` and ``b`` share."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def reusable_prefix(shared: int, n_prompt: int, block: int, large: int = LARGE_BATCH) -> int:
    """How many leading tokens of an ``n_prompt``-token prompt to take from a saved state
    whose first ``shared`` tokens match the prompt and were computed in large batches.

    The rest is decoded in ``block``-token batches from there, as llama-cpp-python does,
    and every token must land in the same kind of batch as in a fresh run (which decodes
    from token 0): a large one, or the very same small last batch. So a prompt whose
    fresh run ends in a small batch reuses whole blocks only; any other cut leaves a
    last batch of at least ``large`` tokens.
    """
    if 0 < n_prompt % block < large:
        return min(shared, n_prompt - 1) // block * block
    cut = min(shared, n_prompt - large)
    last = (n_prompt - cut) % block
    # moving the cut back to leave a last batch of ``large`` never passes token 0: that
    # would need n_prompt % block < large, the case above
    return cut - (large - last) if 0 < last < large else cut


def large_prefix(start: int, n_prompt: int, block: int, large: int = LARGE_BATCH) -> int:
    """Leading tokens computed in large batches once a prompt has been decoded from
    ``start`` (a prefix ``reusable_prefix`` allowed) in ``block``-token batches."""
    last = (n_prompt - start) % block or block
    return n_prompt if last >= large else n_prompt - last


def worth_waiting(
    tokens: Sequence[int], busy: Sequence[Sequence[int]], at_hand: int, block: int
) -> bool:
    """Whether a prompt should wait for a prompt being decoded now: it would reuse at least a
    block more of that one's state, once saved, than of any state at hand (whose first
    ``at_hand`` tokens match and were computed in large batches). Questions sharing a long
    history then evaluate it once, whatever order they arrive in, not side by side."""
    n = len(tokens)
    have = reusable_prefix(at_hand, n, block)
    return any(reusable_prefix(common_prefix(b, tokens), n, block) >= have + block for b in busy)


class SavedStates:
    """KV states of earlier prompts keyed by their tokens, least recently used evicted first.

    Holds at most ``capacity`` bytes, so that several interleaved samples (concurrent
    samples, or the questions of one conversation spread through the dataset) each keep
    their shared prefix. Each state records how many of its leading tokens were computed
    in large batches (see ``reusable_prefix``): only those can be reused.
    """

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.states: OrderedDict[tuple[int, ...], tuple[State, int]] = OrderedDict()
        self.size = 0

    def longest(self, tokens: Sequence[int]) -> tuple[tuple[int, ...], int]:
        """The saved prompt sharing the most reusable leading tokens with ``tokens``, and
        how many."""
        best: tuple[tuple[int, ...], int] = ((), 0)
        for key, (_, large) in self.states.items():
            if large <= best[1]:
                continue  # cannot offer more than the best so far
            n = min(common_prefix(key, tokens), large)
            if n > best[1]:
                best = (key, n)
        return best

    def get(self, key: tuple[int, ...]) -> tuple[State, int]:
        """A saved state and its count of large-batch tokens."""
        self.states.move_to_end(key)
        return self.states[key]

    def put(self, key: tuple[int, ...], state: State, large: int) -> None:
        """Save a state; states of prompts that ``key`` extends, with no more large-batch
        tokens, are dropped as redundant."""
        for old in [
            k
            for k, (_, n) in self.states.items()
            if n <= large and len(k) <= len(key) and k == key[: len(k)]
        ]:
            self.size -= len(self.states.pop(old)[0])
        if len(state) > self.capacity:
            return
        self.states[key] = (state, large)
        self.size += len(state)
        while self.size > self.capacity:
            self.size -= len(self.states.popitem(last=False)[1][0])
