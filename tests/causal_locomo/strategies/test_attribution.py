"""The attribution baselines, context_cite and leave_one_in: what they keep on a scripted model
whose answer log-probabilities are known, their one-line refusal of a model without them, their
registration, and a run end to end on two release samples."""

from __future__ import annotations

import inspect
import itertools
import math
import random
from collections.abc import Callable
from typing import Any

import pytest
import tasks.causal_locomo  # noqa: F401  the checkout's task file: registers the bare names
from cmi_inspect.causal_locomo.causal_locomo import causal_locomo
from cmi_inspect.causal_locomo.prompts import no_memory_prompt
from cmi_inspect.causal_locomo.selection import MemorySelection
from cmi_inspect.causal_locomo.strategies import BASELINES, BUILT_IN, STRATEGIES, strategy_class, strategy_names
from cmi_inspect.causal_locomo.strategies.arguments import strategy_arguments
from cmi_inspect.causal_locomo.strategies.base import MemoryTask, Selection
from cmi_inspect.causal_locomo.strategies.context_cite import ContextCite, ContextCiteDetails, ablation_masks
from cmi_inspect.causal_locomo.strategies.leave_one_in import LeaveOneIn, LeaveOneInDetails
from cmi_inspect.causal_locomo.strategies.solvers import BASELINE_SOLVERS, STRATEGY_SOLVERS
from cmi_inspect.causal_locomo.view import Memory
from cmi_inspect.errors import UserError
from cmi_inspect.run import run_all
from cmi_inspect.run_spec import RunSpec
from inspect_ai import eval as inspect_eval
from inspect_ai.log import list_eval_logs, read_eval_log
from inspect_ai.model import ChatMessage, Model
from inspect_ai.solver import SolverSpec
from inspect_ai.util import registry_create, registry_info

from conftest import REPO, SYNTHETIC, mock_model, samples_of

REQUEST = "Which city did Priya move to?"
HELPFUL = Memory("m1", "Priya moved to Lisbon in May.", 3)
IDLE = Memory("m2", "Sam plays the cello on weekends.", 2)
HURTFUL = Memory("m3", "Priya never left Boston.", 1)
ANSWER = "Lisbon."
REFUSAL = (
    "^Strategy '{}' scores answers by their log-probability under forced decoding, which "
    r"mockllm/model cannot return: use a gguf/ model \(the embedded one, gguf/smollm2\).$"
)


def forced_model(logprob: Callable[[str], float], asked: list[str] | None = None) -> Model:
    """A mockllm model answering "Lisbon." with notes and "I do not know." without, whose
    provider offers forced decoding: an answer's log-probability in a prompt is
    ``logprob(prompt)``, spread over its words and its end of turn."""
    model = mock_model(lambda p: ANSWER if "Notes:" in p else "I do not know.")

    async def continuation_logprobs(input: list[ChatMessage], continuations: list[str]) -> list[list[float]]:
        asked_now = continuations
        if asked is not None:
            asked.extend(asked_now)
        n = [len(c.split()) + 1 for c in continuations]
        return [[logprob(input[-1].text) / k] * k for k in n]

    async def count_tokens(input: list[ChatMessage], config: object = None) -> int:
        return sum(len(m.text.split()) for m in input)

    model.api.continuation_logprobs = continuation_logprobs  # type: ignore[attr-defined]
    model.api.count_tokens = count_tokens  # type: ignore[method-assign]
    return model


def by_memories(effects: dict[Memory, float], base: float = -10.0) -> Callable[[str], float]:
    """The answer's log-probability: ``base``, plus each memory's effect where it stands in the
    prompt."""
    return lambda prompt: base + sum(e for m, e in effects.items() if m.content in prompt)


def task_of(memories: list[Memory], model: Model, protocol: str = "paper") -> MemoryTask:
    return MemoryTask(request=REQUEST, memories=memories, sessions=[], protocol=protocol, model=model)  # type: ignore[arg-type]


