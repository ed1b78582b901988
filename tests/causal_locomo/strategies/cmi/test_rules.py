"""CMI's configuration, its choices by protocol, its rule and the pure decision."""

from __future__ import annotations

from importlib import resources

import pytest
from cmi_inspect.causal_locomo.protocol import PROTOCOLS
from cmi_inspect.causal_locomo.strategies.cmi import Candidate, CMIConfig, decide, rule_rejection
from cmi_inspect.causal_locomo.strategies.cmi.rules import Choices, check_before_run
from cmi_inspect.causal_locomo.strategies.cmi.selector import (
    CROSSFIT_SHIPPED,
    CrossFitFile,
    Fold,
    selector_named,
    shipped,
)
from cmi_inspect.errors import UserError


def candidate(key: str, rank: int, utility: float | None = None, stability: float | None = None) -> Candidate:
    return Candidate(key=key, rank=rank, proposal_score=0.0, utility=utility, stability=stability)


def test_names_are_checked_with_one_line_naming_the_choices():
    with pytest.raises(UserError, match="Unknown prefer 'recency'; choose from utility, proposal"):
        CMIConfig(prefer="recency")
    with pytest.raises(UserError, match="Unknown ablation 'random'; choose from full, no_perturb"):
        CMIConfig(ablation="random")
    with pytest.raises(UserError, match="Unknown risk filter 'labels'; choose from label, evidence, none"):
        CMIConfig(risk_filter="labels")
    with pytest.raises(UserError, match="Unknown intervention scorer 'judge'; choose from gold, evidence"):
        CMIConfig(intervention="judge")
    with pytest.raises(UserError, match="k must be an integer of at least 1"):
        CMIConfig(k=0)


@pytest.mark.parametrize("value", [True, False])
def test_a_boolean_risk_filter_is_a_bad_name(value):
    with pytest.raises(UserError, match=f"Unknown risk filter {value}; choose from label, evidence, none"):
        CMIConfig(risk_filter=value)  # type: ignore[arg-type]


def test_k_may_be_given_as_text():
    assert CMIConfig(k="4").k == 4  # type: ignore[arg-type]


def test_the_budget_is_k_for_the_rule_under_both_protocols_and_follows_how_a_selector_keeps(tmp_path):
    for protocol in ("paper", "blind"):  # the rule keeps every candidate that passes: no budget of one
        assert Choices.of(CMIConfig(k=4, selector="rule"), protocol).budget == 4
        assert Choices.of(CMIConfig(k=4, ablation="non_causal"), protocol).budget == 4
    assert Choices.of(CMIConfig(k=4), "paper").budget == 4
    assert Choices.of(CMIConfig(k=4), "blind").budget == 1  # the shipped learned selector keeps its top one
    assert Choices.of(CMIConfig(k=4, budget=2), "blind").budget == 2
    assert Choices.of(CMIConfig(k=4, budget=1), "paper").budget == 1
    every = tmp_path / "every.json"
    shipped("learned").model_copy(update={"keeps": "every_above"}).save(every)
    assert Choices.of(CMIConfig(k=4, selector=str(every)), "blind").budget == 4
    assert Choices.of(CMIConfig(k=4, selector=str(every), budget=2), "blind").budget == 2


def test_the_effect_is_graded_under_the_blind_rule_and_the_answer_otherwise():
    assert Choices.of(CMIConfig(), "paper").effect.name == "answer"
    assert Choices.of(CMIConfig(selector="rule"), "blind").effect.name == "graded"
    assert Choices.of(CMIConfig(), "blind").effect.name == "answer"  # the learned selector reads answers
    assert Choices.of(CMIConfig(lazy_perturb=True), "blind").effect.name == "answer"
    assert Choices.of(CMIConfig(effect="answer"), "blind").effect.name == "answer"


def test_lazy_perturbation_with_a_graded_effect_is_one_line():
    with pytest.raises(UserError, match="^-S lazy_perturb=true skips perturbed answers"):
        CMIConfig(lazy_perturb=True, effect="graded")
    with pytest.raises(UserError, match="Unknown effect 'sharp'; choose from answer, graded."):
        CMIConfig(effect="sharp")


@pytest.mark.parametrize(("field", "value", "parsed"), [
    ("tau_u", "1e-3", 0.001),  # Inspect hands "-S tau_u=1e-3" over as text
    ("tau_s", "0.5", 0.5),
    ("budget", "2", 2),
    ("lazy_perturb", "true", True),
])  # fmt: skip
def test_solver_arguments_given_as_text_are_parsed_once(field, value, parsed):
    assert getattr(CMIConfig(**{field: value}), field) == parsed


