"""-T bank_size: the top N by BM25 to the request, label-blind, ties by hash, in bank order."""

from __future__ import annotations

import math

import pytest
from cmi_inspect.causal_locomo.bank_size import bm25_scores, check_bank_size, draw_bank, ranked_ids, smaller_bank
from cmi_inspect.causal_locomo.data import ExampleRecord
from cmi_inspect.errors import UserError

BANK = [  # id, label, speaker, listener, day of March 2022, what was said (XL v3's form)
    ("D1:1", "useful", "Ana", "Ben", 3, "I adopted a cat and named him Biscuit."),
    ("D1:2", "irrelevant", "Ben", "Ana", 3, "I repainted the garden shed green."),
    ("D1:3", "irrelevant", "Ana", "Ben", 3, "The cat goes to the vet for shots on Friday."),
    ("D2:1", "harmful", "Ana", "Ben", 9, "I adopted a dog and named him Biscuit."),
    ("D2:2", "irrelevant", "Ben", "Ana", 9, "I drove to Salamanca."),
    ("D2:3", "useful", "Ben", "Ana", 9, "How is Biscuit settling in?"),
    ("D3:1", "irrelevant", "Ben", "Ana", 12, "I drove to Porto."),
    ("D3:2", "harmful", "Ana", "Ben", 12, "The landlord said no pets."),
]
"""Every memory names Ana; D1:1 also shares "adopted", "cat" and "name" with the request,
D2:1 "adopted" and "name", D1:3 "cat": the rest share Ana alone, useful D2:3 among them."""


def _record(example_id: str = "conv-1_qa_0000", question: str = "What is the name of the cat Ana adopted?"):
    memories = [
        {
            "memory_id": dia_id,
            "content": f'{speaker}, to {listener} on {day} March 2022: "{said}"',
            "label": label,
            "timestamp": day,
            "scope": speaker,
            "type": "conversation_memory",
            "source_dia_ids": [dia_id],
            "source_session_id": f"s{dia_id[1]}",
        }
        for dia_id, label, speaker, listener, day, said in BANK
    ]
    return ExampleRecord.model_validate(
        {
            "example_id": example_id,
            "task_family": "factual_memory_qa",
            "current_task": {"instruction": question},
            "memory_bank": memories,
            "gold_memory_ids": ["D1:1", "D2:3"],
            "bad_memory_ids": [m["memory_id"] for m in memories if m["label"] != "useful"],
            "scoring_criteria": {"expected_answer": "Biscuit"},
            "split": "test",
            "dated_by_source": True,
        }
    )


def _ids(record: ExampleRecord) -> list[str]:
    return [m.memory_id for m in record.memory_bank]


def test_bm25_weighs_a_rare_repeated_word_by_the_usual_formula():
    # "cat" stands in one text of two: idf log(2); text 1 has it twice in 3 words, average 2 words
    expected = math.log(2) * 2 * 2.2 / (2 + 1.2 * (0.25 + 0.75 * 3 / 2))
    assert bm25_scores("a cat?", ["cat cat dog", "dog"]) == pytest.approx([expected, 0.0])


def test_the_bank_is_the_top_n_by_bm25_in_bank_order_and_no_labelled_memory_is_forced_in():
    drawn = draw_bank(_record(), 3)
    assert _ids(drawn.record) == ["D1:1", "D1:3", "D2:1"]  # ranked D1:1, D2:1, D1:3; kept in bank order
    assert drawn.record.gold_memory_ids == ["D1:1", "D2:3"]  # recall counts the lost useful one
    assert drawn.record.bad_memory_ids == ["D1:3", "D2:1"]
    assert (drawn.useful_lost, drawn.harmful_lost) == (1, 1)  # D2:3 and D3:2 share Ana alone: left out
    assert smaller_bank(_record(), 3) == drawn.record


def test_the_lost_counts_are_the_labelled_memories_left_out():
    one = draw_bank(_record(), 1)
    assert _ids(one.record) == ["D1:1"] and (one.useful_lost, one.harmful_lost) == (1, 2)
    whole = draw_bank(_record(), len(BANK))
    assert whole.record == _record() and (whole.useful_lost, whole.harmful_lost) == (0, 0)


def test_ties_go_by_a_hash_of_the_example_and_memory_ids_whatever_the_labels():
    def unrelated(i: int) -> set[str]:  # no memory shares a word with the question: all tie at 0
        return set(_ids(smaller_bank(_record(f"conv-1_qa_{i:04d}", "Which submarine is yellow?"), 2)))

    drawn = [unrelated(i) for i in range(16)]
    assert all(len(d) == 2 for d in drawn) and len({frozenset(d) for d in drawn}) > 4
    assert any(d & {"D1:1", "D2:3", "D2:1", "D3:2"} for d in drawn)  # labelled ones are drawn as any other
    assert any(not d & {"D1:1", "D2:3", "D2:1", "D3:2"} for d in drawn)
    assert drawn == [unrelated(i) for i in range(16)]  # the same every time


def test_the_draw_is_deterministic_and_keeps_the_banks_order_whatever_it_is():
    record = _record()
    assert draw_bank(record, 5) == draw_bank(record, 5)
    reversed_bank = record.model_copy(update={"memory_bank": record.memory_bank[::-1]})
    drawn = smaller_bank(reversed_bank, 5)
    assert set(_ids(drawn)) == set(_ids(smaller_bank(record, 5)))  # the draw reads no position
    assert _ids(drawn) == [i for i in _ids(reversed_bank) if i in set(_ids(drawn))]


def test_an_xl_banks_draw_is_its_top_n_and_counts_what_it_left_out(mini_records):
    lost_useful = 0
    for record in mini_records:
        drawn = draw_bank(record, 8)
        kept = set(_ids(drawn.record))
        assert kept == set(ranked_ids(record)[:8]) and len(kept) == 8
        scores = bm25_scores(record.current_task.instruction, [m.content for m in record.memory_bank])
        by_id = dict(zip(_ids(record), scores, strict=True))
        assert min(by_id[i] for i in kept) >= max(s for i, s in by_id.items() if i not in kept)
        assert _ids(drawn.record) == [i for i in _ids(record) if i in kept]
        assert drawn.useful_lost == len(set(record.gold_memory_ids) - kept)
        assert drawn.harmful_lost == sum(m.label == "harmful" and m.memory_id not in kept for m in record.memory_bank)
        assert drawn.record.gold_memory_ids == record.gold_memory_ids
        lost_useful += drawn.useful_lost
    assert lost_useful > 0  # no useful memory is kept for being useful


@pytest.mark.parametrize("bad", [0, -3, "eight", True, 2.5])
def test_a_bank_size_must_be_a_whole_number_of_memories(bad):
    with pytest.raises(UserError, match="-T bank_size must be an integer of at least 1"):
        check_bank_size(bad)
    assert check_bank_size(None) is None and check_bank_size(8) == 8 and check_bank_size("8") == 8
