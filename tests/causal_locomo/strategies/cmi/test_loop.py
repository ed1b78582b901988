"""CMI.select on scripted answers: the rule, ablations, risk filters, budget and call economy."""

from __future__ import annotations

import asyncio
import random

import pytest
from cmi_inspect.causal_locomo.data_files import load_records
from cmi_inspect.causal_locomo.prompts import note_contents
from cmi_inspect.causal_locomo.protocol import BlindProtocolError
from cmi_inspect.causal_locomo.strategies.cmi import CMI, CMIConfig, CMIDiagnostics
from cmi_inspect.causal_locomo.strategies.cmi.selector import Keeps
from cmi_inspect.causal_locomo.view import key_to_memory_id
from cmi_inspect.errors import UserError
from cmi_inspect.retrieval import HashingEmbedder
from inspect_ai.model import GenerateConfig, Logprob, Logprobs, ModelOutput, ModelUsage, TopLogprob, get_model

from conftest import LABEL_FREE, gold_scorer, memory_task_for, mock_model

PERTURBED = ("It is not true that", "may no longer hold")


def answers(gold_only: bool = True):
    """3 March for the gold memory (and, if not gold_only, the harmful one); unsure otherwise."""

    def respond(prompt: str) -> str:
        if any(p in prompt for p in PERTURBED):
            return "I do not know."
        if "Comet on 3 March 2022" in prompt:
            return "3 March 2022"
        if "Comet on 9 March 2022" in prompt:
            return "9 March 2022" if gold_only else "3 March 2022"
        return "I do not know."

    return respond


def follow_first_note(prompt: str) -> str:
    """A model that repeats the first note it is given, and knows nothing without one."""
    notes = note_contents(prompt)
    return notes[0] if notes else "I do not know."


async def run(record, respond=None, prompts=None, **config):
    model = mock_model(respond or answers(), prompts)
    task = memory_task_for(record, model=model, score_answer=gold_scorer(record))
    return await CMI(HashingEmbedder(), CMIConfig(**{"k": 4, **config})).select(task)


async def run_blind(record, prompts=None, **config):
    task = memory_task_for(record, "blind", mock_model(follow_first_note, prompts))
    return await CMI(HashingEmbedder(), CMIConfig(**{"k": 4, **config})).select(task)


def diagnostics(selection) -> dict:
    """CMI's diagnostics record as the log holds it."""
    assert isinstance(selection.details, CMIDiagnostics)
    return selection.details.model_dump()


def by_key(selection):
    return {c["key"]: c for c in diagnostics(selection)["candidates"]}


@pytest.fixture(scope="module")
def label_free_records():
    return load_records(LABEL_FREE)


async def test_full_rule_selects_the_useful_memory(synthetic_records):
    prompts: list[str] = []
    sel = await run(synthetic_records[0], prompts=prompts)
    assert [p.key for p in sel.picks] == ["gold_00"]
    c = by_key(sel)
    assert diagnostics(sel)["s_no"] == pytest.approx(0.6)
    assert (c["gold_00"]["s_with"], c["gold_00"]["s_pert"]) == (1.0, pytest.approx(0.6))
    assert c["gold_00"]["utility"] == pytest.approx(0.4) and c["gold_00"]["stability"] == pytest.approx(0.4)
    assert c["harm_00"]["utility"] == pytest.approx(-0.1) and c["harm_00"]["perturbation"] == "temporal_shift"
    assert c["harm_00"]["reason"].startswith("utility -0.100 <= tau_u")
    assert c["irr_00"]["reason"].startswith("utility +0.000") and c["irr_00"]["perturbation"] == "negation"
    assert c["gold_00"]["reason"] == "selected"
    # 1 no-memory + 4 with + 4 perturbed, all distinct; final = gold's with-memory answer, reused
    assert len(prompts) == 9 and len(set(prompts)) == 9
    assert sel.output is not None and sel.output.completion == "3 March 2022"
    assert diagnostics(sel)["final_answer_reused"] is True
    # its ranking, which F1@k reads, is the proposal's: the candidates by rank
    assert sel.ranking == [cand["key"] for cand in sorted(diagnostics(sel)["candidates"], key=lambda x: x["rank"])]


async def test_none_selected_reuses_the_no_memory_answer(synthetic_records):
    sel = await run(synthetic_records[0], respond=lambda p: "I do not know.")
    assert sel.picks == [] and sel.output is not None
    assert sel.output.completion == diagnostics(sel)["answer_no_memory"]


