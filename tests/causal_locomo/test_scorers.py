"""task_score and memory_selection inside real Inspect evals (mockllm responses)."""

from __future__ import annotations

import pytest
from cmi_inspect.causal_locomo.causal_locomo import causal_locomo
from cmi_inspect.causal_locomo.dataset import CausalLocomoMetadata, scored_record
from cmi_inspect.causal_locomo.judge import JUDGE_PROMPT_VERSION
from cmi_inspect.causal_locomo.scorers import count, memory_selection, task_score
from cmi_inspect.causal_locomo.strategies.solvers import cmi, full_history, no_memory, vector_memory
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.log import EvalLog
from inspect_ai.scorer import Score, Scorer, Target, scorer
from inspect_ai.solver import TaskState

from conftest import SYNTHETIC, mock_model, require_data, samples_of, score_of, value_of


def run(solver, respond=lambda p: "I do not know.", tmp_path=None, roles=None, **task_args) -> EvalLog:
    require_data(task_args)
    [log] = inspect_eval(
        causal_locomo(**task_args),
        solver=solver,
        model=mock_model(respond),
        model_roles=roles,
        display="none",
        log_dir=str(tmp_path) if tmp_path else None,
    )
    assert log.status == "success", log.error
    return log


def selection_means(log: EvalLog) -> dict[str, float]:
    rows = [value_of(s, "memory_selection") for s in samples_of(log)]
    return {k: round(sum(r[k] for r in rows) / len(rows), 3) for k in rows[0]}


@pytest.mark.slow  # two strategies on the whole release
@pytest.mark.heavy  # minutes on two cores: -m 'not heavy' leaves it out
def test_whole_bank_and_empty_bookkeeping_on_the_release(tmp_path):
    whole = selection_means(run(full_history(), tmp_path=tmp_path))
    assert (whole["useful_f1"], whole["bad_rejection"], whole["poison_adoption"], whole["n_selected"]) == (
        0.308,
        0.0,
        0.621,
        5.644,
    )
    none = selection_means(run(no_memory(), tmp_path=tmp_path))
    assert (none["useful_f1"], none["bad_rejection"], none["poison_adoption"], none["n_selected"]) == (
        0.0,
        1.0,
        0.0,
        0.0,
    )


def test_task_score_with_the_fallback_judge(tmp_path):
    answers = {"When did Priya": "3 March 2022", "Which two": "The violin.", "What colour": "Yellow!"}

    def respond(prompt: str) -> str:
        return next(a for q, a in answers.items() if q in prompt)

    log = run(no_memory(), respond, tmp_path, data_file=str(SYNTHETIC))
    scores = {s.id: score_of(s, "task_score") for s in samples_of(log)}
    perfect = scores["syn_0000"]
    assert perfect.value == {
        "score": 1.0,
        "deterministic": 1.0,
        "judge": 1.0,
        "success": 1.0,
        "judge_error": 0.0,
        "hedged": 0.0,
        "negated": 0.0,
    }
    assert perfect.metadata["judge"].startswith("alias-match")
    assert perfect.metadata["judge_prompt_version"] == JUDGE_PROMPT_VERSION
    wrong = scores["syn_0001"].value
    # must_include 0/2, must_not 0/1, max_words 1, expected 0, style 1 -> 2/5; judge 0
    assert wrong["deterministic"] == pytest.approx(0.4) and wrong["judge"] == 0.0
    assert wrong["score"] == pytest.approx(0.28) and wrong["success"] == 0.0
    assert log.results is not None
    by_family = next(s for s in log.results.scores if s.name == "score").metrics
    assert by_family["grouped_temporal_memory_qa"].value == 1.0
    assert by_family["grouped_multi_evidence_memory_qa"].value == pytest.approx(0.28)


