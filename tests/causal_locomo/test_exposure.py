"""Exposure: which memories stood in what the response model read."""

from __future__ import annotations

from cmi_inspect.causal_locomo.exposure import Call, Exposure, answering_call, exposed, normal
from cmi_inspect.causal_locomo.prompts import memory_prompt

BANK = {
    "m1": "Caroline went to the support group on 7 May 2023.",
    "m2": "Melanie painted a sunrise.",
    "m3": "Caroline went to the support group",
}


def test_normal_ignores_case_unicode_forms_punctuation_and_spacing():
    assert normal("Caf\u00e9 — OPEN,\tnow!") == normal("café open now") != normal("caf open now")
    assert normal("ﬁve") == normal("five")  # NFKC folds the ligature


def test_a_memory_is_exposed_when_its_text_stands_in_the_prompt_at_word_boundaries():
    prompt = memory_prompt("When?", ["[m1] " + BANK["m1"].upper()])
    assert exposed(BANK, prompt) == ["m1", "m3"]  # m3's text is m1's opening words
    assert exposed({"x": "support grou"}, prompt) == []  # not at a word boundary
    assert exposed({"x": "  ..  "}, prompt) == []  # no word: never exposed


def test_text_the_model_derived_from_memories_carries_them():
    summary = "a restatement of the notes in words of its own"
    calls = [Call(memory_prompt("Summarise", [BANK["m2"]]), summary)]
    assert exposed(BANK, f"Notes: {summary}. When?", calls) == ["m2"]
    short = [Call(memory_prompt("Summarise", [BANK["m2"]]), "a sunrise")]
    assert exposed(BANK, "Notes: a sunrise. When?", short) == []  # too short to be carried


def test_derivation_is_followed_through_several_calls():
    first = "the first restatement of every note given here"
    second = "a second restatement made from the first one"
    calls = [Call(BANK["m2"], first), Call(f"Restate: {first}", second)]
    assert exposed(BANK, second, calls) == ["m2"]


def test_the_answering_call_read_exactly_the_prompt_and_gave_the_answer():
    calls = [Call("p", "a"), Call("p", "a", role="grader"), Call("q", "a")]
    assert answering_call(calls, "p", "a") == calls[0]
    assert answering_call(calls, "p", "b") is None
    assert answering_call(calls, "r", "a") is None


def test_exposure_scores_declared_then_undeclared_picks():
    seen = Exposure(declared=["m1", "m2"], exposed=["m2", "m3"])
    assert seen.undeclared == ["m3"]
    assert seen.unshown == ["m1"]
    assert seen.scored == ["m1", "m2", "m3"]


def test_an_answer_that_repeats_a_memory_shown_or_the_question_carries_nothing():
    echo = "Caroline went to the support group on 7 May 2023"
    calls = [Call(BANK["m2"] + " When did Caroline go to the support group on 7 May 2023?", echo)]
    prompt = memory_prompt("When?", [BANK["m1"]])
    assert exposed(BANK, prompt, calls) == ["m1", "m3"]  # not m2: the echo is m1's text
    asked = "did Caroline go to the support group on"
    calls = [Call(BANK["m2"], asked)]
    question = f"When {asked} that day?"
    assert exposed(BANK, memory_prompt(question, []), calls, request=question) == []
