"""strategy_solver around every strategy: what it records, that it records the same thing twice,
and the boundary around ``select`` against hostile strategies installed by entry point."""

from __future__ import annotations

from functools import partial

import pytest
from cmi_inspect.causal_locomo.causal_locomo import causal_locomo
from cmi_inspect.causal_locomo.data_files import load_records
from cmi_inspect.causal_locomo.dataset import scored_record
from cmi_inspect.causal_locomo.strategies.solvers import graph_memory, reflection_memory, summary_memory, vector_memory
from hostile import GIVE_UP
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog

from conftest import REPO, SYNTHETIC, conversation_data, memory_task_for, mock_model, require_data, samples_of, score_of


def selections(solver, tmp_path, protocol="paper"):
    require_data()
    [log] = inspect_eval(
        causal_locomo(protocol=protocol),
        solver=solver,
        model=mock_model(lambda p: "?"),
        display="none",
        log_dir=str(tmp_path),
    )
    assert log.status == "success"
    return {s.id: (s.store["MemorySelection:selected"], s.store["MemorySelection:scores"]) for s in samples_of(log)}


@pytest.mark.slow  # two runs over all 87 examples each
@pytest.mark.parametrize(
    ("solver", "count"),
    [
        (partial(vector_memory, embedder="hashing"), 3),  # e5 would re-embed the release per run
        (graph_memory, 3),
        (reflection_memory, 3),
        (summary_memory, None),
    ],
)
@pytest.mark.parametrize("protocol", ["paper", "blind"])
def test_counts_and_repeatable_selections_on_the_release(solver, count, protocol, tmp_path, real_records):
    first = selections(solver(), tmp_path, protocol)
    second = selections(solver(), tmp_path, protocol)
    assert first == second
    sizes = [len(keys) for keys, _ in first.values()]
    if count is None:  # the whole bank: avg memories 5.644
        assert round(sum(sizes) / len(sizes), 3) == 5.644
    else:
        assert set(sizes) == {count}
        for _, scores in first.values():
            assert scores == sorted(scores, reverse=True)


# --- the boundary around select(): hostile strategies installed through the entry point ---


def run_hostile(name: str, tmp_path, protocol: str = "paper", respond=lambda p: GIVE_UP) -> EvalLog:
    """One eval of the installed strategy ``name`` on the synthetic fixture; samples may fail."""
    from cmi_inspect.causal_locomo.strategies.solvers import memory_strategy

    [log] = inspect_eval(
        causal_locomo(protocol=protocol, data_file=str(SYNTHETIC)),
        solver=memory_strategy(strategy=name),
        model=mock_model(respond),
        display="none",
        log_dir=str(tmp_path),
        fail_on_error=False,
    )
    return log


def errors(log: EvalLog) -> list[str]:
    return [s.error.message if s.error else "" for s in samples_of(log)]


# the blind run in the fast suite, both in the full one
@pytest.mark.parametrize("protocol", [pytest.param("paper", marks=pytest.mark.slow), "blind"])
def test_rewriting_the_samples_record_to_i_do_not_know_fails_the_sample_by_name(hostile, tmp_path, protocol):
    log = run_hostile("rewrite", tmp_path, protocol)
    for message in errors(log):
        assert message.startswith("StrategyError(\"strategy 'rewrite' changed the sample it runs in (")
        assert "scoring_criteria" in message and "target" in message
    assert not any(s.scores for s in samples_of(log))


def test_sys_exit_in_select_fails_only_its_samples(hostile, tmp_path):
    log = run_hostile("exit", tmp_path)  # the process carries on to read the log
    assert errors(log) == ["StrategyError(\"strategy 'exit' failed: SystemExit(3)\")"] * 3


def test_picks_outside_the_bank_or_twice_fail_with_the_bad_keys(hostile, tmp_path):
    log = run_hostile("bad_picks", tmp_path, "blind")
    assert set(errors(log)) == {
        "StrategyError(\"strategy 'bad_picks' picked 'm999' not in the bank it was shown; 'm1' more than once\")"
    }


def test_a_ranking_outside_the_bank_or_twice_fails_with_the_bad_keys(hostile, tmp_path):
    log = run_hostile("bad_ranking", tmp_path, "blind")
    assert set(errors(log)) == {
        "StrategyError(\"strategy 'bad_ranking' ranked 'm999' not in the bank it was shown; 'm1' more than once\")"
    }


def test_a_strategy_returning_no_selection_is_named(hostile, tmp_path):
    log = run_hostile("not_a_selection", tmp_path)
    assert set(errors(log)) == {"StrategyError(\"strategy 'not_a_selection' returned NoneType, not a Selection\")"}


def test_limit_and_user_errors_pass_through_untouched(hostile, tmp_path):
    limited = run_hostile("limited", tmp_path / "limited")
    assert errors(limited) == ["", "", ""]
    assert {s.limit.type if s.limit else None for s in samples_of(limited)} == {"token"}
    misconfigured = run_hostile("misconfigured", tmp_path / "misconfigured")
    assert set(errors(misconfigured)) == {"misconfigured needs -S endpoint=URL"}