@pytest.mark.parametrize(("protocol", "scoring", "success"), [
    ("paper", None, 1.0),  # the paper's count: containment and 0.7 x rules, as it reported
    ("blind", None, 0.0),  # strict by default under blind: a hedge is no success
    ("paper", "strict", 0.0),
])  # fmt: skip
def test_a_hedged_answer_gets_no_alias_credit_and_counts_as_no_success_when_strict(
    tmp_path, protocol, scoring, success
):
    # thirteen dates, the right one among them (not the must_not_include 9 March 2022)
    hedged = ", ".join(f"{d} March 2022" for d in range(1, 15) if d != 9)
    args = {"scoring": scoring} if scoring else {}
    log = run(
        no_memory(),
        lambda p: hedged if "When did Priya" in p else "Yellow.",
        tmp_path,
        protocol=protocol,
        data_file=str(SYNTHETIC),
        **args,
    )
    score = score_of(next(s for s in samples_of(log) if s.id == "syn_0000"), "task_score")
    assert score.value["hedged"] == 1.0 and score.value["judge"] == 0.0
    assert score.value["deterministic"] == 1.0  # the paper's rules, as ever: containment
    assert score.value["success"] == success
    assert "hedged across 13 dates" in score.explanation
    assert score.metadata["scoring"] == (scoring or {"paper": "paper", "blind": "strict"}[protocol])
    honest = score_of(next(s for s in samples_of(log) if s.id == "syn_0002"), "task_score")
    assert honest.value["hedged"] == 0.0
    assert log.results is not None
    assert next(s for s in log.results.scores if s.name == "hedged").metrics["mean"].value == pytest.approx(1 / 3)


NEGATED = "It was not 3 March 2022 that Priya adopted Comet."
ASIDE = "She did not adopt him in February; she adopted Comet on 3 March 2022."  # a negation elsewhere


@pytest.mark.parametrize(("protocol", "scoring", "det", "total", "success"), [
    ("paper", None, 1.0, 0.7, 1.0),  # the paper's rules stand; the alias judge credits no denial
    ("blind", None, 0.0, 0.0, 0.0),  # strict by default under blind: nothing from either part
    ("paper", "strict", 0.0, 0.0, 0.0),
])  # fmt: skip
def test_a_negated_answer_gets_no_alias_credit_and_nothing_when_strict(
    tmp_path, protocol, scoring, det, total, success
):
    answers = {"When did Priya": NEGATED, "Which two": "Cello and banjo.", "What colour": "It isn't red; it is yellow."}
    args = {"scoring": scoring} if scoring else {}
    log = run(
        no_memory(),
        lambda p: next(a for q, a in answers.items() if q in p),
        tmp_path,
        protocol=protocol,
        data_file=str(SYNTHETIC),
        **args,
    )
    scores = {s.id: score_of(s, "task_score") for s in samples_of(log)}
    negated = scores["syn_0000"]
    assert negated.value["negated"] == 1.0 and negated.value["hedged"] == 0.0
    assert negated.value["deterministic"] == det  # the paper's rules: containment
    assert negated.value["judge"] == 0.0
    assert (negated.value["score"], negated.value["success"]) == (pytest.approx(total), success)
    assert negated.metadata["negated_clauses"] == ["It was not 3 March 2022"]
    assert "negates the expected answer: 'It was not 3 March 2022'" in negated.explanation
    assert scores["syn_0001"].value["negated"] == scores["syn_0002"].value["negated"] == 0.0
    assert log.results is not None
    assert next(s for s in log.results.scores if s.name == "negated").metrics["mean"].value == pytest.approx(1 / 3)


@pytest.mark.parametrize(("answer", "scoring", "total", "success", "hedged", "negated"), [
    ("I don't know. Maybe 3 March 2022.", "paper", 0.7, True, True, False),  # the rules stand
    ("I don't know. Maybe 3 March 2022.", "strict", 0.7, False, True, False),  # not in full
    ("3 March 2022? No.", "paper", 0.7, True, False, True),
    ("3 March 2022? No.", "strict", 0.0, False, False, True),  # nothing from either part
    ("I don't doubt it was 3 March 2022.", "strict", 1.0, True, False, False),
    ("She did not hesitate and adopted him on 3 March 2022.", "strict", 1.0, True, False, False),
])  # fmt: skip
def test_an_answer_s_score_reads_its_doubt_and_its_denial(answer, scoring, total, success, hedged, negated):
    import asyncio

    from cmi_inspect.causal_locomo.data import ScoringCriteria
    from cmi_inspect.causal_locomo.scorers import answer_score

    criteria = ScoringCriteria(expected_answer="3 March 2022", answer_aliases=["March 3, 2022"])
    scored = asyncio.run(answer_score(answer, "When did Priya adopt Comet?", "", criteria, scoring))
    assert scored.verdict.score == (0.0 if hedged or negated else 1.0)  # the alias judge, either scoring
    assert (scored.total, scored.success) == (pytest.approx(total), success)
    assert (scored.hedged.hedged, scored.negated.negated) == (hedged, negated)