async def test_thresholds(synthetic_records):
    sel = await run(synthetic_records[0], tau_u=0.5)
    assert sel.picks == []
    assert by_key(sel)["gold_00"]["reason"] == "utility +0.400 <= tau_u 0.5"
    sel = await run(synthetic_records[0], tau_s=0.5)
    assert by_key(sel)["gold_00"]["reason"] == "stability +0.400 < tau_s 0.5"


async def test_label_filter_drops_harmful_that_passes_the_rule(synthetic_records):
    sel = await run(synthetic_records[0], respond=answers(gold_only=False))
    assert [p.key for p in sel.picks] == ["gold_00"]
    assert by_key(sel)["harm_00"]["reason"] == "risk filter: labelled harmful"
    prompts: list[str] = []
    sel = await run(synthetic_records[0], respond=answers(gold_only=False), prompts=prompts, risk_filter="none")
    assert {p.key for p in sel.picks} == {"gold_00", "harm_00"}
    assert sel.output is None  # two memories: the final prompt is new, the solver generates it
    assert sel.prompt not in prompts


async def test_budget(synthetic_records):
    sel = await run(synthetic_records[0], respond=answers(gold_only=False), risk_filter="none", budget=1)
    assert len(sel.picks) == 1
    reasons = sorted(c["reason"] for c in diagnostics(sel)["candidates"] if c["key"] in ("gold_00", "harm_00"))
    assert reasons == ["over budget", "selected"]


async def test_prefer_proposal_fills_the_budget_by_rank_not_utility(synthetic_records):
    record = synthetic_records[0]

    def respond(prompt: str) -> str:  # the harmful memory helps, less than the gold one
        if "Comet on 9 March 2022" in prompt and not any(p in prompt for p in PERTURBED):
            return "March 2022"
        return answers()(prompt)

    common = {"respond": respond, "risk_filter": "none", "budget": 1}
    by_utility = await run(record, **common)
    by_rank = await run(record, prefer="proposal", **common)
    cands = by_key(by_rank)
    assert 0 < cands["harm_00"]["utility"] < cands["gold_00"]["utility"]
    assert cands["harm_00"]["rank"] < cands["gold_00"]["rank"]
    assert [p.key for p in by_utility.picks] == ["gold_00"]
    assert [p.key for p in by_rank.picks] == ["harm_00"]


async def test_no_perturb_uses_s_no_and_makes_no_perturbed_call(synthetic_records):
    prompts: list[str] = []
    sel = await run(synthetic_records[0], prompts=prompts, ablation="no_perturb")
    assert [p.key for p in sel.picks] == ["gold_00"]
    gold = by_key(sel)["gold_00"]
    assert gold["s_pert"] == diagnostics(sel)["s_no"] and gold["stability"] == gold["utility"]
    assert len(prompts) == 5 and not any(p in q for q in prompts for p in PERTURBED)


async def test_utility_only(synthetic_records):
    prompts: list[str] = []
    sel = await run(synthetic_records[0], prompts=prompts, ablation="utility_only")
    assert [p.key for p in sel.picks] == ["gold_00"]
    assert by_key(sel)["gold_00"]["stability"] is None and len(prompts) == 5
    assert by_key(sel)["gold_00"]["perturbed_skipped"] == "utility_only ablation"


async def test_stability_only_keeps_memories_whose_perturbation_does_not_help(synthetic_records):
    sel = await run(synthetic_records[0], ablation="stability_only")
    ranks = {k: c["rank"] for k, c in by_key(sel).items()}
    irrelevant = sorted(["irr_00", "irr_01"], key=ranks.__getitem__)
    assert [p.key for p in sel.picks] == ["gold_00", *irrelevant]  # utility order, then rank
    assert by_key(sel)["harm_00"]["reason"] == "stability -0.100 < tau_s 0.0"


async def test_oracle_selects_exactly_the_gold_candidates(synthetic_records):
    for record in synthetic_records:
        for k in (1, 2, 3):
            sel = await run(record, respond=lambda p: "x", ablation="oracle", k=k)
            candidates = {c["key"] for c in diagnostics(sel)["candidates"]}
            assert {p.key for p in sel.picks} == candidates & set(record.gold_memory_ids)


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"ablation": "oracle"}, "The oracle ablation selects by label: it needs -T protocol=paper."),
        ({"risk_filter": "label"}, "blind protocol hides; choose from evidence, none"),
        ({"intervention": "gold"}, "choose the label-free -S intervention=evidence"),
    ],
)
async def test_label_reading_choices_refuse_a_blind_task(synthetic_records, config, message):
    model = mock_model(lambda p: "x")
    task = memory_task_for(synthetic_records[0], "blind", model, gold_scorer(synthetic_records[0]))
    with pytest.raises(BlindProtocolError, match=message):
        await CMI(HashingEmbedder(), CMIConfig(**config)).select(task)