def test_the_strategy_s_own_model_calls_are_logged_in_its_sample(tmp_path):
    from cmi_inspect.causal_locomo.strategies.solvers import cmi
    from inspect_ai.event import ModelEvent

    [log] = inspect_eval(
        causal_locomo(data_file=str(SYNTHETIC)),
        solver=cmi(k=4),
        model=mock_model(lambda p: GIVE_UP),
        display="none",
        log_dir=str(tmp_path),
    )
    assert log.status == "success"
    for sample in samples_of(log):
        calls = [e for e in sample.events if isinstance(e, ModelEvent)]
        assert len(calls) > 1  # CMI's interventions, then the answer
        assert sample.model_usage["mockllm/model"].input_tokens == sum(
            e.output.usage.input_tokens for e in calls if e.output.usage
        )


# --- the selection is what the model saw, sealed when it is recorded ---


def whole_bank(tmp_path, protocol: str) -> dict[str, dict[str, float]]:
    """Each sample's selection metrics when a strategy declares the whole bank."""
    from cmi_inspect.causal_locomo.strategies.solvers import memory_strategy

    [log] = inspect_eval(
        causal_locomo(protocol=protocol, data_file=str(SYNTHETIC)),
        solver=memory_strategy(strategy="summary_memory", mode="concat"),
        model=mock_model(lambda p: GIVE_UP),
        display="none",
        log_dir=str(tmp_path / "whole"),
    )
    return {str(s.id): score_of(s, "memory_selection").value for s in samples_of(log)}  # type: ignore[misc]


@pytest.mark.parametrize("name", ["under_declare", "paraphrase"])
def test_a_strategy_that_shows_the_bank_but_declares_nothing_is_charged_with_all_of_it(hostile, tmp_path, name):
    log = run_hostile(name, tmp_path, "blind")
    assert log.status == "success"
    charged = whole_bank(tmp_path, "blind")
    for sample in samples_of(log):
        score = score_of(sample, "memory_selection")
        value = dict(score.value)  # type: ignore[arg-type]
        assert value.pop("undeclared") == len(scored_record(sample).memory_bank)
        expected = {k: v for k, v in charged[str(sample.id)].items() if k != "undeclared"}
        assert value == expected
        assert expected["bad_rejection"] == 0 or not scored_record(sample).bad_memory_ids
        assert "Exposed but not declared" in (score.explanation or "")
    assert any(v["poison_adoption"] > 0 for v in charged.values())
    assert log.results is not None
    undeclared = next(s for s in log.results.scores if s.name == "undeclared")
    # Inspect names the metric after the package that registers it once it is installed
    [count] = [m for name, m in undeclared.metrics.items() if name.split("/")[-1] == "count"]
    assert count.value == 3  # samples with memories shown undeclared


def test_an_answer_derived_by_the_model_from_the_bank_exposes_the_bank(hostile, tmp_path):
    restated = "every note restated in other words than its own"

    def respond(prompt: str) -> str:
        return GIVE_UP if "[summary]" in prompt else restated

    log = run_hostile("summarise", tmp_path, "blind", respond)
    assert log.status == "success"
    for sample in samples_of(log):
        value = score_of(sample, "memory_selection").value
        assert value["n_selected"] == len(scored_record(sample).memory_bank)


@pytest.mark.parametrize("name", ["forge_answer", "reuse_other_answer"])
def test_an_answer_no_model_call_gave_to_the_declared_prompt_fails_the_sample_by_name(hostile, tmp_path, name):
    log = run_hostile(name, tmp_path, "blind")
    for message in errors(log):
        assert message.startswith(f"StrategyError(\"strategy '{name}' returned an answer (Selection.output)")
    assert not any(s.scores for s in samples_of(log))


def test_a_selection_rewritten_after_it_was_recorded_fails_the_sample_by_name(hostile, tmp_path):
    log = run_hostile("rewrite_selection", tmp_path, "blind")
    assert (
        errors(log)
        == [
            "SelectionSealError(\"The selection strategy 'rewrite_selection' recorded was changed after it was "
            'sealed: not scored.")'
        ]
        * 3
    )


# --- isolation: select in a sandboxed process of its own ---


def run_isolated(name: str, tmp_path, isolate: bool, respond=lambda p: GIVE_UP) -> EvalLog:
    from cmi_inspect.causal_locomo.strategies.solvers import memory_strategy

    [log] = inspect_eval(
        causal_locomo(protocol="blind", data_file=str(SYNTHETIC)),
        solver=memory_strategy(strategy=name, isolate=isolate),
        model=mock_model(respond),
        display="none",
        log_dir=str(tmp_path),
        fail_on_error=False,
    )
    return log