def test_an_answer_with_a_negation_elsewhere_is_a_strict_success(tmp_path):
    log = run(no_memory(), lambda p: ASIDE, tmp_path, protocol="blind", data_file=str(SYNTHETIC))
    score = score_of(next(s for s in samples_of(log) if s.id == "syn_0000"), "task_score")
    assert score.value["negated"] == 0.0
    assert (score.value["judge"], score.value["success"]) == (1.0, 1.0)


@pytest.mark.parametrize(("protocol", "total", "success"), [("paper", 0.7, 1.0), ("blind", 0.0, 0.0)])
def test_the_issues_negated_answer_on_the_release(tmp_path, release_file, protocol, total, success):
    first = tmp_path / "first.jsonl"  # conv-26_qa_0000: when did Caroline go to the support group?
    first.write_text(release_file.read_text(encoding="utf-8").splitlines()[0] + "\n", encoding="utf-8")
    reply = "It was not 7 May 2023 that Caroline went to the LGBTQ support group."
    [sample] = samples_of(run(no_memory(), lambda p: reply, tmp_path, protocol=protocol, data_file=str(first)))
    score = score_of(sample, "task_score")
    assert score.value["negated"] == 1.0 and score.value["judge"] == 0.0  # under either scoring
    assert (score.value["score"], score.value["success"]) == (pytest.approx(total), success)


def test_grader_role_judges_and_bad_verdicts_score_zero(tmp_path):
    verdicts = iter(
        ['{"task_success_score": 0.5, "passes": false}', "I refuse to grade.", '{"task_success_score": 1.0}']
    )
    grader_prompts: list[str] = []
    grader = mock_model(lambda p: next(verdicts), grader_prompts)
    log = run(no_memory(), lambda p: "I do not know.", tmp_path, roles={"grader": grader}, data_file=str(SYNTHETIC))
    judged = [score_of(s, "task_score") for s in samples_of(log)]
    assert len(grader_prompts) == 3
    assert sorted(s.value["judge"] for s in judged) == [0.0, 0.5, 1.0]
    failed = next(s for s in judged if s.metadata["judge_error"])
    assert failed.metadata["judge_raw"] == "I refuse to grade."
    assert "judge verdict scored 0" in failed.explanation
    assert all(s.metadata["judge"] == "mockllm/model" for s in judged)
    assert log.results is not None
    errors = next(s for s in log.results.scores if s.name == "judge_error")
    # the unreadable verdict, counted (the metric is "cmi_inspect/count" where the package is installed)
    [counted] = [m for name, m in errors.metrics.items() if name.split("/")[-1] == "count"]
    assert counted.value == 1.0


def test_headline_metric_is_the_mean_task_score(tmp_path):
    log = run(no_memory(), lambda p: "I do not know.", tmp_path, data_file=str(SYNTHETIC))
    assert log.results is not None
    first = next(s for s in log.results.scores if s.metrics)
    assert (first.name, next(iter(first.metrics))) == ("score", "mean")
    assert first.metrics["mean"].value == pytest.approx((0.42 + 0.42 + 0.35) / 3)