async def test_gold_without_an_injected_scorer_is_one_line(synthetic_records):
    task = memory_task_for(synthetic_records[0], "paper", mock_model(lambda p: "x"))
    with pytest.raises(UserError, match="^cmi with -S intervention=gold needs the gold answer scorer.$"):
        await CMI(HashingEmbedder()).select(task)


async def test_lazy_perturb_skips_calls_but_not_selections(synthetic_records):
    for record in synthetic_records:
        eager_prompts: list[str] = []
        lazy_prompts: list[str] = []
        eager = await run(record, prompts=eager_prompts)
        lazy = await run(record, prompts=lazy_prompts, lazy_perturb=True)
        assert eager.picks == lazy.picks
        assert set(lazy_prompts) <= set(eager_prompts)
        for c in diagnostics(lazy)["candidates"]:
            assert (c["perturbed_skipped"] is not None) == (c["utility"] <= 0)
    assert len(lazy_prompts) < len(eager_prompts)


async def test_concurrent_answers_do_not_change_selections(synthetic_records):
    rng = random.Random(0)
    respond = answers()

    async def slow(prompt: str) -> str:
        await asyncio.sleep(rng.random() / 50)
        return respond(prompt)

    sequential = await run(synthetic_records[0])
    for _ in range(3):
        concurrent = await run(synthetic_records[0], respond=slow)
        assert concurrent.picks == sequential.picks
        assert diagnostics(concurrent)["candidates"] == diagnostics(sequential)["candidates"]


async def test_paper_defaults_are_the_reference(synthetic_records):
    d = diagnostics(await run(synthetic_records[0]))
    assert (d["intervention"], d["risk_filter"], d["proposal"], d["evidence"]) == ("gold", "label", "hybrid", [])
    assert d["embedder"] == "hashing" and d["support_no_memory"] is None
    assert all(c["memory_support"] is None for c in d["candidates"])


async def test_label_free_scoring_under_paper_reads_no_gold(synthetic_records):
    task = memory_task_for(synthetic_records[0], "paper", mock_model(follow_first_note))
    sel = await CMI(HashingEmbedder(), CMIConfig(intervention="evidence", risk_filter="evidence")).select(task)
    d = diagnostics(sel)
    assert (d["intervention"], d["risk_filter"], d["proposal"]) == ("evidence", "evidence", "hybrid")
    assert d["evidence"] and all(c["memory_support"] is not None for c in d["candidates"])


async def test_blind_cmi_keeps_the_useful_memory_and_drops_its_poisoned_edit(label_free_records):
    for record in label_free_records:
        ids = key_to_memory_id(record.example_id, record.memory_bank, "blind")
        prompts: list[str] = []
        sel = await run_blind(record, prompts)
        assert [ids[p.key] for p in sel.picks] == list(record.gold_memory_ids), record.example_id
        d = diagnostics(sel)
        # the learned selector weighs conflicts itself: no risk filter unless one is named
        assert (d["intervention"], d["risk_filter"], d["proposal"]) == ("evidence", "none", "relevance")
        # the shipped learned selector holds for the embedded model, not the mock one
        assert d["selector"] == "learned_non_causal" and "mockllm/model" in d["selector_note"]
        assert d["effect"] == "answer" and d["evidence"]
        assert d["support_no_memory"] is None  # and it asks for no intervention
        poison = next(c for c in d["candidates"] if ids[c["key"]].startswith("harm"))
        assert not poison["selected"] and poison["memory_support"] is not None
        assert len(prompts) <= 2 * 4 + 2


async def test_the_evidence_filter_drops_the_less_supported_version(label_free_records):
    record = label_free_records[0]  # the poison is the useful memory with its date shifted by a day
    ids = key_to_memory_id(record.example_id, record.memory_bank, "blind")

    def both_dates(prompt: str) -> str:
        return "On 13 October 2021." if "October" in prompt else "I do not know."

    task = memory_task_for(record, "blind", mock_model(both_dates))
    sel = await CMI(HashingEmbedder(), CMIConfig(k=4, selector="rule")).select(task)
    poison = next(c for c in diagnostics(sel)["candidates"] if ids[c["key"]] == "harm_a")
    assert poison["utility"] > 0 and poison["conflicts"]
    assert poison["reason"].startswith("evidence risk: another version of the claim of")
    assert [ids[p.key] for p in sel.picks] == ["useful_a"]
    unfiltered = await CMI(
        HashingEmbedder(), CMIConfig(k=4, risk_filter="none", budget=4, tau_u=0.0, selector="rule")
    ).select(task)
    assert {ids[p.key] for p in unfiltered.picks} == {"useful_a", "harm_a"}
    assert all(c["conflicts"] == {} for c in diagnostics(unfiltered)["candidates"])


