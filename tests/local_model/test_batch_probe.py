"""The batch probe: its verdicts, their cache, forced choices and what ``parallel`` follows
from each (the real model's check, that auto's completions are one slot's, is the slow test
of test_provider)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np
import pytest
from cmi_inspect.errors import UserError
from cmi_inspect.local_model import batch_probe, resolve_gguf
from cmi_inspect.local_model.batch_probe import (
    AUTO_PARALLEL,
    PROBE_LENGTHS,
    VERDICT_ENV,
    Batching,
    BatchVerdict,
    choose_batching,
    parse_parallel,
    verdict_path,
)
from cmi_inspect.local_model.sequences import BATCH_INVARIANT_KV


@pytest.fixture
def model(monkeypatch, tmp_path) -> Path:
    monkeypatch.setenv("CMI_CACHE_DIR", str(tmp_path))
    return resolve_gguf("smollm2")


@pytest.fixture
def no_probe(monkeypatch):
    """Fails the test if the probe would load a model."""
    monkeypatch.setattr(batch_probe, "LlamaCpp", lambda *a: pytest.fail("probed"))


class Probed:
    """Stands in for the model and its measurement: a verdict, and how often it was asked."""

    def __init__(self, verdict: BatchVerdict) -> None:
        self.verdict, self.loads = verdict, 0

    def load(self, *args: object) -> Probed:
        self.loads += 1
        return self

    def close(self) -> None:
        pass


@pytest.fixture
def stand_in(monkeypatch) -> Probed:
    probed = Probed(BatchVerdict("short", "rows up to 256 tokens as alone", 1.5))
    monkeypatch.setattr(batch_probe, "LlamaCpp", probed.load)
    monkeypatch.setattr(batch_probe, "measure", lambda llm: llm.verdict)
    return probed


@pytest.mark.parametrize(("value", "parsed"), [("auto", "auto"), (" AUTO ", "auto"), (4, 4), ("2", 2), (1, 1)])
def test_parallel_is_auto_or_a_number_of_slots(value, parsed):
    assert parse_parallel(value) == parsed


@pytest.mark.parametrize("value", ["four", 0, "-1", True, ""])
def test_a_bad_parallel_is_one_line_naming_the_choices(value):
    with pytest.raises(UserError, match=r"^parallel must be auto or an integer of at least 1, got .*\.$"):
        parse_parallel(value)


def test_a_forced_number_of_slots_runs_no_probe(model, no_probe):
    assert choose_batching(4, model, True, None) == Batching(
        4, None, False, "-M parallel=4: every row batched, not probed"
    )
    assert choose_batching("1", model, True, None) == Batching(1, None, True, "-M parallel=1")
    assert not verdict_path(model, True, 2).parent.exists()


def test_what_each_verdict_makes_of_auto(model, no_probe, batch_verdict):
    batching = choose_batching("auto", model, False, 2)
    assert (batching.parallel, batching.batch_kv, batching.exact) == {
        "all": (AUTO_PARALLEL, None, True),
        "short": (AUTO_PARALLEL, BATCH_INVARIANT_KV, True),
        "none": (1, None, True),
    }[batch_verdict]
    assert batching.chosen_by.startswith(f"{VERDICT_ENV}: ") and batching.chosen_by.endswith("(forced)")
    assert choose_batching(3, model, False, 2).parallel == 3  # -M parallel=N still rules


def test_a_bad_forced_verdict_is_one_line(model, monkeypatch):
    monkeypatch.setenv(VERDICT_ENV, "some")
    with pytest.raises(UserError, match=f"^{VERDICT_ENV} must be one of all, short, none, got 'some'.$"):
        choose_batching("auto", model, True, None)


def test_the_verdict_is_probed_once_and_kept_for_this_engine(model, stand_in):
    first = choose_batching("auto", model, True, 2)
    assert first == Batching(
        AUTO_PARALLEL,
        BATCH_INVARIANT_KV,
        True,
        f"batch probe: {AUTO_PARALLEL} slots, rows up to {BATCH_INVARIANT_KV} tokens batched "
        "(rows up to 256 tokens as alone)",
    )
    again = choose_batching("auto", model, True, 2)
    assert again.chosen_by.startswith("cached batch probe: ") and stand_in.loads == 1
    choose_batching("auto", model, True, 1)  # another thread count splits attention otherwise
    choose_batching("auto", model, False, 2)  # other buffers, other kernels
    assert stand_in.loads == 3
    assert len({verdict_path(model, *key) for key in [(True, 2), (True, 1), (False, 2)]}) == 3


@pytest.mark.parametrize(
    "text",
    [
        json.dumps({"rows": "some", "reason": "r", "seconds": 1.0}),
        json.dumps({"rows": "all", "reason": None, "seconds": 1.0}),
        json.dumps({"rows": "all", "reason": "r", "seconds": True}),
        json.dumps({"rows": "all", "reason": "r", "seconds": -1}),
        json.dumps({"rows": "all", "reason": "r"}),
        json.dumps({"rows": "all", "reason": "r", "seconds": 1.0, "extra": 1}),
        '{"rows": "all", "reason": "r", "seconds": NaN}',
        '{"rows": "all"',
        "",
    ],
)
def test_a_cached_file_that_is_not_exactly_a_verdict_is_probed_again(model, stand_in, text):
    path = verdict_path(model, True, 2)
    path.parent.mkdir(parents=True)
    path.write_text(text)
    assert choose_batching("auto", model, True, 2).chosen_by.startswith("batch probe: ")
    assert BatchVerdict.from_json(path.read_text()) == stand_in.verdict


def test_a_well_formed_verdict_is_read_back(model, no_probe):
    path = verdict_path(model, True, 2)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"rows": "none", "reason": "short rows differ by up to 0.1", "seconds": 3}))
    assert choose_batching("auto", model, True, 2) == Batching(
        1, None, True, "cached batch probe: one slot (short rows differ by up to 0.1)"
    )


def test_a_probe_that_fails_runs_one_slot_this_time_only_with_one_warning(model, monkeypatch, caplog):
    def broken(*args: object) -> None:
        raise ValueError("Failed to load model from file")

    monkeypatch.setattr(batch_probe, "LlamaCpp", broken)
    with caplog.at_level(logging.WARNING):
        batching = choose_batching("auto", model, True, 2)
    assert (batching.parallel, batching.exact) == (1, True)
    assert batching.chosen_by == "batch probe failed (Failed to load model from file): one slot"
    [warning] = caplog.records
    assert "one at a time" in warning.getMessage() and "\n" not in warning.getMessage()
    assert not verdict_path(model, True, 2).exists()


def test_a_cache_that_cannot_be_written_leaves_the_verdict_uncached_with_one_warning(
    monkeypatch, tmp_path, stand_in, caplog
):
    cache = tmp_path / "a-file"
    cache.write_text("not a folder")
    monkeypatch.setenv("CMI_CACHE_DIR", str(cache))
    with caplog.at_level(logging.WARNING):
        assert choose_batching("auto", resolve_gguf("smollm2"), True, 2).parallel == AUTO_PARALLEL
    [warning] = caplog.records
    assert "verdict is not cached" in warning.getMessage()
    assert cache.read_text() == "not a folder"


def logits(*values: float) -> list[list[np.ndarray]]:
    return [[np.array([v, 1.0], dtype=np.float32)] for v in values]


@pytest.mark.parametrize(
    ("every", "short", "rows"),
    [
        (logits(0, 0, 0, 0), logits(0, 0, 0, 0), "all"),
        (logits(0, 0, 0.5, 0), logits(0, 0, 0, 0), "short"),
        (logits(0, 0, 0.5, 0), logits(0, 1e-7, 0, 0), "none"),
    ],
)
def test_the_verdict_is_the_widest_rule_whose_rows_all_agree_bit_for_bit(monkeypatch, every, short, rows):
    class Slots:
        def __init__(self, *args: object) -> None:
            pass

        def prompt(self, seq: int, tokens: list[int], start: int) -> int:
            return 0

        def save_state(self, seq: int) -> bytes:
            return b""

        def load_state(self, seq: int, state: bytes) -> None:
            pass

        def close(self) -> None:
            pass

    monkeypatch.setattr(batch_probe, "Sequences", Slots)
    monkeypatch.setattr(batch_probe, "probe_prompts", lambda llm: [[1]] * len(PROBE_LENGTHS))
    monkeypatch.setattr(batch_probe, "alone", lambda llm, prompt, steps: logits(0)[0])
    ran = {None: every, BATCH_INVARIANT_KV: short}
    monkeypatch.setattr(batch_probe, "together", lambda seqs, prompts, firsts, steps, kv: ran[kv])
    verdict = batch_probe.measure(object())  # type: ignore[arg-type]
    assert verdict.rows == rows
    if rows == "short":
        assert verdict.reason.endswith("longer ones differ by up to 0.5")
