"""XL's baseline selectors and selection rows (``xl.baselines``), on the fixture's build."""

import pytest
from cmi_inspect.causal_locomo.xl import baselines as B


@pytest.fixture(scope="module")
def fixture(mini_records):
    exs = B.examples(mini_records)
    first = {e.conversation: e for e in reversed(exs)}
    stores = {c: B.Store(e, set()) for c, e in first.items()}
    return exs, {e.id: stores[e.conversation] for e in exs}


def test_every_selector_ranks_the_whole_store_label_blind(fixture):
    exs, stores = fixture
    for rank in (B.rank_bm25, B.rank_asked_speaker, B.rank_rare_word, B.rank_gold_overlap):
        for e in exs:
            order = rank(e, stores[e.id])
            assert sorted(order) == sorted(e.turns)


def test_the_asked_speaker_filter_puts_that_speakers_turns_first(fixture):
    exs, stores = fixture
    for e in exs:
        asked = e.meta.get("asked_person")
        if asked:
            order = B.rank_asked_speaker(e, stores[e.id])
            own = sum(stores[e.id].speaker[t] == asked for t in e.turns)
            assert all(stores[e.id].speaker[t] == asked for t in order[:own])


def test_bm25_adopts_no_more_than_its_rank_baseline(fixture):
    exs, stores = fixture
    ranked = [B.Ranked("bm25", {e.id: e.bm25 for e in exs})]
    rows = B.selection_rows([e for e in exs if e.meta["confusers"]], stores, ranked)
    assert [r["k"] for r in rows] == list(B.KS)
    for row in rows:
        assert row["excess_adoption"] == pytest.approx(0.0, abs=1e-9)  # BM25 against BM25's ranks
        assert 0.0 <= row["confuser_adoption"] <= 1.0


def test_a_selector_that_keeps_nothing_has_no_excess_and_no_f1(fixture):
    exs, stores = fixture
    confirmed = [e for e in exs if e.meta["confusers"]]

    # a ranking that puts every confuser and useful turn last
    def last(e):
        labelled = set(e.meta["confusers"]) | set(e.meta["useful"])
        return [t for t in e.bm25 if t not in labelled] + [t for t in e.bm25 if t in labelled]

    rows = B.selection_rows(confirmed, stores, [B.Ranked("last", {e.id: last(e) for e in confirmed})])
    k1 = rows[0]
    assert k1["useful_f1"] == 0.0 and k1["confuser_adoption"] == 0.0 and k1["excess_adoption"] <= 0.0


def test_rare_words_are_those_of_few_turns():
    from cmi_inspect.text import content_words

    texts = ["a lemon cake", "a cake", "more cake", "cake again"]
    bags = {str(i): frozenset(content_words(t)) for i, t in enumerate(texts)}
    assert B.rare_words("Which lemon cake?", bags) == frozenset(content_words("lemon"))
