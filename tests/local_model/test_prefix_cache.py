"""Prefix reuse's pure logic: the exact-reuse cut rule and the saved-state store."""

from __future__ import annotations

import ctypes

from cmi_inspect.local_model import LARGE_BATCH, SavedStates, large_prefix, reusable_prefix
from cmi_inspect.local_model.prefix_cache import worth_waiting


def batch_kinds(n_prompt: int, start: int, block: int, large: int) -> list[object]:
    """Per token of a prompt decoded from ``start`` in ``block``-token batches: "large",
    or the (start, size) of its small batch; tokens before ``start`` count as large."""
    kinds: list[object] = ["large"] * start
    for begin in range(start, n_prompt, block):
        size = min(block, n_prompt - begin)
        kinds += ["large" if size >= large else (begin, size)] * size
    return kinds


def test_reusable_prefix_keeps_every_token_in_the_batch_kind_of_a_fresh_run():
    block, large = 16, 4
    for n_prompt in range(1, 70):
        fresh = batch_kinds(n_prompt, 0, block, large)
        for shared in range(n_prompt + 1):
            valid = [
                cut
                for cut in range(min(shared, n_prompt - 1) + 1)
                if all(kind == "large" for kind in fresh[:cut]) and batch_kinds(n_prompt, cut, block, large) == fresh
            ]
            cut = reusable_prefix(shared, n_prompt, block, large)
            assert cut == max(valid), (n_prompt, shared)  # valid, and the deepest valid one
            decoded = batch_kinds(n_prompt, cut, block, large)
            large_tokens = next((i for i, k in enumerate(decoded) if k != "large"), n_prompt)
            assert large_prefix(cut, n_prompt, block, large) == large_tokens


def test_reuse_cuts_on_the_real_block_size():
    assert reusable_prefix(60, 130, 512) == 60  # a one-memory prompt: its shared instruction
    assert reusable_prefix(60, 100, 512) == 100 - LARGE_BATCH  # the last batch stays large
    assert reusable_prefix(1900, 1036, 512) == 1024  # a fresh run ends in a 12-token batch
    assert reusable_prefix(1480, 2000, 512) == 2000 - 512 - LARGE_BATCH  # not a 8-token batch


def test_saved_states_keep_the_longest_prefixes_within_capacity():
    states = SavedStates(capacity=10)
    states.put((1, 2, 3), (ctypes.c_uint8 * 4)(), 3)
    states.put((1, 2, 3, 4), (ctypes.c_uint8 * 4)(), 4)  # makes the state of (1, 2, 3) redundant
    states.put((5, 6), (ctypes.c_uint8 * 4)(), 2)
    assert list(states.states) == [(1, 2, 3, 4), (5, 6)]
    assert states.longest([1, 2, 3, 9]) == ((1, 2, 3, 4), 3)
    assert states.longest([9]) == ((), 0)
    states.get((1, 2, 3, 4))
    states.put((7,), (ctypes.c_uint8 * 4)(), 1)  # over capacity: the least recently used goes
    assert list(states.states) == [(1, 2, 3, 4), (7,)] and states.size == 8
    states.put((8,), (ctypes.c_uint8 * 11)(), 1)  # larger than the whole capacity: not kept
    assert (8,) not in states.states and states.size == 8


def test_saved_states_offer_only_their_large_batch_tokens():
    states = SavedStates(capacity=100)
    states.put((1, 2, 3, 4, 5), (ctypes.c_uint8 * 4)(), 2)  # tokens 3 to 5 came in a small batch
    states.put((1, 2, 3, 4), (ctypes.c_uint8 * 4)(), 4)
    states.put((1, 2, 3, 4, 5, 6), (ctypes.c_uint8 * 4)(), 3)  # fewer large tokens: both kept
    assert list(states.states) == [(1, 2, 3, 4), (1, 2, 3, 4, 5, 6)]
    assert states.longest([1, 2, 3, 4, 5, 6]) == ((1, 2, 3, 4), 4)


def test_a_prompt_waits_only_for_a_prompt_that_shares_a_block_more_than_what_is_at_hand():
    history = list(range(1100))
    question = [*history, 7, 8, 9]
    assert worth_waiting(question, [history], at_hand=0, block=512)
    assert not worth_waiting(question, [history], at_hand=1100, block=512)  # saved already
    assert not worth_waiting(question, [list(range(5000, 6100))], at_hand=0, block=512)
    assert not worth_waiting(question, [history[:300]], at_hand=0, block=512)  # under a block
    assert not worth_waiting(question, [], at_hand=0, block=512)
