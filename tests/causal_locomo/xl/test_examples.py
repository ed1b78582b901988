"""XL v5's examples (``xl.examples``) from a verdict file of the LoCoMo-format fixture."""

from pathlib import Path

import pytest
from cmi_inspect.causal_locomo.xl import examples as E
from cmi_inspect.causal_locomo.xl.locomo import load_locomo
from cmi_inspect.causal_locomo.xl.store import conversation_store
from cmi_inspect.causal_locomo.xl.verdicts import load_verdicts

from conftest import LOCOMO_MINI


@pytest.fixture(scope="module")
def built(mini_verdicts):
    convs = load_locomo(Path(LOCOMO_MINI))
    stores = {c.sample_id: conversation_store(c) for c in convs}
    drafts = E.drafts(convs, stores, load_verdicts(mini_verdicts))
    return convs, drafts, [E.reference(d) for d in drafts]


def test_confirmed_examples_hold_the_confusers_both_readers_found(built, mini_verdicts):
    _, drafts, _ = built
    harmful = {(v.conversation, v.question, v.dia_id) for v in load_verdicts(mini_verdicts).items
               if v.label == "harmful" and v.kind == "candidate"}  # fmt: skip
    confirmed = [d for d in drafts if d.group == "confirmed"]
    assert confirmed
    for d in confirmed:
        assert 1 <= len(d.confusers) <= E.MAX_CONFUSERS
        assert all((d.conv.sample_id, d.index, c) in harmful for c in d.confusers)
        assert not set(d.confusers) & set(d.useful)


def test_each_control_matches_a_confirmed_example_by_category(built):
    _, drafts, _ = built
    confirmed = [d for d in drafts if d.group == "confirmed"]
    controls = [d for d in drafts if d.group == "control"]
    assert len(controls) <= len(confirmed)
    assert all(not d.confusers for d in controls)
    wanted = sorted(d.category for d in confirmed)
    assert all(wanted.count(c.category) >= 1 for c in controls)


def test_an_example_names_no_locomo_index_and_its_labels_are_turns(built):
    convs, _, refs = built
    turns = {c.sample_id: {t.dia_id for s in c.sessions.values() for t in s.turns} for c in convs}
    for ref in refs:
        assert "_qa_" not in ref.example_id
        assert ref.example_id.startswith(ref.store_id + "_x")
        assert set(ref.memory_labels) <= turns[ref.store_id]
        assert "task_id" not in ref.current_task.model_dump()
        meta = ref.model_extra["metadata"]  # type: ignore[index]
        assert set(meta["confusers"]) == set(ref.attack_kinds)
        assert set(meta["confuser_answers"]) == set(meta["confusers"])


def test_unanswerable_questions_abstain_and_name_who_was_asked(built):
    _, drafts, refs = built
    unanswerable = [r for r in refs if r.task_family == "unanswerable_memory_qa"]
    for ref in unanswerable:
        assert ref.scoring_criteria.answer_rule == "abstains"
        assert all(v == "harmful" for v in ref.memory_labels.values())
    share = len(unanswerable) / len(refs)
    assert share <= E.UNANSWERABLE_SHARE + 1 / len(refs)


def test_a_gold_is_supported_when_more_rows_say_yes_than_no():
    from cmi_inspect.causal_locomo.xl.verdicts import ItemVerdict

    def item(*said: str) -> ItemVerdict:
        return ItemVerdict(item="i", conversation="c", question=0, dia_id="D1:1", kind="candidate",
                           calls={}, label=None, path="neither",
                           gold_supported={str(n): s for n, s in enumerate(said)})  # fmt: skip

    assert E.supported([item("yes", "partly"), item("no", "yes")])
    assert not E.supported([item("partly", "partly")])  # partly counts for neither
    assert not E.supported([item("yes", "no")])
