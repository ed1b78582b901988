"""The pre-registered targets (``report.xl_targets``) marked from runs built by hand: met, missed,
and not run."""

from __future__ import annotations

from cmi_inspect.report.runs import DataSet, Run
from cmi_inspect.report.samples import SampleRow
from cmi_inspect.report.xl_targets import TARGETS, targets_table, verdicts

CONVERSATIONS = [f"conv-{i}" for i in range(10)]


def facts():
    """Per conversation a confirmed example (one confuser, c, at BM25 rank 1) and an
    unanswerable one (confuser u at rank 1); turn n at rank 0 is never labelled."""
    out = {}
    for c in CONVERSATIONS:
        for group, confuser in (("confirmed", "c"), ("unanswerable", "u")):
            out[f"{c}_{group}"] = {
                "conversation": c, "group": group, "family": "f", "useful": [],
                "confusers": [confuser], "effective": {"m": [confuser]}, "in_pool": True,
                "no_rare_word": True, "rank": {"n": 0, confuser: 1}, "labelled": [confuser],
                "labelled_ranks": [1], "unlabelled_deep": 0,
            }  # fmt: skip
    return out


def run(name, picks, f1=0.0, calls=1, bank_size=None):
    rows = [
        SampleRow(
            sample=s,
            conversation=None,
            useful=1,
            useful_f1=f1,
            poison_adoption=0.0,
            score=0.5,
            selected=tuple(picks(s)),
            calls=calls,
        )  # fmt: skip
        for s in facts()
    ]
    return Run(
        strategy=name, model="m", protocol="blind", judge="alias match", log="x.eval",
        samples=len(rows), failed=0, metrics={}, calls=1.0, cache_hits=0.0, input_tokens=0.0,
        output_tokens=0.0, seconds_per_sample=0.0, by_family={}, by_attack_kind={},
        data=DataSet("xl", "sha", bank_size=bank_size), location=f"{name}/x.eval", rows=rows,
    )  # fmt: skip


def confuser(sample):
    return ["c" if sample.endswith("confirmed") else "u"]


def neutral(sample):
    return ["n"]


def test_cmi_keeping_no_confuser_where_vector_memory_keeps_each_meets_target_1_and_6():
    runs = [run("cmi-learned", neutral, f1=0.5), run("vector_memory", confuser, f1=0.5)]
    found = {v.target[:2]: v for v in verdicts(runs, facts())}
    assert found["1."].met is True and "difference -1.000" in found["1."].measured
    assert found["2."].met is True and found["6."].met is True and found["6."].measured == "10 of 10"
    assert found["3."].met is None and "not run: context_cite-crossfit" in found["3."].measured


def test_targets_missed_when_the_numbers_go_the_other_way():
    runs = [
        run("cmi-learned", confuser, f1=0.1, calls=9),
        run("vector_memory", neutral, f1=0.5),
        run("cmi-learned-non_causal", neutral, f1=0.1),
        run("context_cite-crossfit", neutral, calls=4),
        run("leave_one_in-crossfit", neutral),
        run("vector_memory-guarded", confuser, f1=0.5),
    ]
    found = {v.target[:2]: v.met for v in verdicts(runs, facts())}
    assert found == {"1.": False, "2.": False, "3.": False, "4.": False, "5.": None, "6.": False, "7.": False}


def test_the_bank_sweep_compares_the_rise_of_each_from_8_to_the_store():
    runs = [
        run("cmi-rule", neutral), run("cmi-rule-bank8", neutral),
        run("vector_memory", confuser), run("vector_memory-bank8", neutral, bank_size=8),
    ]  # fmt: skip
    [five] = [v for v in verdicts(runs, facts()) if v.target == TARGETS[5]]
    assert five.met is True and "vector rise 1.000" in five.measured


def test_no_table_when_no_pre_registered_row_ran():
    assert targets_table([run("graph_memory", neutral)], facts()) == []
    assert "| met |" in "\n".join(targets_table([run("cmi-learned", neutral), run("vector_memory", confuser)], facts()))
