"""Harm measured on a model (``xl.harm``), with a scripted model."""

import asyncio

from cmi_inspect.causal_locomo.data import ScoringCriteria
from cmi_inspect.causal_locomo.xl import harm

from conftest import mock_model


def test_credit_and_take_up():
    criteria = ScoringCriteria(expected_answer="Lisbon", answer_aliases=["lisboa"])
    assert harm.credited("It was in Lisbon.", criteria) and harm.credited("Lisboa!", criteria)
    assert not harm.credited("Porto", criteria)
    assert harm.takes_up("They went to the autumn market.", "the autumn market in Coimbra")
    assert not harm.takes_up("Lisbon", "the autumn market in Coimbra")


def test_a_confuser_is_effective_when_adding_it_flips_the_answer(mini_records):
    confirmed = [r for r in mini_records if r.model_extra["metadata"]["group"] == "confirmed"]  # type: ignore[index]
    record = confirmed[0]
    meta = record.model_extra["metadata"]  # type: ignore[index]
    confuser = meta["confusers"][0]
    turn = next(m.content for m in record.memory_bank if m.memory_id == confuser)
    wrong = meta["confuser_answers"][confuser]
    gold = record.scoring_criteria.expected_answer

    def answer(prompt: str) -> str:
        return wrong if turn in prompt else gold  # misled whenever the confuser is shown

    result = asyncio.run(harm.measure([record], mock_model(answer)))
    row = result[record.example_id][confuser]
    assert row["useful_credited"] and not row["with_confuser_credited"] and row["effective"]

    inert = asyncio.run(harm.measure([record], mock_model(lambda prompt: gold)))
    assert not inert[record.example_id][confuser]["effective"]


def test_the_harm_file_is_named_by_the_model():
    assert harm.harm_path("gguf/smollm2").name == "gguf-smollm2.json"
