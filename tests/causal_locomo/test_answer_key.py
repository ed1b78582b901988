"""The sealed answer key: read once from the data file, and the judge of what a sample carries."""

from __future__ import annotations

import hashlib

import pytest
from cmi_inspect.causal_locomo.answer_key import AnswerKeyError, sealed_example
from cmi_inspect.causal_locomo.data import sha256_of
from cmi_inspect.causal_locomo.dataset import SEALED_TARGET, causal_locomo_dataset

from conftest import SYNTHETIC


@pytest.fixture
def sealed():
    return sealed_example(str(SYNTHETIC), sha256_of(SYNTHETIC), "syn_0000", "blind")


def test_an_example_of_the_key_is_its_record_and_the_digest_of_its_text(sealed):
    assert sealed.metadata.gold_memory_ids == ["gold_00"]
    assert sealed.target == ["3 March 2022", "March 3, 2022", "2022-03-03"]
    assert sealed.digest == hashlib.sha256(sealed.record.model_dump_json().encode()).hexdigest()
    assert sealed.seal_record() == {"data_sha256": sha256_of(SYNTHETIC), "example_sha256": sealed.digest}
    with pytest.raises(AnswerKeyError, match=r"Sample 'syn_9999' is not in the answer key"):
        sealed_example(str(SYNTHETIC), sha256_of(SYNTHETIC), "syn_9999", "blind")


def test_a_sample_carries_its_view_and_nothing_else(sealed):
    view = causal_locomo_dataset("blind", data_file=SYNTHETIC)[0].metadata
    assert view is not None
    assert sealed.changed(view, [SEALED_TARGET]) == []  # what a running sample carries
    assert sealed.changed(view, [""]) == []  # an older log's (versions 5 and 6-A)
    assert sealed.changed(view, sealed.target) == []  # an older log's target
    whole = sealed.metadata.model_dump(mode="json")  # the scorers keep it in the store, never here
    assert {"memory_bank", "scoring_criteria", "gold_memory_ids"} <= set(sealed.changed(whole, [""]))
    relabelled = {**view, "memories": [{**m, "label": "useful"} for m in view["memories"]], "extra": 1}
    assert sealed.changed(relabelled, ["I do not know."]) == ["extra", "memories", "target"]
    paper = causal_locomo_dataset("paper", data_file=SYNTHETIC)[0].metadata
    assert paper is not None and "protocol" in sealed.changed(paper, [""])  # the protocol is the task's


def test_a_stored_files_key_expands_its_example_and_draws_the_runs_bank(mini_build, mini_records):
    from cmi_inspect.xl import STORE_FILE

    out, _ = mini_build
    path = str(out / STORE_FILE)
    record = mini_records[0]
    whole = sealed_example(path, sha256_of(out / STORE_FILE), record.example_id, "blind")
    assert whole.record.model_dump() == record.model_dump()
    assert whole.digest == hashlib.sha256(record.model_dump_json().encode()).hexdigest()
    small = sealed_example(path, sha256_of(out / STORE_FILE), record.example_id, "blind", bank_size=8)
    sample = causal_locomo_dataset("blind", data_file=path, bank_size=8)[0]
    assert sample.id == record.example_id and small.changed(sample.metadata or {}, [""]) == []
    assert len(small.record.memory_bank) == max(8, len(record.gold_memory_ids) + len(small.metadata.harmful_ids))
    assert whole.changed(sample.metadata or {}, [""]) != []  # the whole bank is not the run's


def test_a_scored_sample_without_its_stored_record_is_read_back_from_the_key_its_seal_names(tmp_path):
    """A resumed run can carry a sample over without the record its scorers stored: the record
    comes from the data file again, checked by the sha256 its score sealed."""
    from cmi_inspect.causal_locomo.answer_key import ScoredExample, scored_record
    from cmi_inspect.strategies.solvers import no_memory
    from cmi_inspect.task import causal_locomo
    from inspect_ai import eval as inspect_eval

    from conftest import mock_model

    [log] = inspect_eval(
        causal_locomo(data_file=str(SYNTHETIC), protocol="blind"),
        solver=no_memory(),
        model=mock_model(lambda p: "x"),
        display="none",
        log_dir=str(tmp_path),
    )
    sample = (log.samples or [])[0]
    stored = scored_record(sample)
    sample.store = {k: v for k, v in sample.store.items() if not k.startswith(ScoredExample.__name__)}
    assert not sample.store_as(ScoredExample).record
    assert scored_record(sample) == stored
    for score in (sample.scores or {}).values():
        if score.metadata and "answer_key" in score.metadata:
            score.metadata["answer_key"] = {**score.metadata["answer_key"], "example_sha256": "0" * 64}
    with pytest.raises(AnswerKeyError, match="holds another record than the one it was scored on"):
        scored_record(sample)
