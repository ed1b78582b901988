"""Records become Inspect samples carrying what solvers and scorers need."""

from __future__ import annotations

import json

import pytest
from cmi_inspect.causal_locomo.data import PAPER_FAMILIES, TASK_FAMILIES, DataError, sha256_of
from cmi_inspect.causal_locomo.data_files import load_records
from cmi_inspect.causal_locomo.dataset import (
    SCORED_RECORD,
    CausalLocomoMetadata,
    causal_locomo_dataset,
    conversation_of,
    family_order,
    load_examples,
    record_metadata,
    record_to_sample,
    scored_record,
    view_of,
)
from cmi_inspect.errors import PrerequisiteError, UserError

from conftest import SYNTHETIC


def test_a_sample_carries_its_gold_answers_as_target_and_its_whole_record_as_metadata():
    dataset = causal_locomo_dataset(data_file=SYNTHETIC)
    sample = dataset[0]
    assert sample.id == "syn_0000"
    assert sample.input == "When did Priya adopt the greyhound Comet?"
    assert sample.target == ["3 March 2022", "March 3, 2022", "2022-03-03"]  # expected, then aliases
    meta = CausalLocomoMetadata.model_validate(sample.metadata)
    assert (meta.protocol, meta.task_family, meta.gold_memory_ids) == ("paper", "temporal_memory_qa", ["gold_00"])
    assert (meta.data_file, meta.data_sha256) == (str(SYNTHETIC), sha256_of(SYNTHETIC))
    assert meta.target == sample.target and meta.bank_size is None
    view = view_of(meta)
    assert [m.key for m in view.memories] == ["gold_00", "irr_00", "irr_01", "harm_00"]  # paper shows ids
    assert [m.label for m in view.memories][1] == "irrelevant"  # and labels
    assert len(view.past_sessions) == 3


def test_a_blind_view_holds_no_label_gold_answer_or_criterion(synthetic_records):
    record = synthetic_records[0]
    sample = record_to_sample(record, "blind", str(SYNTHETIC), sha256_of(SYNTHETIC))
    assert (sample.id, sample.input) == (record.example_id, record.current_task.instruction)
    view = view_of(CausalLocomoMetadata.model_validate(sample.metadata))
    assert view.protocol == "blind" and [m.key for m in view.memories] == ["m1", "m2", "m3", "m4"]
    assert {m.label for m in view.memories} == {None}
    assert "Resolved" not in " ".join(m.content for m in view.memories)
    shown = view.model_dump_json()
    assert not {"gold_00", "harm_00", "scoring_criteria", "gold_behavior", "expected_answer"} & set(shown.split('"'))


def test_a_drawn_bank_is_the_samples_record_and_counts_what_it_left_out(mini_build, mini_records):
    from cmi_inspect.causal_locomo.bank_size import draw_bank
    from cmi_inspect.causal_locomo.xl import STORE_FILE

    out, _ = mini_build
    record = mini_records[0]
    sample = causal_locomo_dataset("blind", data_file=out / STORE_FILE, bank_size=8)[0]
    meta = CausalLocomoMetadata.model_validate(sample.metadata)
    drawn = draw_bank(record, 8)
    assert sample.id == record.example_id and meta.bank_size == 8
    assert [m.memory_id for m in meta.memory_bank] == [m.memory_id for m in drawn.record.memory_bank]
    assert (meta.useful_lost, meta.harmful_lost) == (drawn.useful_lost, drawn.harmful_lost)
    assert meta.gold_memory_ids == record.gold_memory_ids  # kept whole: a lost one is a miss
    assert len(view_of(meta).memories) == len(meta.memory_bank) <= 8


def test_a_logged_samples_record_is_its_metadata_else_an_older_logs_stored_one(synthetic_records):
    from inspect_ai.log import EvalSample

    whole = record_metadata(synthetic_records[0], "blind").model_dump(mode="json")
    now = EvalSample(id="syn_0000", epoch=1, input="q", target=["a"], metadata=whole)
    assert scored_record(now).gold_memory_ids == ["gold_00"]
    view = view_of(record_metadata(synthetic_records[0], "blind")).model_dump(mode="json")
    older = EvalSample(id="syn_0000", epoch=1, input="q", target="", metadata=view, store={SCORED_RECORD: whole})
    assert scored_record(older) == scored_record(now)
    with pytest.raises(DataError, match="^Sample 'syn_0000': its log keeps no record of its example.$"):
        scored_record(EvalSample(id="syn_0000", epoch=1, input="q", target="", metadata=view))


