"""Evidence from the agent's own history, and its support of answers and memories."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from cmi_inspect.causal_locomo.data_files import load_records
from cmi_inspect.causal_locomo.strategies.cmi.evidence import BlindEvidence, windows_of

from conftest import LABEL_FREE, REPO, memory_task_for


@pytest.fixture(scope="module")
def records():
    return {r.example_id: r for r in load_records(Path(LABEL_FREE))}


def evidence_for(record) -> BlindEvidence:
    return BlindEvidence.from_task(memory_task_for(record, "blind"))


def test_windows_drop_the_speaker_and_keep_the_session_date(records):
    windows = windows_of(records["lf_0000"].past_sessions)
    [first] = [w for w in windows if w.turns[0].dia_id == "D2:1"]
    assert first.turns[0].speaker == "Ines" and first.turns[0].text.startswith("Guess what")
    assert (first.when, first.day) == ("4:20 pm on 14 October, 2021", date(2021, 10, 14))
    assert first.ref() == "D2:1-3 (4:20 pm on 14 October, 2021)"
    assert all(len(w.turns) <= 3 for w in windows)


def test_the_history_exposes_a_shifted_date(records):
    evidence = evidence_for(records["lf_0000"])
    assert evidence.windows[0].turns[0].dia_id == "D2:1"  # "I ran my first half marathon yesterday"
    right = evidence.support("She ran it on 13 October 2021.")
    wrong = evidence.support("She ran it on 14 October 2021.")
    assert right.dates == 1.0 and wrong.dates == 0.0
    assert right.score > wrong.score
    assert "14 October 2021" in wrong.missing


def test_the_history_exposes_a_swapped_value_and_a_denial(records):
    hike = evidence_for(records["lf_0001"])
    assert hike.support("With his sister Ola.").score > hike.support("With his neighbour Marek.").score
    kayak = evidence_for(records["lf_0002"])
    assert (
        kayak.support("She loves paddling on the river.").score
        > kayak.support("She regrets buying it and avoids the river.").score
    )


def test_an_answer_that_says_nothing_new_scores_zero(records):
    evidence = evidence_for(records["lf_0001"])
    assert evidence.support("I do not know.").score == 0.0
    assert evidence.support("Tomasz hiked up the Rysy peak.").score == 0.0  # only the request's words


def test_evidence_reads_only_the_request_and_the_sessions(records):
    record = records["lf_0000"]
    task = memory_task_for(record, "blind")
    bare = BlindEvidence(task.request, task.sessions)
    assert [w.ref for w in BlindEvidence.from_task(task).log()] == [w.ref for w in bare.log()]
    assert all(w.dates for w in bare.log())


@pytest.mark.slow  # the whole release scored in subprocesses
@pytest.mark.heavy  # minutes on two cores: -m 'not heavy' leaves it out
def test_support_is_the_same_bit_for_bit_whatever_the_hash_seed(release_file):
    import subprocess
    import sys

    script = (
        "import json\n"
        "from cmi_inspect.causal_locomo.data_files import load_records\n"
        "from cmi_inspect.causal_locomo.strategies.cmi.evidence import BlindEvidence\n"
        f"records = load_records({str(release_file)!r})[:30]\n"
        "out = []\n"
        "for r in records:\n"
        "    ev = BlindEvidence(r.current_task.instruction, r.past_sessions)\n"
        "    out.append([w.relevance for w in ev.windows] + [ev.support(m.content).score for m in r.memory_bank])\n"
        "print(json.dumps(out))\n"
    )
    runs = {
        subprocess.run(
            [sys.executable, "-c", script],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=True,
            env={**__import__("os").environ, "PYTHONHASHSEED": seed},
        ).stdout
        for seed in ("1", "2", "3")
    }
    assert len(runs) == 1 and runs.pop().startswith("[[")


def test_words_about_the_notes_and_vague_dates_earn_nothing(records):
    evidence = evidence_for(records["lf_0000"])
    plain = evidence.support("On 13 October 2021.")
    cited = evidence.support("According to m3, as mentioned, on 13 October 2021.")
    assert plain.score == cited.score == 1.0 and cited.missing == []
    assert evidence.support("Yesterday.").score == 0.0  # said today, it could be any day
    assert evidence.support("Last week.").score == 0.0


def test_a_candidates_own_turns_join_the_evidence_when_they_are_about_the_request(records):
    record = records["lf_0000"]
    task = memory_task_for(record, "blind")
    bare = BlindEvidence(task.request, task.sessions)
    texts = [m.content for m in task.memories]
    joined = BlindEvidence(task.request, task.sessions, memories=texts, memory_relevance=0.0)
    strict = BlindEvidence(task.request, task.sessions, memories=texts, memory_relevance=1.01)
    refs = [w.ref() for w in bare.windows]
    assert [w.ref() for w in joined.windows][: len(refs)] == refs and len(joined.windows) > len(refs)
    assert [w.ref() for w in strict.windows] == refs  # no memory window is as relevant as the best
    best = bare.windows[0].relevance
    assert all(w.relevance <= best for w in joined.windows)  # weighted by the request's relevance
