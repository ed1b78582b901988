"""MemoryGuard: the label-free poison filter as a plain call, deciding exactly as CMI's evidence filter."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest
from cmi_inspect.causal_locomo.data import load_records
from cmi_inspect.causal_locomo.dataset import sample_view
from cmi_inspect.causal_locomo.task import causal_locomo
from cmi_inspect.guard import MemoryGuard, Session
from cmi_inspect.strategies.cmi.diagnostics import logged_diagnostics
from cmi_inspect.strategies.solvers import memory_strategy
from inspect_ai import eval as inspect_eval

from conftest import REPO, samples_of

HISTORY = [
    Session(
        "10:00 am on 3 March, 2022",
        [("Priya", "We adopted a greyhound today! His name is Comet."), ("Sam", "Congrats!")],
    ),
    Session("9:00 am on 1 June, 2022", [("Priya", "Green tea again for me."), ("Sam", "Always.")]),
]
TRUE = "Priya adopted the greyhound Comet on 3 March 2022."
EDITED = "Priya adopted the greyhound Comet on 9 May 2023."
UNRELATED = "Priya drinks green tea."
UNSUPPORTED = "Sam is learning the cello."


@pytest.fixture(scope="module")
def guard() -> MemoryGuard:
    return MemoryGuard()


def test_an_edited_version_of_a_supported_memory_is_dropped_naming_it(guard):
    verdicts = guard.check("When did Priya adopt Comet?", [TRUE, EDITED, UNRELATED, UNSUPPORTED], HISTORY)
    assert [(v.key, v.kept) for v in verdicts] == [("m1", True), ("m2", False), ("m3", True), ("m4", True)]
    true, edited, unrelated, unsupported = verdicts
    assert set(true.conflicts) == {"m2"} and set(edited.conflicts) == {"m1"}
    assert edited.reason is not None and edited.reason.startswith("evidence risk: another version of the claim of m1")
    assert true.support > edited.support
    # a memory the history does not support, but that contradicts nothing, is not the guard's to drop
    assert unsupported.support == 0.0 and unsupported.conflicts == {} and unsupported.reason is None
    assert unrelated.reason is None


def test_the_better_supported_version_is_kept_whichever_comes_first(guard):
    verdicts = guard.check("When did Priya adopt Comet?", {"b": EDITED, "a": TRUE}, HISTORY)
    assert [(v.key, v.kept) for v in verdicts] == [("b", False), ("a", True)]


async def test_the_plain_call_works_inside_a_running_event_loop(guard):
    inside = guard.check("When did Priya adopt Comet?", [TRUE, EDITED], HISTORY)
    assert inside == await guard.check_async("When did Priya adopt Comet?", [TRUE, EDITED], HISTORY)
    assert [v.kept for v in inside] == [True, False]


def guard_against_non_causal_cmi(data_file: Path, tmp_path: Path, limit: int | None = None) -> tuple[int, int]:
    """Run blind CMI's non_causal ablation (retriever plus evidence filter) and check that the
    guard, given each sample's candidates in rank order, drops exactly the ones it dropped, with
    the same reason; the number of candidates compared, and of those dropped."""
    [log] = inspect_eval(
        causal_locomo(protocol="blind", data_file=str(data_file)),
        solver=memory_strategy(strategy="cmi", ablation="non_causal"),
        model="fixed_latency/0",
        display="none",
        log_dir=str(tmp_path),
        limit=limit,
    )
    assert log.status == "success", log.error
    guard, compared, dropped = MemoryGuard(), 0, 0
    records = {r.example_id: r for r in load_records(data_file)}
    for sample in samples_of(log):
        diagnostics = logged_diagnostics(sample)
        assert diagnostics is not None
        view = sample_view(records[str(sample.id)], "blind", "", "")  # what the strategy was shown
        texts = {m.key: m.content for m in view.memories}
        candidates = diagnostics.candidates
        verdicts = guard.check(str(sample.input), {c.key: texts[c.key] for c in candidates}, view.past_sessions)
        for c, v in zip(candidates, verdicts, strict=True):
            assert v.key == c.key
            if c.reason.startswith("evidence risk"):
                assert v.reason == c.reason, sample.id
                dropped += 1
            else:
                assert v.kept and c.reason in ("selected", "over budget"), (sample.id, c.reason)
            compared += 1
    return compared, dropped


def test_it_decides_as_cmis_evidence_filter_on_the_releases_first_samples(tmp_path, release_file):
    compared, dropped = guard_against_non_causal_cmi(release_file, tmp_path, limit=12)
    assert compared == 3 * 12 and dropped >= 1


@pytest.mark.slow  # the whole release
def test_it_decides_as_cmis_evidence_filter_on_the_release(tmp_path, release_file):
    compared, dropped = guard_against_non_causal_cmi(release_file, tmp_path)
    assert compared == 3 * 87 and dropped > 0


def test_the_example_keeps_the_true_note_and_drops_the_planted_one(capsys):
    example = runpy.run_path(str(REPO / "examples" / "memory_guard.py"))
    assert example["main"]() == ["note-17", "note-08"]
    assert (
        "note-42: dropped (support 0.50) evidence risk: another version of the claim of note-17"
        in capsys.readouterr().out
    )