def kept(selection: Selection) -> list[str]:
    return [p.key for p in selection.picks]


@pytest.mark.parametrize("protocol", ["paper", "blind"])
async def test_context_cite_keeps_the_source_whose_removal_moves_the_answers_log_probability(protocol):
    asked: list[str] = []
    model = forced_model(by_memories({HELPFUL: 4.0, IDLE: 0.0}), asked)
    selection = await ContextCite(embedder="hashing").select(task_of([HELPFUL, IDLE], model, protocol))
    assert kept(selection) == ["m1"] and selection.ranking == ["m1", "m2"]
    d = selection.details
    assert isinstance(d, ContextCiteDetails)
    helpful, idle = sorted(d.candidates, key=lambda c: c.key)
    assert helpful.attribution == pytest.approx(4.0, abs=0.1) and idle.attribution == 0.0
    assert d.intercept == pytest.approx(-10.0, abs=0.1)
    # two candidates have four subsets, fewer than 16 ablations: each scored once
    assert (d.ablations, d.subsets_scored, d.cost.forced_calls, d.cost.generate_calls) == (4, 4, 4, 1)
    assert d.cost.forced_prompt_tokens > 0 and d.cost.forced_answer_tokens == 4 * 2
    assert d.answer == ANSWER and set(asked) == {ANSWER}  # the full context's answer, attributed


async def test_context_cite_draws_its_ablations_when_there_are_more_subsets_and_repeats_its_draw():
    memories = [HELPFUL, IDLE, HURTFUL, Memory("m4", "Sam owns a red bike.", 4), Memory("m5", "Tea at noon.", 5)]
    model = forced_model(by_memories({HELPFUL: 4.0, HURTFUL: -3.0}))
    strategy = ContextCite(k=5, ablations=24, embedder="hashing")
    first, again = [await strategy.select(task_of(memories, model)) for _ in range(2)]
    assert kept(first) == kept(again) == ["m1"]
    d = first.details
    assert isinstance(d, ContextCiteDetails) and d.ablations == 24 and d.subsets_scored < 32
    by_key = {c.key: c.attribution for c in d.candidates}
    assert by_key["m1"] > 3 and by_key["m3"] < -2 and all(abs(by_key[k]) < 0.5 for k in ("m2", "m4", "m5"))
    assert first.output is None  # the prompt keeps one of five: its answer is the harness's


def test_ablation_masks_are_every_subset_or_a_seeded_draw():
    assert sorted(ablation_masks(2, 4, random.Random(0))) == sorted(itertools.product((False, True), repeat=2))
    drawn = ablation_masks(6, 10, random.Random("seed"))
    assert len(drawn) == 10 and drawn == ablation_masks(6, 10, random.Random("seed"))


async def test_a_threshold_keeps_only_the_attributions_above_it():
    model = forced_model(by_memories({HELPFUL: 4.0, IDLE: 1.0}))
    memories = [HELPFUL, IDLE]
    assert kept(await ContextCite(embedder="hashing").select(task_of(memories, model))) == ["m1", "m2"]
    assert kept(await ContextCite(threshold=2.0, embedder="hashing").select(task_of(memories, model))) == ["m1"]
    assert kept(await LeaveOneIn(threshold=5.0, embedder="hashing").select(task_of(memories, model))) == []


@pytest.mark.parametrize("protocol", ["paper", "blind"])
async def test_leave_one_in_keeps_a_candidate_that_raises_the_answers_log_probability_alone(protocol):
    asked: list[str] = []
    model = forced_model(by_memories({HELPFUL: 3.0, IDLE: 0.0, HURTFUL: -1.0}), asked)
    selection = await LeaveOneIn(embedder="hashing").select(task_of([HELPFUL, IDLE, HURTFUL], model, protocol))
    assert kept(selection) == ["m1"] and selection.ranking == ["m1", "m2", "m3"]
    d = selection.details
    assert isinstance(d, LeaveOneInDetails) and d.logprob_none == pytest.approx(-10.0)
    assert {c.key: round(c.attribution, 6) for c in d.candidates} == {"m1": 3.0, "m2": 0.0, "m3": -1.0}
    assert (d.cost.generate_calls, d.cost.forced_calls) == (1, 4)  # no memory, then each alone
    assert set(asked) == {ANSWER}


