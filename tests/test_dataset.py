"""Records become Inspect samples carrying what solvers and scorers need."""

from __future__ import annotations

import pytest
from cmi_inspect.dataset import CausalLocomoMetadata, causal_locomo_dataset
from cmi_inspect.errors import PrerequisiteError, UserError

from conftest import SYNTHETIC


def test_sample_fields():
    dataset = causal_locomo_dataset(data_file=SYNTHETIC)
    sample = dataset[0]
    assert sample.id == "syn_0000"
    assert sample.input == "When did Priya adopt the greyhound Comet?"
    assert sample.target == ["3 March 2022", "March 3, 2022", "2022-03-03"]
    meta = CausalLocomoMetadata.model_validate(sample.metadata)
    assert meta.protocol == "paper"
    assert meta.task_family == "temporal_memory_qa"
    assert meta.gold_memory_ids == ["gold_00"]
    assert meta.harmful_ids == {"harm_00"}
    assert [m.memory_id for m in meta.memory_bank] == ["gold_00", "irr_00", "irr_01", "harm_00"]
    assert meta.labels["irr_00"] == "irrelevant"
    assert len(meta.past_sessions) == 3
    assert meta.scoring_criteria.must_not_include == ["9 March 2022"]


def test_release_loads_with_stable_ids(release_file):
    dataset = causal_locomo_dataset()
    assert len(dataset) == 87
    assert dataset[0].id == "conv-26_qa_0000"
    assert len({s.id for s in dataset}) == 87


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
    from cmi_inspect.task import causal_locomo

    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    with pytest.raises(UserError, match=r"^No examples in .*empty\.jsonl\.$"):
        causal_locomo_dataset(data_file=empty)
    with pytest.raises(UserError, match=r"No examples of families inferential_memory_qa in"):
        causal_locomo_dataset(data_file=SYNTHETIC, task_families=["inferential_memory_qa"])
    with pytest.raises(UserError, match=r"-T task_families= is empty: leave it out for every family"):
        causal_locomo(task_families=" , ", data_file=str(SYNTHETIC))


def test_xl_by_name(locomo_file):
    dataset = causal_locomo_dataset(dataset="xl", task_families=["inferential_memory_qa"])
    assert dataset.name == "causal_locomo_xl" and len(dataset) >= 1
