"""The claim-level conflict relation: the same slot with another value, found without comparing every pair."""

from __future__ import annotations

import itertools
import random
from collections import Counter

import pytest
from cmi_inspect.causal_locomo.strategies.cmi.claims import Claim, claim_conflicts, rarity

NAMES = ["Priya", "Jon", "Ola", "Marek", "Sam", "Ines", "Tomas", "Yuki"]
DOINGS = [
    ("adopted a greyhound called", ["Comet", "Biscuit", "Pepper", "Rocket"]),
    ("started a pottery class in", ["Lisbon", "Porto", "Braga", "Faro"]),
    ("bought a secondhand bike from", ["Lena", "Carlos", "Hugo", "Noor"]),
    ("ran a half marathon in", ["Seville", "Valencia", "Bilbao", "Malaga"]),
    ("planted tomatoes and basil with", ["Grandma Rosa", "Uncle Tim", "Aunt Mei", "Cousin Ade"]),
]
MONTHS = ["March", "May", "July", "October"]


def synthetic_store(size: int, seed: int = 0) -> list[str]:
    """``size`` dated statements of a few people doing a few things, some of them edits of
    another (the same statement with another value, or on another day)."""
    rng = random.Random(seed)
    out: list[str] = []
    while len(out) < size:
        name, (doing, values), month = rng.choice(NAMES), rng.choice(DOINGS), rng.choice(MONTHS)
        day = rng.randint(1, 28)
        out.append(f"On {day} {month} 2023, {name} said they {doing} {rng.choice(values)}.")
    return out


def brute_force(claims: list[Claim], weight, overlap: float) -> dict[int, dict[int, float]]:
    """The relation by its definition, every pair compared."""
    found: dict[int, dict[int, float]] = {}
    for i, j in itertools.combinations(range(len(claims)), 2):
        a, b = claims[i], claims[j]
        heavier = max(sum(map(weight, a.slot)), sum(map(weight, b.slot)))
        share = sum(map(weight, a.slot & b.slot)) / heavier if heavier else 0.0
        if share >= overlap and a.other_value(b):
            found.setdefault(i, {})[j] = found.setdefault(j, {})[i] = share
    return found


@pytest.mark.parametrize("overlap", [0.3, 0.5, 0.8])
def test_prefix_filtering_finds_exactly_the_pairs_that_comparing_every_pair_finds(overlap):
    claims = [Claim.of(t) for t in synthetic_store(300)]
    weight = rarity(Counter(), 0, claims)
    found = claim_conflicts(claims, weight, overlap)
    expected = brute_force(claims, weight, overlap)
    assert found.keys() == expected.keys()
    assert all(found[i] == pytest.approx(expected[i]) for i in expected)
    # a conversation's store is not one claim: at 0.5 most memories conflict with few others
    pairs = sum(map(len, found.values()))
    assert 0 < pairs and (overlap < 0.5 or pairs < 0.2 * len(claims) * (len(claims) - 1))


def test_many_versions_of_one_claim_are_compared_with_the_nearest_only():
    from cmi_inspect.causal_locomo.strategies.cmi.claims import MAX_PARTNERS

    days = [f"{d} {m} 2022" for m in ("March", "April", "May", "June") for d in range(1, 29)]
    texts = [f"Priya adopted the greyhound Comet on {day}." for day in days] * 6  # 672 copies
    claims = [Claim.of(t) for t in texts]
    found = claim_conflicts(claims, rarity(Counter(), 0, claims), 0.5)
    assert all(found.get(i) for i in range(len(claims)))  # every copy meets another date
    assert max(map(len, found.values())) <= 2 * MAX_PARTNERS < len(claims) - 1
    assert all(i not in found[i] for i in found) and all(i in found[j] for i in found for j in found[i])


def conflict(a: str, b: str, overlap: float = 0.5) -> bool:
    claims = [Claim.of(a), Claim.of(b)]
    background = Counter({w: 1 for w in "priya jon ola adopt went hik".split()})  # common in the history
    return bool(claim_conflicts(claims, rarity(background, 20, claims), overlap))


def test_another_value_is_a_date_a_number_a_negation_or_a_swapped_word():
    true = "Priya adopted the greyhound Comet on 3 March 2022."
    assert conflict(true, "Priya adopted the greyhound Comet on 9 May 2023.")  # another date
    assert conflict(true, "Priya adopted the greyhound Biscuit on 3 March 2022.")  # another name
    assert conflict(true, "Priya never adopted the greyhound Comet on 3 March 2022.")  # negated
    assert conflict("Jon ran 5 laps of the park track.", "Jon ran 12 laps of the park track.")
    # the same claim said again, or with more detail, is no other value
    assert not conflict(true, "On 3 March 2022 Priya adopted Comet, the greyhound.")
    assert not conflict(true, "Priya adopted the greyhound Comet on 3 March 2022 at the shelter in Leeds.")
    # another claim altogether shares no slot
    assert not conflict(true, "Jon went hiking with his sister Ola on 3 March 2022.")


SAID = [
    "the bakery opens early on weekdays",
    "her cello lesson moved online",
    "the tram strike ended",
    "a heron nests by the canal",
    "the library fines were waived",
    "his landlord fixed the boiler",
    "the choir sings carols downtown",
    "their allotment flooded overnight",
]


def test_the_slot_weighs_rare_words_so_the_speakers_and_a_template_are_no_slot():
    store = [f"From Priya and Jon's chat: Priya mentioned that {said}." for said in SAID]
    claims = [Claim.of(t) for t in store]
    history = Counter({"priya": 15, "jon": 15})  # the speakers stand in most of 20 windows
    assert claim_conflicts(claims, rarity(history, 20, claims), 0.5) == {}
    assert claims[0].slot.isdisjoint({"mention", "mentioned"})  # words about sources are no slot
    edited = Claim.of("From Priya and Jon's chat: Priya mentioned that the bakery opens late on weekdays.")
    found = claim_conflicts([*claims, edited], rarity(history, 20, [*claims, edited]), 0.5)
    assert found.keys() == {0, len(claims)}


def test_a_threshold_above_one_finds_nothing_and_zero_pairs_every_other_value():
    texts = synthetic_store(20, seed=3)
    claims = [Claim.of(t) for t in texts]
    weight = rarity(Counter(), 0, claims)
    assert claim_conflicts(claims, weight, 1.01) == {}
    everything = claim_conflicts(claims, weight, 0.0)
    assert everything == brute_force(claims, weight, 0.0)
    assert any(len(v) > 0 for v in everything.values())