@pytest.mark.parametrize(("field", "value", "message"), [
    ("tau_u", "nan", "tau_u must be a finite number"),
    ("tau_u", ".nan", "tau_u must be a finite number"),
    ("tau_s", "-inf", "tau_s must be a finite number"),
    ("budget", "abc", "budget must be an integer of at least 1"),
    ("budget", 0, "budget must be an integer of at least 1"),  # would select nothing, paying for every call
    ("budget", -1, "budget must be an integer of at least 1"),
    ("lazy_perturb", "perhaps", "lazy_perturb must be true or false"),
    ("conflict_overlap", -0.5, r"conflict_overlap must be a finite number in \[0.0, inf\]"),
])  # fmt: skip
def test_a_bad_solver_argument_is_one_line_naming_it_and_the_range(field, value, message):
    with pytest.raises(UserError, match=message):
        CMIConfig(**{field: value})


def test_choices_follow_the_protocol_unless_named():
    paper, blind = Choices.of(CMIConfig(), "paper"), Choices.of(CMIConfig(), "blind")
    assert (paper.scorer.name, paper.risk.name, paper.reads_history) == ("gold", "label", False)
    assert (blind.scorer.name, blind.risk.name, blind.reads_history) == ("evidence", "none", True)
    rule = Choices.of(CMIConfig(selector="rule"), "blind")
    assert (rule.scorer.name, rule.risk.name, rule.selector) == ("evidence", "evidence", None)
    named = Choices.of(CMIConfig(intervention="evidence", risk_filter="none"), "paper")
    assert (named.scorer.name, named.risk.name, named.reads_history) == ("evidence", "none", True)


def test_label_reading_choices_are_refused_only_where_labels_are_hidden():
    Choices.of(CMIConfig(ablation="oracle", risk_filter="label"), "paper").refuse_label_reading()
    Choices.of(CMIConfig(risk_filter="none", intervention="evidence"), "blind").refuse_label_reading()
    with pytest.raises(UserError, match="blind protocol hides"):
        Choices.of(CMIConfig(risk_filter="label"), "blind").refuse_label_reading()
    oracle = CMIConfig(ablation="oracle", risk_filter="none", intervention="evidence")
    check_before_run(oracle, PROTOCOLS["paper"])
    for refuse in (
        lambda: check_before_run(oracle, PROTOCOLS["blind"]),
        Choices.of(oracle, "blind").refuse_label_reading,
    ):
        with pytest.raises(UserError, match="selects by label"):  # before the run, and in each sample
            refuse()
    with pytest.raises(UserError, match="blind protocol hides"):
        check_before_run(CMIConfig(risk_filter="label"), PROTOCOLS["blind"])


@pytest.mark.parametrize(
    ("ablation", "utility", "stability", "reason"),
    [
        ("full", 0.2, 0.1, None),
        ("full", 0.0, 0.1, "utility +0.000 <= tau_u 0.0"),
        ("full", 0.2, -0.1, "stability -0.100 < tau_s 0.0"),
        ("utility_only", 0.2, None, None),
        ("stability_only", None, 0.0, None),
        ("stability_only", None, -0.5, "stability -0.500 < tau_s 0.0"),
    ],
)
def test_each_ablation_tests_what_it_says(ablation, utility, stability, reason):
    c = candidate("a", 1, utility, stability)
    assert rule_rejection(c, None, CMIConfig(ablation=ablation).resolved("paper")) == reason


def test_blind_keeps_the_best_ranked_memory_that_raises_the_answer_score():
    config = CMIConfig().resolved("blind")
    assert (config.tau_u, config.tau_s, config.prefer) == (0.05, -1.0, "proposal")
    assert rule_rejection(candidate("a", 1, 0.06, -1.0), None, config) is None
    assert rule_rejection(candidate("a", 1, 0.05, 0.5), None, config) == "utility +0.050 <= tau_u 0.05"
    assert CMIConfig(tau_u=0.3, prefer="utility").resolved("blind").prefer == "utility"
    assert CMIConfig().resolved("paper").prefer == "utility"


def test_the_oracle_reads_only_the_label():
    config = CMIConfig(ablation="oracle")
    assert rule_rejection(candidate("a", 1), "useful", config) is None
    assert rule_rejection(candidate("a", 1), "harmful", config) == "oracle: labelled harmful"


