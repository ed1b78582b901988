"""The guard's quality benchmark: its hand-written flips each name a real turn, in enough
kinds and conversations, and what it counts is counted right."""

from __future__ import annotations

from collections import Counter

from benchmarks.guard_quality import DEV, FlipCounts, flip_pairs, flips_in_store, notes_of, read_flips
from cmi_inspect.causal_locomo.xl.locomo import load_locomo, locomo_path
from cmi_inspect.guard import MemoryGuard

from conftest import require_data


def test_every_flip_names_a_real_fact_stating_turn_in_every_conversation_and_kind():
    require_data()
    conversations = {c.sample_id: c for c in load_locomo(locomo_path())}
    flips = read_flips()
    assert len(flips) >= 100
    assert min(Counter(f.kind for f in flips).values()) >= 10 and len({f.kind for f in flips}) >= 10
    assert set(Counter(f.conversation for f in flips)) == set(conversations)
    assert min(Counter(f.conversation for f in flips).values()) >= 10
    assert set(DEV) < set(conversations)
    for flip in flips:
        turn = conversations[flip.conversation].turn(flip.dia_id)
        assert turn is not None, flip
        assert flip.text.strip() and flip.text != turn.text
    assert len({(f.conversation, f.dia_id) for f in flips}) == len(flips)


def test_counts_tell_a_dropped_flip_from_an_inversion():
    counts = FlipCounts()
    counts.add(flip_kept=False, original_kept=True)  # the guard's job
    counts.add(flip_kept=True, original_kept=False)  # the truth dropped, the lie kept
    counts.add(flip_kept=False, original_kept=False)
    assert (counts.flips, counts.flips_dropped, counts.originals_dropped, counts.inverted) == (3, 2, 2, 1)
    assert counts.row("x") == "| x | 3 | 2 (66.7%) | 2 (66.7%) | 1 |"


def test_a_flip_is_checked_beside_its_original_and_inside_the_store():
    require_data()
    conversation = next(c for c in load_locomo(locomo_path()) if c.sample_id == "conv-26")
    flips = [f for f in read_flips() if f.conversation == "conv-26"][:2]
    assert notes_of(conversation)[flips[0].dia_id].startswith("On 8 May 2023, Caroline said: ")
    guard = MemoryGuard(embedder="hashing")
    for counts in (flip_pairs(guard, conversation, flips), flips_in_store(guard, conversation, flips)):
        assert counts.flips == 2 and 0 <= counts.inverted <= counts.originals_dropped <= 2
