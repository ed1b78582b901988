"""XL v5's result tables (``report.xl_tables``): adoption, effective and inert apart, excess over
the run's own rank baseline, strata, and the facts read from the data, checked by hand."""

from __future__ import annotations

import math

import pytest
from cmi_inspect.report.runs import DataSet, Run
from cmi_inspect.report.samples import SampleRow
from cmi_inspect.report.xl_tables import (
    bank_sweep,
    estimate,
    facts_of,
    measure,
    per_sample,
    row_name,
    xl_tables,
)


def fact(conversation, confusers, rank, effective=(), group="confirmed", in_pool=True, no_rare=False):
    """An example's facts: every turn in ``rank`` below 50 that is a confuser is labelled."""
    labelled = list(confusers)
    return {
        "conversation": conversation, "group": group, "family": "factual_memory_qa",
        "useful": [], "confusers": list(confusers), "effective": {"m": list(effective)},
        "in_pool": in_pool, "no_rare_word": no_rare, "rank": rank, "labelled": labelled,
        "labelled_ranks": sorted(rank[t] for t in labelled), "unlabelled_deep": 0,
    }  # fmt: skip


def row(sample, selected, **values):
    return SampleRow(sample=sample, conversation=None, useful=0, useful_f1=values.get("f1", 0.0),
                     poison_adoption=0.0, score=0.5, selected=tuple(selected),
                     calls=values.get("calls", 1))  # fmt: skip


def run(location, rows, bank_size=None, strategy="vector_memory"):
    return Run(
        strategy=strategy, model="m", protocol="blind", judge="alias match", log="x.eval",
        samples=len(rows), failed=0, metrics={}, calls=1.0, cache_hits=0.0, input_tokens=0.0,
        output_tokens=0.0, seconds_per_sample=0.0, by_family={}, by_attack_kind={},
        data=DataSet("xl", "sha", examples=len(rows), bank_size=bank_size), location=location,
        rows=rows,
    )  # fmt: skip


FACTS = {
    "e1": fact("conv-1", ["c1", "c2"], {"c1": 0, "u1": 1, "c2": 2}, effective=["c1"]),
    "e2": fact("conv-2", ["d1"], {"v0": 0, "d1": 1}, in_pool=False, no_rare=True),
    "e3": fact("conv-2", [], {}, group="control"),
}


def test_adoption_effective_and_inert_apart_and_excess_over_the_runs_own_ranks():
    # e1 saw c1 (effective) and u1 (never labelled, rank 1); e2 saw v0 (never labelled, rank 0).
    # The run's rank baseline: rank 0 kept 1 of 1 (e2; e1's rank 0 is labelled), rank 1 kept
    # 1 of 1 (e1), rank 2 kept 0 of 1 (e2). So e1's excess is 1/2 - (1 + 0)/2 = 0 and e2's,
    # whose confuser sits at rank 1, is 0 - 1 = -1.
    r = run("vector_memory/x.eval", [row("e1", ["c1", "u1"]), row("e2", ["v0"]), row("e3", ["v0"])])
    values = per_sample(r, FACTS, "confirmed")
    assert values["e1"]["adoption_all"] == 0.5 and values["e1"]["excess_all"] == 0.0
    assert values["e1"]["adoption_effective"] == 1.0 and values["e1"]["adoption_inert"] == 0.0
    assert values["e2"]["excess_all"] == -1.0 and "adoption_effective" not in values["e2"]
    m = measure(r, FACTS, "confirmed")
    assert (m["adoption_all"].mean, m["adoption_all"].n) == (0.25, 2)
    assert (m["excess_all"].mean, m["kept_a_confuser"].mean) == (-0.5, 0.5)
    assert (m["adoption_effective"].n, m["adoption_inert"].mean) == (1, 0.0)
    assert set(per_sample(r, FACTS, "in_pool")) == {"e1"} and set(per_sample(r, FACTS, "no_rare_word")) == {"e2"}
    assert set(per_sample(r, FACTS, "every")) == {"e1", "e2", "e3"}


def test_an_interval_is_over_conversations_and_needs_two():
    one = estimate([0.0, 1.0], ["conv-1", "conv-1"])
    assert one.mean == 0.5 and math.isnan(one.low) and str(one) == "0.500"
    two = estimate([0.0, 0.0, 1.0], ["conv-1", "conv-1", "conv-2"])
    assert two.mean == pytest.approx(1 / 3) and (two.low, two.high) == (0.0, 1.0)


def test_a_row_is_named_by_its_plan_folder_else_by_strategy_and_bank():
    assert row_name(run("cmi-rule/x.eval", [])) == "cmi-rule"
    assert row_name(run("x.eval", [], bank_size=8)) == "vector_memory, bank 8"


def test_the_tables_show_every_xl_row_and_nothing_without_facts():
    r = run("vector_memory/x.eval", [row("e1", ["c1"]), row("e2", [])])
    text = "\n".join(xl_tables([r], FACTS))
    assert "| vector_memory | 2 |" in text and "Stratum: unanswerable" in text
    assert xl_tables([r], {}) == []


def test_the_bank_sweep_orders_each_strategys_banks_with_the_store_last(tmp_path):
    from cmi_inspect.report.figures import plot_bank_sweep
    from PIL import Image

    rows = [row("e1", ["c1", "c2"], f1=0.5), row("e2", ["d1"], f1=0.25)]
    runs = [
        run("vector_memory/x.eval", rows[:1]),
        run("vector_memory-bank8/x.eval", rows, bank_size=8),
        run("vector_memory-bank32/x.eval", [row("e1", [], f1=1.0)], bank_size=32),
        run("cmi/x.eval", rows, strategy="cmi"),  # one bank only: no sweep
    ]
    sweep = bank_sweep(runs, FACTS)
    assert list(sweep) == ["vector_memory"] and list(sweep["vector_memory"]) == [8, 32, None]
    assert sweep["vector_memory"][8]["useful_f1"].mean == 0.375
    assert sweep["vector_memory"][8]["adoption_all"].mean == 1.0  # both of e1's, e2's one
    assert sweep["vector_memory"][None]["adoption_all"].n == 1
    assert "| vector_memory | store | 0.500 | 1.000 |" in "\n".join(xl_tables(runs, FACTS))
    plot_bank_sweep(sweep, tmp_path / "sweep.png")
    with Image.open(tmp_path / "sweep.png") as image:
        assert image.size[0] > 600
    plot_bank_sweep({}, tmp_path / "none.png")
    assert not (tmp_path / "none.png").exists()


def test_facts_of_the_fixture_build(mini_records, mini_conversations):
    [first, *_] = [r for r in mini_records if r.model_extra["metadata"]["confusers"]]
    meta = first.model_extra["metadata"]
    shown = ["not-a-turn", meta["confusers"][0]]
    r = run("cmi/x.eval", [row(first.example_id, shown)])
    harm = {"m": {first.example_id: {meta["confusers"][0]: {"effective": True}}}}
    facts = facts_of(mini_records, mini_conversations, [r], harm, e5=False)
    f = facts[first.example_id]
    assert list(facts) == [first.example_id]
    assert (f["group"], f["conversation"], f["confusers"]) == (meta["group"], meta["conversation"], meta["confusers"])
    assert f["effective"] == {"m": [meta["confusers"][0]]}
    assert set(f["rank"]) == set(meta["confusers"]) and set(meta["confusers"]) <= set(f["labelled"])
    assert f["unlabelled_deep"] + 50 - len(f["labelled_ranks"]) <= len(first.memory_bank) + 50