def test_decide_fills_the_budget_by_utility_then_rank():
    cands = [candidate("a", 1, 0.1), candidate("b", 2, 0.3), candidate("c", 3, 0.3), candidate("d", 4, 0.5)]
    risky = "risk filter: labelled harmful"
    decision = decide(cands, {"a": None, "b": None, "c": None, "d": risky}, "utility", 2)
    assert decision.kept == ["b", "c"]
    assert decision.reasons == {"a": "over budget", "b": "selected", "c": "selected", "d": risky}


def test_decide_by_proposal_keeps_the_retrievers_order():
    cands = [candidate("a", 1, 0.1), candidate("b", 2, 0.3), candidate("c", 3, 0.5)]
    assert decide(cands, dict.fromkeys("abc"), "proposal", 2).kept == ["a", "b"]


@pytest.mark.parametrize("budget", [0, -1])
def test_decide_keeps_nothing_without_a_budget(budget):
    cands = [candidate("a", 1, 0.1), candidate("b", 2, 0.3)]
    decision = decide(cands, dict.fromkeys("ab"), "utility", budget)
    assert decision.kept == [] and set(decision.reasons.values()) == {"over budget"}


def test_a_learned_selector_ranks_for_full_cmi_and_learned_non_causal_only():
    with pytest.raises(UserError, match="-S selector=learned ranks CMI's candidates itself"):
        CMIConfig(selector="learned", ablation="utility_only")
    with pytest.raises(UserError, match="learned_non_causal ranks with a learned selector"):
        CMIConfig(selector="rule", ablation="learned_non_causal")
    with pytest.raises(UserError, match="cannot read it"):
        CMIConfig(selector="no/such/selector.json")
    assert Choices.of(CMIConfig(selector="rule"), "blind").selector is None
    assert Choices.of(CMIConfig(ablation="no_perturb"), "blind").selector is None  # the rule's


def test_learned_non_causal_ranks_with_the_shipped_selector_that_reads_no_answer():
    choices = Choices.of(CMIConfig(ablation="learned_non_causal"), "paper")
    assert choices.selector is not None and not choices.selector.causal
    assert not (choices.ablation.asks_with or choices.ablation.asks_no_memory)
    assert (
        Choices.of(CMIConfig(ablation="learned_non_causal", selector="learned"), "blind").selector == choices.selector
    )


def test_learned_choices_keep_one_memory_by_probability_with_no_filter_and_the_answer_effect():
    choices = Choices.of(CMIConfig(selector="learned"), "paper")
    assert (choices.budget, choices.prefer, choices.risk.name, choices.effect.name) == (
        1,
        "probability",
        "none",
        "answer",
    )
    assert choices.reads_history
    named = Choices.of(CMIConfig(selector="learned", budget=2, risk_filter="evidence", effect="graded"), "blind")
    assert (named.budget, named.risk.name, named.effect.name) == (2, "evidence", "graded")


def test_a_selector_fitted_on_another_models_answers_gives_way_to_the_non_causal_one():
    choices = Choices.of(CMIConfig(selector="learned"), "blind")
    assert choices.selector is not None and choices.selector.causal
    same = choices.for_model(str(choices.selector.response_model))
    assert same is choices
    other = choices.for_model("mockllm/model")
    assert other.selector is not None and not other.selector.causal
    assert other.ablation.name == "learned_non_causal"
    assert other.selector_note is not None and "mockllm/model" in other.selector_note


def test_the_stand_in_for_a_selector_that_keeps_every_one_above_keeps_as_the_stand_in_does(tmp_path):
    every = tmp_path / "every.json"
    shipped("learned").model_copy(update={"keeps": "every_above"}).save(every)
    choices = Choices.of(CMIConfig(k=4, selector=str(every)), "blind")
    assert choices.budget == 4
    other = choices.for_model("mockllm/model")  # the shipped non_causal one keeps its top candidate
    assert other.selector == shipped("learned_non_causal") and other.budget == 1
    assert Choices.of(CMIConfig(k=4, selector=str(every), budget=2), "blind").for_model("mockllm/model").budget == 2


def test_a_causal_file_for_learned_non_causal_is_one_line(tmp_path):
    path = tmp_path / "causal.json"
    shipped("learned").save(path)
    with pytest.raises(UserError, match="needs a selector that reads no intervention answer"):
        Choices.of(CMIConfig(ablation="learned_non_causal", selector=str(path)), "blind")