def f1s(log: EvalLog) -> list[float]:
    return [float(score_of(s, "memory_selection").value["useful_f1"]) for s in samples_of(log)]  # type: ignore[index]


@pytest.mark.slow  # a sandboxed process per sample
def test_a_strategy_reading_the_key_from_disk_scores_like_no_memory_when_isolated(hostile, tmp_path, monkeypatch):
    from cmi_inspect.causal_locomo.strategies.isolation import sandbox

    monkeypatch.setenv("HOSTILE_DATA_FILES", str(SYNTHETIC))
    cheat = run_isolated("read_the_key", tmp_path / "in-process", isolate=False)
    assert f1s(cheat) == [1.0, 1.0, 1.0]  # the cheat works in the run's own process
    if sandbox() == "none":
        pytest.skip("neither bubblewrap nor unshare runs here: isolation cannot be shown")
    isolated = run_isolated("read_the_key", tmp_path / "isolated", isolate=True)
    assert isolated.status == "success", errors(isolated)
    nothing = run_isolated("no_memory", tmp_path / "none", isolate=False)
    assert f1s(isolated) == f1s(nothing)
    assert {s.store["MemorySelection:isolation"] for s in samples_of(isolated)} == {sandbox()}


@pytest.mark.slow  # a sandboxed process per sample
def test_an_isolated_strategy_calls_the_model_through_the_run_and_scores_as_in_process(hostile, tmp_path):
    from cmi_inspect.causal_locomo.strategies.isolation import sandbox

    if sandbox() == "none":
        pytest.skip("neither bubblewrap nor unshare runs here: isolation cannot be shown")

    def respond(prompt: str) -> str:
        return "every note restated in other words than its own" if "[summary]" not in prompt else GIVE_UP

    here = run_isolated("summarise", tmp_path / "here", isolate=False, respond=respond)
    there = run_isolated("summarise", tmp_path / "there", isolate=True, respond=respond)
    assert there.status == "success", errors(there)
    for a, b in zip(samples_of(here), samples_of(there), strict=True):
        assert a.scores is not None and b.scores is not None
        assert {k: s.value for k, s in a.scores.items()} == {k: s.value for k, s in b.scores.items()}
        assert len([e for e in b.events if type(e).__name__ == "ModelEvent"]) == 2  # recorded here
    exited = run_isolated("exit", tmp_path / "exit", isolate=True)
    assert set(errors(exited)) == {"StrategyError(\"strategy 'exit' failed: SystemExit(3)\")"}


@pytest.mark.slow  # a sandboxed process per sample
@pytest.mark.parametrize("kind", ["bwrap", "unshare"])
def test_each_sandbox_hides_the_key_from_a_strategy_that_reads_it(hostile, tmp_path, monkeypatch, kind):
    from cmi_inspect.causal_locomo.strategies import isolation

    if not isolation.works(kind):
        pytest.skip(f"{kind} does not run here")
    monkeypatch.setattr(isolation, "sandbox", lambda: kind)
    monkeypatch.setenv("HOSTILE_DATA_FILES", str(SYNTHETIC))
    isolated = run_isolated("read_the_key", tmp_path / "isolated", isolate=True)
    assert isolated.status == "success", errors(isolated)
    assert f1s(isolated) == [0.0, 0.0, 0.0]  # every synthetic sample has a useful memory
    assert {s.store["MemorySelection:isolation"] for s in samples_of(isolated)} == {kind}


def test_with_no_sandbox_the_strategy_runs_unisolated_and_its_record_says_so(hostile, tmp_path, monkeypatch, caplog):
    from cmi_inspect.causal_locomo.strategies import isolation

    monkeypatch.setattr(isolation, "sandbox", lambda: "none")
    log = run_isolated("first_memory", tmp_path, isolate=True)
    assert log.status == "success"
    assert {s.store["MemorySelection:isolation"] for s in samples_of(log)} == {"none"}
    assert "strategy 'first_memory' runs NOT isolated" in caplog.text


def test_an_isolated_strategy_is_told_its_example_s_conversation_as_one_in_process_is(tmp_path):
    """The conversation is no label: the sandboxed child gets it with the rest of its task."""
    import json

    from cmi_inspect.causal_locomo.strategies.isolation import task_message, task_of
    from cmi_inspect.causal_locomo.strategies.vector import VectorMemory

    data = conversation_data(tmp_path / "data.jsonl", {"conv-26": [0]})
    [record] = load_records(data)
    task = memory_task_for(record, "blind")
    assert task.conversation == "conv-26"
    message = json.loads(json.dumps(task_message(task, VectorMemory, {})))
    assert task_of(message, task.model).conversation == "conv-26"


def test_the_sandbox_hides_the_package_s_own_data_folders():
    from cmi_inspect.causal_locomo.strategies import isolation

    assert [p.relative_to(REPO).as_posix() for p in isolation.package_data()] == [
        "cmi_inspect/testing",
        "cmi_inspect/causal_locomo/annotations",
    ]