async def test_every_candidate_kept_reuses_the_full_context_answer():
    model = forced_model(by_memories({HELPFUL: 2.0, IDLE: 1.0}))
    selection = await LeaveOneIn(embedder="hashing").select(task_of([HELPFUL, IDLE], model))
    assert kept(selection) == ["m1", "m2"]
    assert selection.output is not None and selection.output.completion == ANSWER


async def test_an_empty_bank_asks_nothing():
    selection = await ContextCite(embedder="hashing").select(task_of([], forced_model(lambda p: 0.0)))
    assert selection.picks == [] and selection.prompt == no_memory_prompt(REQUEST)
    assert isinstance(selection.details, ContextCiteDetails) and selection.details.cost.generate_calls == 0


@pytest.mark.parametrize("strategy", [ContextCite, LeaveOneIn])
async def test_a_model_without_log_probabilities_is_one_line(strategy):
    refusal = REFUSAL.format(strategy.name)
    with pytest.raises(UserError, match=refusal):
        strategy().check_model(mock_model(lambda p: "x"))
    with pytest.raises(UserError, match=refusal):  # a solver built before the model is known
        await strategy(embedder="hashing").select(task_of([HELPFUL], mock_model(lambda p: "x")))


@pytest.mark.parametrize("name", list(BASELINES))
def test_inspect_eval_refuses_a_model_without_log_probabilities_before_the_run(name, tmp_path, monkeypatch):
    monkeypatch.chdir(REPO)
    for solver, args in ((SolverSpec(name), {}), (None, {"strategy": name})):  # --solver, -T strategy=
        with pytest.raises(UserError, match=REFUSAL.format(name)):
            inspect_eval(
                "tasks/causal_locomo.py",
                solver=solver,
                task_args={"data_file": str(SYNTHETIC), **args},
                model="mockllm/model",
                display="none",
                log_dir=str(tmp_path),
            )
    assert not list(tmp_path.iterdir())  # no log: nothing ran


def test_bad_arguments_are_one_line():
    with pytest.raises(UserError, match=r"^ablations must be an integer of at least 2, got 1.$"):
        ContextCite(ablations=1)
    with pytest.raises(UserError, match=r"^threshold must be a finite number in \[0.0, inf\], got -1.$"):
        LeaveOneIn(threshold=-1)
    with pytest.raises(UserError, match="^Strategy 'context_cite' takes no -S top_k; it takes k: int = 3, "):
        BASELINE_SOLVERS["context_cite"](top_k=2)


def test_they_are_built_in_and_run_when_named_not_by_default():
    assert list(BASELINES) == ["context_cite", "leave_one_in"] and not set(BASELINES) & set(STRATEGIES)
    assert BUILT_IN == {**STRATEGIES, **BASELINES} and strategy_names()[: len(BUILT_IN)] == list(BUILT_IN)
    assert RunSpec(log_dir="logs").strategies == list(STRATEGIES)  # cmi-inspect run's default rows
    for name, strategy in BASELINES.items():
        assert strategy_class(name) is strategy and strategy.name == name
        assert BASELINE_SOLVERS[name].__name__ == name and name not in STRATEGY_SOLVERS
        assert registry_info(registry_create("solver", name)).name == name  # the checkout's bare name


@pytest.mark.parametrize("name", list(BASELINES))
def test_a_baselines_solver_takes_its_strategys_arguments_the_guard_and_isolation_and_documents_each(name):
    factory, arguments = BASELINE_SOLVERS[name], strategy_arguments(BASELINES[name])
    signature = inspect.signature(factory, eval_str=True)
    assert list(signature.parameters) == [*arguments.names, "guard", "isolate", "unknown"]
    assert [signature.parameters[n] for n in arguments.names] == list(arguments.signature.parameters.values())
    doc = inspect.getdoc(factory) or ""
    for argument in [*arguments.names, "guard", "isolate", "**unknown"]:
        assert f"\n    {argument}: " in doc, argument


