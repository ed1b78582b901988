"""-T bank_size: every labelled memory kept, the others closest to the request, ties by hash."""

from __future__ import annotations

import pytest
from cmi_inspect.causal_locomo.bank_size import check_bank_size, smaller_bank
from cmi_inspect.causal_locomo.data import ExampleRecord
from cmi_inspect.errors import UserError


def _record(example_id: str = "conv-1_qa_0000") -> ExampleRecord:
    bank = [
        ("m0", "useful", "Ana adopted a cat named Biscuit."),
        ("m1", "irrelevant", "Ben repainted the garden shed green."),
        ("m2", "irrelevant", "Ana took the cat to the vet for shots."),
        ("m3", "harmful", "Ana adopted a dog named Biscuit."),
        ("m4", "irrelevant", "The cat sleeps on the sofa; Ana loves the cat."),
        ("m5", "irrelevant", "Ben drove to Salamanca."),
        ("m6", "irrelevant", "Ben drove to Porto."),
    ]
    return ExampleRecord.model_validate(
        {
            "example_id": example_id,
            "task_family": "factual_memory_qa",
            "current_task": {"instruction": "What is the name of the cat Ana adopted?"},
            "memory_bank": [
                {"memory_id": i, "label": label, "content": text, "timestamp": 1} for i, label, text in bank
            ],
            "gold_memory_ids": ["m0"],
            "bad_memory_ids": ["m1", "m2", "m3", "m4", "m5", "m6"],
            "scoring_criteria": {"expected_answer": "Biscuit"},
        }
    )


def test_the_labelled_memories_and_the_closest_others_are_kept_in_bank_order():
    record = smaller_bank(_record(), 4)
    # m2 and m4 share "cat" and "Ana" with the request; m1, m5, m6 share nothing
    assert [m.memory_id for m in record.memory_bank] == ["m0", "m2", "m3", "m4"]
    assert record.gold_memory_ids == ["m0"] and record.bad_memory_ids == ["m2", "m3", "m4"]


def test_ties_go_by_a_hash_of_the_example_and_memory_ids():
    closest = {"m0", "m2", "m3", "m4"}
    drawn = [
        {m.memory_id for m in smaller_bank(_record(f"conv-1_qa_{i:04d}"), 5).memory_bank} - closest for i in range(12)
    ]
    assert all(len(d) == 1 and d <= {"m1", "m5", "m6"} for d in drawn)
    assert len(set.union(*drawn)) > 1  # the tie-broken place goes to another memory by example
    first = smaller_bank(_record(), 5)
    assert [m.memory_id for m in smaller_bank(_record(), 5).memory_bank] == [m.memory_id for m in first.memory_bank]


def test_a_bank_smaller_than_its_labelled_memories_keeps_them_all():
    assert [m.memory_id for m in smaller_bank(_record(), 1).memory_bank] == ["m0", "m3"]
    assert smaller_bank(_record(), 50) == _record()


@pytest.mark.parametrize("bad", [0, -3, "eight", True, 2.5])
def test_a_bank_size_must_be_a_whole_number_of_memories(bad):
    with pytest.raises(UserError, match="-T bank_size must be an integer of at least 1"):
        check_bank_size(bad)
    assert check_bank_size(None) is None and check_bank_size(8) == 8 and check_bank_size("8") == 8
