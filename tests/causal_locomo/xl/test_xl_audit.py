"""The XL audit (``xl.audit``) and ``cmi-inspect audit`` on an XL file, on the fixture's build."""

import json

import pytest
from cmi_inspect.causal_locomo.xl.audit import audit_table, xl_audit

from conftest import LOCOMO_MINI


@pytest.fixture(scope="module")
def result(mini_records):
    from cmi_inspect.causal_locomo.xl.locomo import load_locomo

    convs = {c.sample_id: c for c in load_locomo(LOCOMO_MINI)}
    return xl_audit(mini_records, convs, e5=False)


def test_the_counts_add_up(result, mini_records):
    counts = result["counts"]
    assert counts["examples"] == len(mini_records) == sum(counts["groups"].values())
    assert sum(sum(v.values()) for v in counts["by_conversation"].values()) == counts["examples"]
    assert counts["confirmed_in_pool"] <= counts["groups"].get("confirmed", 0)


def test_the_blind_audit_reads_harmful_against_useful_memories(result):
    blind = result["blind"]
    assert blind["items"]["harmful"] >= 1 and blind["items"]["useful"] >= 1
    assert "question_overlap" not in blind["features"]  # question-blind
    assert set(blind) >= {"trees", "ngram"}


def test_every_stratum_has_a_row_per_selector_and_k(result):
    names = {"bm25", "asked_speaker", "rare_word", "gold_overlap_oracle", "evidence_likeness"}
    rows = result["selection"]["confirmed"]
    assert {r["selector"] for r in rows} == names and len(rows) == 3 * len(names)
    assert json.loads(json.dumps(result)) == result  # JSON-ready


def test_the_table_names_each_part(result):
    table = audit_table(result, "mini")
    for part in ("Question-blind", "Selection, confirmed", "| bm25 | 1 |", "Evidence-likeness"):
        assert part in table


def test_the_cli_audits_an_xl_file_without_e5(mini_build, capsys, monkeypatch):
    from cmi_inspect.causal_locomo.xl import STORE_FILE, locomo
    from cmi_inspect.cli import main

    monkeypatch.setattr(locomo, "locomo_path", lambda: LOCOMO_MINI)
    assert main(["audit", "--data-file", str(mini_build[0] / STORE_FILE), "--no-e5", "--json"]) == 0
    assert "selection" in json.loads(capsys.readouterr().out)