async def test_the_default_embedder_follows_the_protocol(synthetic_records):
    strategy = CMI(config=CMIConfig(ablation="oracle"))
    assert strategy.embedder("paper").name == "hashing"
    task = memory_task_for(synthetic_records[0], "paper", mock_model(lambda p: "x"), gold_scorer(synthetic_records[0]))
    assert diagnostics(await strategy.select(task))["embedder"] == "hashing"
    assert CMI(HashingEmbedder()).embedder("blind").name == "hashing"  # a given one wins


async def test_non_causal_keeps_every_candidate_the_filter_keeps_with_no_intervention(label_free_records):
    """Under blind the rule has no budget of one: every candidate that passes is kept, at
    most ``-S budget``, filled in proposal order."""
    for record in label_free_records:
        prompts: list[str] = []
        sel = await run_blind(record, prompts, ablation="non_causal")
        d = diagnostics(sel)
        assert prompts == [] and d["model_calls"] == 0  # the solver asks for the final answer only
        passing = [c["key"] for c in d["candidates"] if not c["reason"].startswith("evidence risk")]
        assert d["budget"] == 4 and len(passing) > 1
        assert [p.key for p in sel.picks] == passing  # in proposal order
        assert all(c["utility"] is None and c["answer_with"] is None for c in d["candidates"])
        capped = diagnostics(await run_blind(record, ablation="non_causal", budget=1))
        kept = [c for c in capped["candidates"] if c["selected"]]
        assert capped["budget"] == 1 and [c["key"] for c in kept] == passing[:1]
        assert all(c["reason"] == "over budget" for c in capped["candidates"] if c["key"] in passing[1:])


async def test_graded_for_every_candidate_or_for_none(label_free_records):
    """A model that reports letter log-probabilities for the first candidate only: no
    candidate's graded number is ranked against another's answer effect."""
    calls = {"options": 0}

    async def outputs(input, tools, choice, config: GenerateConfig) -> ModelOutput:
        prompt = "\n".join(m.text for m in input)
        if config.max_tokens == 1:  # a lettered-options call
            calls["options"] += 1
            out = ModelOutput.from_content(model="mockllm", content="A")
            if calls["options"] <= 3:  # the first candidate's three contexts
                top = [TopLogprob(token="A", logprob=-0.1), TopLogprob(token="B", logprob=-2.5)]
                out.choices[0].logprobs = Logprobs(content=[Logprob(token="A", logprob=-0.1, top_logprobs=top)])
        else:
            out = ModelOutput.from_content(model="mockllm", content=follow_first_note(prompt))
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return out

    record = label_free_records[0]
    model = get_model("mockllm/model", custom_outputs=outputs, memoize=False)
    task = memory_task_for(record, "blind", model)
    d = diagnostics(await CMI(HashingEmbedder(), CMIConfig(k=4, selector="rule")).select(task))
    first, *rest = d["candidates"]
    assert first["effect"]["graded"] and rest and not any(c["effect"]["graded"] for c in rest)
    for c in d["candidates"]:  # every utility is the answer effect's
        assert c["utility"] == pytest.approx(c["s_with"] - d["s_no"])


def support_selector(
    tmp_path, causal: bool, threshold: float, response_model: str | None = "mockllm/model", keeps: Keeps = "top"
):
    """A selector file that ranks by the history's support of the memory (and, causal, of
    its answer), as a fitted one would, saved under ``tmp_path``."""
    from cmi_inspect.causal_locomo.strategies.cmi.selector import SelectorFile

    names = ["memory_support", "answer_support"] if causal else ["memory_support"]
    selector = SelectorFile(
        name="support",
        causal=causal,
        features=names,
        mean=[0.5] * len(names),
        scale=[0.25] * len(names),
        coef=[2.0] * len(names),
        intercept=0.0,
        threshold=threshold,
        keeps=keeps,
        embedder="hashing",
        response_model=response_model if causal else None,
    )
    path = tmp_path / f"support-{causal}-{threshold}-{keeps}.json"
    selector.save(path)
    return str(path)