def test_selection_is_explained_with_ids_and_scores(tmp_path):
    log = run(vector_memory(top_k=2), tmp_path=tmp_path, protocol="blind", data_file=str(SYNTHETIC))
    score = samples_of(log)[0].scores["memory_selection"]
    rows = score.metadata["selected"]
    assert [r["rank"] for r in rows] == [1, 2]
    assert {r["memory_id"] for r in rows} <= {"gold_00", "irr_00", "irr_01", "harm_00"}
    assert rows[0]["score"] >= rows[1]["score"]
    assert "| 1 | " in score.explanation and score.answer == ", ".join(r["memory_id"] for r in rows)


def test_f1_at_k_reads_the_recorded_ranking_and_is_absent_without_one(tmp_path):
    from cmi_inspect.causal_locomo.measures import f1_at_k
    from cmi_inspect.causal_locomo.selection import MemorySelection
    from cmi_inspect.causal_locomo.view import key_to_memory_id

    log = run(vector_memory(top_k=1, embedder="hashing"), tmp_path=tmp_path, data_file=str(SYNTHETIC))
    for sample in samples_of(log):
        value = value_of(sample, "memory_selection")
        record = sample.store_as(MemorySelection)
        meta = scored_record(sample)
        ids = key_to_memory_id(meta.example_id, meta.memory_bank, meta.protocol)
        # the whole bank ranked (fewer than RANKING_DEPTH memories), the pick its first
        assert record.ranking is not None and sorted(record.ranking) == sorted(ids)
        assert record.ranking[0] == record.selected[0]
        expected = f1_at_k([ids[k] for k in record.ranking], meta.gold_memory_ids)
        assert {k: value[k] for k in ("f1_at_1", "f1_at_3")} == expected
        assert value["f1_at_1"] == value["useful_f1"]  # top_k=1: the ranking's top 1 is the pick
    assert log.results is not None and "f1_at_1" not in {s.name for s in log.results.scores}
    unranked = run(no_memory(), tmp_path=tmp_path, data_file=str(SYNTHETIC))
    assert all("f1_at_1" not in value_of(s, "memory_selection") for s in samples_of(unranked))


def test_cmi_diagnostics_reach_the_log(tmp_path):
    def respond(prompt: str) -> str:
        return "3 March 2022" if "Comet on 3 March 2022" in prompt and "not true" not in prompt else "?"

    log = run(cmi(k=4), respond, tmp_path, data_file=str(SYNTHETIC))
    sample = samples_of(log)[0]
    score = score_of(sample, "memory_selection")
    assert score.answer == "gold_00"
    assert "| s_with | s_pert | utility | stability | decision |" in score.explanation
    candidates = sample.store["MemorySelection:details"]["candidates"]
    assert {c["key"] for c in candidates} == {"gold_00", "irr_00", "irr_01", "harm_00"}
    assert sample.output.completion == "3 March 2022"
    assert "details" not in score.metadata  # logged once, in the store


def test_scores_are_pure_functions_of_the_samples_record_and_target(tmp_path):
    """The log alone re-scores to the same figures (``inspect score``), the data file gone."""
    from inspect_ai import score as rescore

    data = tmp_path / "data.jsonl"
    data.write_bytes(SYNTHETIC.read_bytes())
    log = run(no_memory(), lambda p: "3 March 2022", tmp_path / "logs", protocol="blind", data_file=str(data))
    first = samples_of(log)[0]
    assert first.target == ["3 March 2022", "March 3, 2022", "2022-03-03"]  # View's TARGET column
    assert scored_record(first) == CausalLocomoMetadata.model_validate(first.metadata)
    assert scored_record(first).protocol == "blind" and not first.store.get("ScoredExample:record")
    head = score_of(first, "task_score")
    assert head.value["score"] == 1.0 and "expected '3 March 2022'" in head.explanation
    data.unlink()
    again = rescore(log, [task_score("strict"), memory_selection()], action="overwrite", display="none")
    assert [s.scores for s in samples_of(again)] == [s.scores for s in samples_of(log)]


