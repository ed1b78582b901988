"""The conflict relation's share of bank pairs, by label pair."""

from __future__ import annotations

from cmi_inspect.causal_locomo.audit import AuditItem
from cmi_inspect.causal_locomo.strategies.cmi.conflict_audit import conflict_shares, conflict_table, pair_name


def test_pairs_are_named_in_label_order():
    assert pair_name("useful", "harmful") == pair_name("harmful", "useful") == "harmful-useful"
    assert pair_name("irrelevant", "useful") == "useful-irrelevant"


def test_a_one_value_edit_is_flagged_and_an_unrelated_pair_is_not():
    items = [
        AuditItem("e1", "useful", "Ana adopted a grey cat named Biscuit from the shelter.", 1, 1),
        AuditItem("e1", "harmful", "Ana adopted a grey cat named Pepper from the shelter.", 1, 1),
        AuditItem("e1", "irrelevant", "Ben grows tomatoes and beans in his garden.", 1, 1),
    ]
    shares = conflict_shares(items, embedder="hashing")
    assert list(shares) == ["harmful-useful", "harmful-irrelevant", "useful-irrelevant"]
    assert shares["harmful-useful"] == {"pairs": 1, "flagged": 1.0, "by_overlap": 1.0}
    assert shares["useful-irrelevant"]["flagged"] == shares["harmful-irrelevant"]["by_overlap"] == 0.0
    assert "| harmful-useful | 1 | 1.000 | 1.000 |" in conflict_table(shares, "hashing")