def test_the_whole_record_is_the_one_scored_samples_log(synthetic_records):
    meta = record_metadata(synthetic_records[0], "paper")
    assert meta.gold_memory_ids == ["gold_00"]
    assert meta.harmful_ids == {"harm_00"}
    assert [m.memory_id for m in meta.memory_bank] == ["gold_00", "irr_00", "irr_01", "harm_00"]
    assert meta.labels["irr_00"] == "irrelevant"
    assert meta.scoring_criteria.must_not_include == ["9 March 2022"]


def test_a_file_that_changed_since_it_was_hashed_is_refused(tmp_path):
    copy = tmp_path / "data.jsonl"
    copy.write_bytes(SYNTHETIC.read_bytes())
    digest = sha256_of(copy)
    assert len(load_examples(copy, digest)) == 3
    copy.write_bytes(SYNTHETIC.read_bytes().replace(b"3 March 2022", b"4 March 2022"))
    with pytest.raises(DataError, match=r"data\.jsonl changed during the run: sha256 .* not the"):
        load_examples(copy, digest)


def test_release_loads_with_stable_ids(release_file):
    dataset = causal_locomo_dataset()
    assert len(dataset) == 87
    assert dataset[0].id == "conv-26_qa_0000"
    assert len({s.id for s in dataset}) == 87


def test_any_limit_on_the_release_sees_every_family_and_a_full_run_the_same_samples(release_file):
    dataset = causal_locomo_dataset()
    families = [view_of(CausalLocomoMetadata.model_validate(s.metadata)).task_family for s in dataset]
    assert set(families[:4]) == set(PAPER_FAMILIES)  # --limit 4: one of each of the release's
    for n in range(1, 88):  # any prefix: each family within two of its share
        for family in TASK_FAMILIES:
            share = families.count(family) / 87 * n
            assert abs(families[:n].count(family) - share) < 2, (n, family)
    in_file = load_records(release_file)  # the file's order: its first three are temporal
    assert [r.task_family for r in in_file[:3]] == ["temporal_memory_qa"] * 3
    assert sorted(str(s.id) for s in dataset) == sorted(r.example_id for r in in_file)
    by_id = {r.example_id: r.current_task.instruction for r in in_file}
    assert all(s.input == by_id[str(s.id)] for s in dataset)  # each id, its own example
    assert [s.id for s in causal_locomo_dataset()] == [s.id for s in dataset]  # deterministic
    for family in TASK_FAMILIES:  # each family in its file order
        assert [str(s.id) for s, f in zip(dataset, families, strict=True) if f == family] == [
            r.example_id for r in in_file if r.task_family == family
        ]


def test_family_order_interleaves_families_and_a_file_of_ones_own_keeps_its_order(synthetic_records):
    shuffled = [r.model_copy(update={"task_family": f}) for r, f in zip(
        synthetic_records, ["temporal_memory_qa", "temporal_memory_qa", "factual_memory_qa"], strict=True
    )]  # fmt: skip
    assert [r.task_family for r in family_order(shuffled)] == [
        "temporal_memory_qa",
        "factual_memory_qa",
        "temporal_memory_qa",
    ]
    ids = [s.id for s in causal_locomo_dataset(data_file=SYNTHETIC)]
    assert ids == [r.example_id for r in synthetic_records]


def test_family_filter_and_protocol(release_file):
    dataset = causal_locomo_dataset("blind", ["factual_memory_qa", "inferential_memory_qa"])
    assert len(dataset) == 16
    assert {(s.metadata or {}).get("protocol") for s in dataset} == {"blind"}


def test_bad_parameters_are_user_errors():
    with pytest.raises(UserError, match="Unknown protocol 'open'; choose from paper, blind"):
        causal_locomo_dataset("open")  # type: ignore[arg-type]
    with pytest.raises(UserError, match="Unknown task families"):
        causal_locomo_dataset(task_families=["trivia"])
    with pytest.raises(UserError, match="Unknown dataset 'big'; choose from release, xl"):
        causal_locomo_dataset(dataset="big")
    assert issubclass(UserError, PrerequisiteError)  # inspect eval prints it without a traceback


