"""A pre-registered subset of XL (``xl.subset``), on the fixture's build."""

from collections import Counter

import pytest
from cmi_inspect.causal_locomo.xl.subset import subset
from cmi_inspect.errors import UserError


def _group(record):
    return record.model_extra["metadata"]["group"]


def test_the_subset_takes_the_first_of_each_group_of_every_conversation(mini_records):
    records = [r for r in mini_records if r.model_extra]
    ids = subset(records, {"confirmed": 1, "control": 1})
    chosen = [r for r in records if r.example_id in ids]
    assert ids == [r.example_id for r in chosen]  # the file's order
    per = Counter((r.example_id.split("_")[0], _group(r)) for r in chosen)
    have = Counter((r.example_id.split("_")[0], _group(r)) for r in records)
    for key in have:
        group = key[1]
        assert per[key] == (min(1, have[key]) if group != "unanswerable" else 0)
    for r in chosen:  # each is its group's first in its conversation
        same = [x for x in records if x.example_id.split("_")[0] == r.example_id.split("_")[0]
                and _group(x) == _group(r)]  # fmt: skip
        assert same[0] is r


def test_an_unknown_group_is_one_line():
    with pytest.raises(UserError, match="No XL group 'confirmd'"):
        subset([], {"confirmd": 1})