RELEASE_SAMPLES = ["conv-26_qa_0000", "conv-30_qa_0000"]


@pytest.mark.parametrize("protocol", ["paper", "blind"])
def test_both_run_end_to_end_on_two_release_samples(protocol, tmp_path, release_file):
    for name in BASELINES:
        [log] = inspect_eval(
            causal_locomo(protocol=protocol, data_file=str(release_file), strategy=name),
            model="forced_script/0",
            display="none",
            log_dir=str(tmp_path / name),
            sample_id=RELEASE_SAMPLES,
        )
        assert log.status == "success", log.error
        assert log.eval.task_display_name == f"causal_locomo: {name} ({protocol})"
        for sample in samples_of(log):
            record = sample.store_as(MemorySelection)
            details = BASELINES[name].Details.model_validate(record.details)  # type: ignore[attr-defined]
            assert record.strategy == name and len(details.candidates) == 3
            assert details.cost.generate_calls == 1 and details.cost.forced_calls > 0
            assert details.cost.forced_prompt_tokens > 0 and "attribution" in record.explanation
            assert record.selected == [c.key for c in details.candidates if c.selected]
            assert all(math.isfinite(c.attribution) for c in details.candidates)


def test_cmi_inspect_run_runs_them_by_name_in_process(tmp_path, monkeypatch):
    import cmi_inspect.run

    def apart(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("a built-in strategy is run apart")

    monkeypatch.setattr(cmi_inspect.run, "run_apart", apart)
    left = run_all(
        RunSpec(
            log_dir=str(tmp_path),
            strategies=["context_cite", "leave_one_in"],
            model="forced_script/0",
            task_args={"data_file": str(SYNTHETIC), "protocol": "blind"},
            limit=2,
        )
    )
    assert left == []
    logs = [read_eval_log(info.name, header_only=True) for info in list_eval_logs(str(tmp_path))]
    assert sorted(h.eval.task_display_name or "" for h in logs) == [
        "causal_locomo: context_cite (blind)",
        "causal_locomo: leave_one_in (blind)",
    ]
    assert all(h.status == "success" for h in logs)
    with pytest.raises(UserError, match=REFUSAL.format("context_cite").replace("mockllm/model", "fixed_latency/0")):
        run_all(
            RunSpec(
                log_dir=str(tmp_path / "refused"),
                strategies=["context_cite"],
                model="fixed_latency/0",
                task_args={"data_file": str(SYNTHETIC)},
            )
        )
    assert not (tmp_path / "refused").exists()


@pytest.mark.slow  # runs the embedded local model
@pytest.mark.heavy  # minutes on two cores: -m 'not heavy' leaves it out
def test_they_and_cmis_logprob_effect_read_the_embedded_models_forced_decoding(tmp_path, release_file):
    runs = {"context_cite": {}, "leave_one_in": {}, "cmi": {"effect": "logprob", "selector": "rule"}}
    for name, args in runs.items():
        [log] = inspect_eval(
            causal_locomo(protocol="blind", data_file=str(release_file), strategy=name, strategy_args=args),
            model="gguf/smollm2",
            display="none",
            log_dir=str(tmp_path / name),
            sample_id=RELEASE_SAMPLES,
        )
        assert log.status == "success", log.error
        for sample in samples_of(log):
            details = sample.store_as(MemorySelection).details
            if name == "cmi":
                assert details["effect"] == "logprob"
                assert all(c["effect"]["method"] == "forced" for c in details["candidates"])
                assert all(math.isfinite(c["utility"]) for c in details["candidates"])
            else:
                assert details["cost"]["forced_calls"] > 0 and details["cost"]["forced_prompt_tokens"] > 0
                assert all(math.isfinite(c["attribution"]) for c in details["candidates"])