async def test_a_learned_selector_keeps_the_most_probable_candidate(label_free_records, tmp_path):
    prompts: list[str] = []
    sel = await run_blind(label_free_records[0], prompts, selector=support_selector(tmp_path, True, 0.0))
    d = diagnostics(sel)
    assert d["selector"] == "support" and d["selector_note"] is None
    assert (d["risk_filter"], d["effect"], d["budget"]) == ("none", "answer", 1)
    ranked = sorted(d["candidates"], key=lambda c: -c["probability"])
    assert [p.key for p in sel.picks] == [ranked[0]["key"]]
    assert ranked[0]["reason"] == "selected" and all(c["reason"] == "over budget" for c in ranked[1:])
    assert set(ranked[0]["features"]) == {"memory_support", "answer_support"}
    # no memory, each candidate with and perturbed: 2K + 1, the final answer reused
    assert d["model_calls"] == len(prompts) == 2 * 4 + 1 and d["final_answer_reused"]


async def test_a_selector_that_keeps_every_one_above_keeps_each_that_reaches_its_threshold(
    label_free_records, tmp_path
):
    record = label_free_records[0]
    probe = diagnostics(await run_blind(record, selector=support_selector(tmp_path, True, 0.0)))
    p = sorted((c["probability"] for c in probe["candidates"]), reverse=True)
    threshold = round((p[1] + p[2]) / 2, 6)  # the two most probable reach it, the others not
    assert p[1] > threshold > p[2]
    every = support_selector(tmp_path, True, threshold, keeps="every_above")
    d = diagnostics(sel := await run_blind(record, selector=every))
    assert d["budget"] == 4  # k: the selector decides how many
    ranked = sorted(d["candidates"], key=lambda c: -c["probability"])
    assert [p.key for p in sel.picks] == [c["key"] for c in ranked[:2]]
    assert [c["reason"] for c in ranked[:2]] == ["selected", "selected"]
    assert all(c["reason"].startswith("support: p(useful)") for c in ranked[2:])
    capped = await run_blind(record, selector=every, budget=1)  # -S budget still caps
    assert [p.key for p in capped.picks] == [ranked[0]["key"]]
    assert diagnostics(capped)["candidates"][ranked[1]["rank"] - 1]["reason"] == "over budget"


async def test_below_the_threshold_a_learned_selector_keeps_nothing(label_free_records, tmp_path):
    sel = await run_blind(label_free_records[0], selector=support_selector(tmp_path, True, 1.0))
    assert sel.picks == []
    assert all("< threshold 1.0" in c["reason"] for c in diagnostics(sel)["candidates"])


async def test_learned_non_causal_asks_the_model_nothing(label_free_records, tmp_path):
    prompts: list[str] = []
    path = support_selector(tmp_path, False, 0.0)
    sel = await run_blind(label_free_records[0], prompts, ablation="learned_non_causal", selector=path)
    d = diagnostics(sel)
    assert prompts == [] and d["model_calls"] == 0 and d["answer_no_memory"] is None
    assert len(sel.picks) == 1 and set(d["candidates"][0]["features"]) == {"memory_support"}


async def test_a_selector_of_another_model_gives_way_to_learned_non_causal(label_free_records, tmp_path):
    prompts: list[str] = []
    path = support_selector(tmp_path, True, 0.0, response_model="gguf/another")
    sel = await run_blind(label_free_records[0], prompts, selector=path)
    d = diagnostics(sel)
    assert prompts == [] and d["selector"] == "learned_non_causal"
    assert "fitted on gguf/another's answers, not mockllm/model's" in d["selector_note"]


def test_a_cross_fit_of_another_models_answers_is_refused_before_the_run(tmp_path):
    """No selector stands in for a cross-fitted one, so the run stops in one line before it
    starts, where a single causal file gives way to the non_causal one sample by sample."""
    from cmi_inspect.causal_locomo.strategies.cmi.selector import CrossFitFile, Fold, shipped

    learned = shipped("learned")  # fitted on gguf/smollm2's answers
    convs = ["conv-1", "conv-2", "conv-3"]
    folds = [
        Fold(held_out=c, choice=convs[(i + 1) % 3], training=[convs[(i + 2) % 3]],
             read=sorted([convs[(i + 1) % 3], convs[(i + 2) % 3]]), selector=learned)
        for i, c in enumerate(convs)
    ]  # fmt: skip
    CrossFitFile(name="cf", folds=folds).save(tmp_path / "cf.json")
    strategy = CMI(HashingEmbedder(), CMIConfig(selector=str(tmp_path / "cf.json")))
    with pytest.raises(UserError, match="^cross-fitted selector cf was fitted on gguf/smollm2's answers"):
        strategy.check_model(mock_model(lambda p: "?"))
    CMI(HashingEmbedder(), CMIConfig(selector="learned")).check_model(mock_model(lambda p: "?"))