def test_an_empty_file_and_an_empty_family_list_say_what_is_wrong(tmp_path):
    from cmi_inspect.causal_locomo.causal_locomo import causal_locomo

    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    with pytest.raises(UserError, match=r"^No examples in .*empty\.jsonl\.$"):
        causal_locomo_dataset(data_file=empty)
    with pytest.raises(UserError, match=r"No examples of families inferential_memory_qa in"):
        causal_locomo_dataset(data_file=SYNTHETIC, task_families=["inferential_memory_qa"])
    with pytest.raises(UserError, match=r"-T task_families= is empty: leave it out for every family"):
        causal_locomo(task_families=" , ", data_file=str(SYNTHETIC))


@pytest.mark.slow  # builds the whole of XL from LoCoMo
def test_xl_by_name(locomo_file):
    dataset = causal_locomo_dataset(dataset="xl", task_families=["temporal_memory_qa"])
    assert dataset.name == "causal_locomo_xl" and len(dataset) >= 1


def test_a_samples_conversation_is_read_from_its_id(release_file):
    assert conversation_of("conv-26_qa_0000") == "conv-26"  # the release's and XL's ids
    assert conversation_of("conv-26_qa_0000_extra") is None
    assert conversation_of("syn_0000") is None
    # every example of the release names its conversation: ten of them
    found = {conversation_of(str(s.id)) for s in causal_locomo_dataset(data_file=release_file)}
    assert None not in found and len(found) == 10


def test_a_split_selects_its_conversations_in_file_order(mini_build, tmp_path):
    from cmi_inspect.causal_locomo.xl import INLINE_FILE

    splits = {"mini-1": "train", "mini-2": "test"}
    lines = [json.loads(line) for line in (mini_build[0] / INLINE_FILE).read_text().splitlines()]
    for line in lines:
        line["split"] = splits[line["source_sample_id"]]
    path = tmp_path / "split.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    whole = [s.id for s in causal_locomo_dataset(data_file=path)]
    with pytest.raises(DataError, match="No examples in split dev in"):
        causal_locomo_dataset(data_file=path, split="dev")
    for split, conversation in (("train", "mini-1"), ("test", "mini-2")):
        ids = [s.id for s in causal_locomo_dataset(data_file=path, split=split)]
        assert ids == [i for i in whole if i in set(ids)]
        assert {str(i).split("_x")[0] for i in ids} == {conversation}


def test_a_split_of_data_without_splits_or_an_unknown_split_is_one_line():
    with pytest.raises(UserError, match=r"^-T split=dev: synthetic\.jsonl has no splits; XL has"):
        causal_locomo_dataset(data_file=SYNTHETIC, split="dev")
    with pytest.raises(UserError, match="Unknown split 'val'; choose from train, dev, test."):
        causal_locomo_dataset(data_file=SYNTHETIC, split="val")


def test_the_release_has_no_splits(release_file):
    with pytest.raises(UserError, match=r"^-T split=test: the release has no splits"):
        causal_locomo_dataset(split="test")


def test_a_stored_file_serves_its_examples_whole_or_drawn_down(mini_build, mini_records):

    from cmi_inspect.causal_locomo.xl import STORE_FILE

    path = mini_build[0] / STORE_FILE
    whole = causal_locomo_dataset("blind", data_file=path)
    assert len(whole) == len(mini_records)
    view = view_of(CausalLocomoMetadata.model_validate(whole[0].metadata))
    record = mini_records[0]
    assert len(view.memories) == len(record.memory_bank) and view.bank_size is None
    assert "bank_size" not in (whole[0].metadata or {})  # left out when the bank is whole
    # every memory dated by its own turn's session, none redated
    assert sorted(m.timestamp for m in view.memories) == sorted(m.timestamp for m in record.memory_bank)
    small = view_of(
        CausalLocomoMetadata.model_validate(causal_locomo_dataset("blind", data_file=path, bank_size=8)[0].metadata)
    )
    assert small.bank_size == 8 and len(small.memories) >= 8
    only = causal_locomo_dataset("blind", data_file=path, task_families=["unanswerable_memory_qa"])
    assert len(only) == sum(r.task_family == "unanswerable_memory_qa" for r in mini_records) >= 1


def test_bank_sizes_are_checked_before_any_data_is_read():
    with pytest.raises(UserError, match="-T bank_size must be an integer of at least 1"):
        causal_locomo_dataset("blind", dataset="xl", bank_size=0)