def test_the_threshold_rejects_below_it_and_names_the_probability():
    choices = Choices.of(CMIConfig(selector="learned"), "paper")
    assert choices.selector is not None
    low, high = candidate("m1", 1), candidate("m2", 2)
    low.probability, high.probability = choices.selector.threshold - 0.01, choices.selector.threshold
    assert choices.rejection(high, None) is None
    assert f"< threshold {choices.selector.threshold}" in (choices.rejection(low, None) or "")
    decision = decide([low, high], {"m1": None, "m2": None}, "probability", 1)
    assert decision.kept == ["m2"]


def cross_fit_file(tmp_path, causal: bool = True, name: str = "cf") -> str:
    """A cross-fit file of three folds over conv-1..3, each fold's selector told apart by
    its threshold, saved under ``tmp_path``."""
    base = shipped("learned" if causal else "learned_non_causal")
    conversations = ["conv-1", "conv-2", "conv-3"]
    folds = []
    for i, held_out in enumerate(conversations):
        choice = conversations[(i + 1) % 3]
        training = [c for c in conversations if c not in (held_out, choice)]
        selector = base.model_copy(
            update={"name": f"{name} fold {held_out}", "threshold": 0.1 * (i + 1), "keeps": "every_above"}
        )
        folds.append(
            Fold(
                held_out=held_out, choice=choice, training=training, read=sorted([*training, choice]), selector=selector
            )
        )
    path = tmp_path / f"{name}.json"
    CrossFitFile(name=name, folds=folds).save(path)
    return str(path)


def test_each_sample_is_ranked_by_the_fold_that_holds_out_its_conversation(tmp_path):
    path = cross_fit_file(tmp_path)
    config = CMIConfig(k=4, selector=path)  # read and checked at -S parsing
    for i, conversation in enumerate(["conv-1", "conv-2", "conv-3"]):
        choices = Choices.of(config, "blind", conversation)
        assert choices.selector is not None and choices.selector.name == f"cf fold {conversation}"
        assert choices.selector.threshold == pytest.approx(0.1 * (i + 1))
        assert choices.cross_fit is not None and choices.budget == 4  # every one above: up to k
    for unheld in ("conv-9", None):
        with pytest.raises(UserError) as refused:
            Choices.of(config, "blind", unheld)
        message = str(refused.value)
        assert message == (
            f"cross-fitted selector cf: no fold holds out conversation {unheld} (its folds hold "
            "out conv-1, conv-2, conv-3); a sample is ranked only by the fold that never read its conversation."
        )
    check_before_run(config, PROTOCOLS["blind"])  # before a run, no sample: no fold needed


def test_a_cross_fit_on_another_models_answers_is_refused_not_replaced(tmp_path):
    choices = Choices.of(CMIConfig(selector=cross_fit_file(tmp_path)), "blind", "conv-2")
    assert choices.for_model("gguf/smollm2") is choices
    with pytest.raises(
        UserError, match="^cross-fitted selector cf was fitted on gguf/smollm2's answers, not mockllm/model's"
    ):
        choices.for_model("mockllm/model")


def test_learned_non_causal_takes_a_non_causal_cross_fit_and_refuses_a_causal_one(tmp_path):
    path = cross_fit_file(tmp_path, causal=False, name="nc")
    choices = Choices.of(CMIConfig(ablation="learned_non_causal", selector=path), "blind", "conv-3")
    assert choices.selector is not None and choices.selector.name == "nc fold conv-3" and not choices.selector.causal
    assert not (choices.ablation.asks_with or choices.ablation.asks_no_memory or choices.ablation.asks_perturbed)
    assert choices.for_model("mockllm/model") is choices  # it reads no answer: any model
    with pytest.raises(UserError, match="needs a selector that reads no intervention answer"):
        Choices.of(CMIConfig(ablation="learned_non_causal", selector=cross_fit_file(tmp_path)), "blind", "conv-3")


@pytest.mark.parametrize("name", ["crossfit", "crossfit_non_causal"])
def test_the_shipped_cross_fit_names_say_none_ships_yet(name):
    package = resources.files("cmi_inspect.causal_locomo.strategies.cmi").joinpath("selectors")
    if package.joinpath(CROSSFIT_SHIPPED[name]).is_file():  # fitted and shipped since
        assert isinstance(CMIConfig(selector=name) and selector_named(name), CrossFitFile)
        return
    with pytest.raises(UserError) as refused:
        CMIConfig(selector=name)
    assert str(refused.value).startswith(f"-S selector={name}: no cross-fitted selector ships yet; fit one with")
    assert "--cross-fit" in str(refused.value) and "\n" not in str(refused.value)
    with pytest.raises(UserError, match="no cross-fitted selector ships yet"):
        Choices.of(CMIConfig.model_construct(selector="crossfit", ablation="learned_non_causal", k=3), "blind")