@pytest.mark.slow  # inspect score in subprocesses
@pytest.mark.parametrize("data", ["release", "xl"])
def test_inspect_score_rescores_a_log_to_the_same_figures_in_a_clean_environment(tmp_path, mini_build, data):
    """``inspect score`` as docs/cli.md types it, where neither the data file nor any data
    cache or ``CMI_DATA_DIR`` is: the same scores, sample by sample."""
    import os
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    from cmi_inspect.causal_locomo.xl import STORE_FILE
    from inspect_ai.log import read_eval_log

    source = SYNTHETIC if data == "release" else mini_build[0] / STORE_FILE
    copy = tmp_path / source.name
    shutil.copyfile(source, copy)
    drawn = {} if data == "release" else {"bank_size": 8}
    log = run(vector_memory(embedder="hashing"), lambda p: "3 March 2022", tmp_path / "logs",
              protocol="blind", data_file=str(copy), **drawn)  # fmt: skip
    copy.unlink()
    inspect = str(Path(sys.executable).parent / "inspect")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CMI_", "INSPECT_"))}
    env |= {"XDG_DATA_HOME": str(tmp_path / "empty"), "XDG_CACHE_HOME": str(tmp_path / "empty")}
    for name, args in (
        ("task_score", ["-S", "scoring=strict", "--action", "overwrite"]),
        ("memory_selection", ["--action", "append"]),
    ):
        subprocess.run([inspect, "score", log.location, "--scorer", f"cmi_inspect/{name}", *args, "--overwrite"],
                       cwd=tmp_path, env=env, check=True, capture_output=True)  # fmt: skip
    again = read_eval_log(log.location)
    assert [s.scores for s in samples_of(again)] == [s.scores for s in samples_of(log)]
    assert again.results and log.results
    headline = [{k: m.value for k, m in r.results.scores[0].metrics.items()} for r in (again, log)]  # type: ignore[union-attr]
    assert headline[0] == pytest.approx(headline[1])  # the same figures, up to the order of a sum


def test_a_stored_file_is_scored_on_the_bank_the_run_drew(tmp_path, mini_build):
    from cmi_inspect.causal_locomo.xl import STORE_FILE

    path = str(mini_build[0] / STORE_FILE)
    log = run(vector_memory(embedder="hashing"), tmp_path=tmp_path, data_file=path, protocol="blind",
              bank_size=8, task_families="unanswerable_memory_qa,factual_memory_qa")  # fmt: skip
    scored = samples_of(log)
    assert {(s.metadata or {})["task_family"] for s in scored} == {"unanswerable_memory_qa", "factual_memory_qa"}
    for sample in scored:
        record = scored_record(sample)
        assert len(record.memory_bank) >= 8  # the drawn bank, as the scorers recorded it
        selection = value_of(sample, "memory_selection")
        assert selection["n_selected"] == 3.0
        if record.task_family == "unanswerable_memory_qa":
            assert selection["precision"] == 0.0 and selection["recall"] == 1.0
            # "I do not know." abstains: credited by the abstains rule
            assert value_of(sample, "task_score")["deterministic"] == 1.0
        drawn = score_of(sample, "memory_selection").metadata["bank"]
        assert drawn == {"bank_size": 8, "useful_lost": record.useful_lost, "harmful_lost": record.harmful_lost}


def test_count_reads_scores_as_the_epoch_reducer_leaves_them(tmp_path):
    """count() (judge errors, undeclared picks) counts the samples whose reduced value is not
    zero: an error in one epoch of two is one sample, a sample with none is not counted."""
    replay = {"a": [1.0, 0.0], "b": [0.0, 0.0], "c": [1.0, 1.0]}

    @scorer(metrics=[count()])
    def replayed() -> Scorer:
        async def score(state: TaskState, target: Target) -> Score:
            return Score(value=replay[str(state.sample_id)][state.epoch - 1])

        return score

    task = Task(dataset=[Sample(id=k, input="-") for k in replay], scorer=replayed(), epochs=2)
    [log] = inspect_eval(task, model=mock_model(lambda p: "-"), display="none", log_dir=str(tmp_path))
    assert log.status == "success" and log.results is not None, log.error
    [counted] = [m for name, m in log.results.scores[0].metrics.items() if name.split("/")[-1] == "count"]
    assert counted.value == 2.0
