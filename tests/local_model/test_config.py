"""The engine's one configuration type, and the one place that reads the ``-M`` arguments."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
from cmi_inspect.errors import UserError
from cmi_inspect.local_model import batch_probe, resolve_gguf
from cmi_inspect.local_model import probe as probe_module
from cmi_inspect.local_model.batch_probe import AUTO_PARALLEL
from cmi_inspect.local_model.batch_probe import VERDICT_ENV as BATCH_VERDICT_ENV
from cmi_inspect.local_model.config import DEFAULT_N_CTX, DEFAULT_PREFIX_CACHE_MB, EngineConfig
from cmi_inspect.local_model.sequences import BATCH_INVARIANT_KV


def test_the_defaults_are_the_providers(monkeypatch):
    monkeypatch.setenv(BATCH_VERDICT_ENV, "short")  # what parallel=auto makes of it: test_batch_probe
    config = EngineConfig.from_model_args("smollm2", extra_bufts="off")
    assert config == EngineConfig(
        path=resolve_gguf("smollm2"), extra_bufts=False, parallel=AUTO_PARALLEL, batch_kv=BATCH_INVARIANT_KV
    )
    assert (config.n_ctx, config.n_threads, config.prefix_cache_mb) == (DEFAULT_N_CTX, None, DEFAULT_PREFIX_CACHE_MB)
    assert (DEFAULT_N_CTX, DEFAULT_PREFIX_CACHE_MB) == (4096, 2048)
    assert config.chosen_by == "-M extra_bufts=off" and config.exact_batches
    assert config.batching_by.startswith(f"{BATCH_VERDICT_ENV}: {AUTO_PARALLEL} slots")


def test_text_values_are_read_as_the_command_line_gives_them():
    config = EngineConfig.from_model_args(
        "smollm2", n_ctx="2048", n_threads="2", prefix_cache_mb="0", extra_bufts=True, parallel="3"
    )
    assert (config.n_ctx, config.n_threads, config.prefix_cache_mb, config.parallel) == (2048, 2, 0, 3)
    assert config.extra_bufts is True and config.chosen_by == "-M extra_bufts=on"
    assert (config.batch_kv, config.exact_batches) == (None, False)  # forced: every row batched


@pytest.mark.parametrize(
    ("args", "says"),
    [
        ({"n_ctx": "abc"}, "n_ctx must be an integer of at least 1, got 'abc'."),
        ({"n_ctx": 0}, "n_ctx must be an integer of at least 1, got 0."),
        ({"n_threads": "zero"}, "n_threads must be an integer of at least 1, got 'zero'."),
        ({"prefix_cache_mb": -1}, "prefix_cache_mb must be an integer of at least 0, got -1."),
        ({"parallel": "four"}, "parallel must be auto or an integer of at least 1, got 'four'."),
        ({"extra_bufts": "maybe"}, "extra_bufts must be one of auto, on, off, got 'maybe'."),
        ({"n_gpu_layers": 9}, "Unknown arguments for the gguf provider: ['n_gpu_layers']"),
    ],
)
def test_a_bad_argument_is_one_line_naming_it_before_any_probe(monkeypatch, args, says):
    monkeypatch.setattr(probe_module, "run_probe", lambda *a: pytest.fail("probed"))
    monkeypatch.setattr(batch_probe, "probed", lambda *a: pytest.fail("probed"))
    with pytest.raises(UserError, match=f"^{re.escape(says)}$"):
        EngineConfig.from_model_args("smollm2", **args)


def test_what_chose_the_buffers_and_the_batching_takes_no_part_in_which_engine_runs():
    probed = EngineConfig(path=Path("m.gguf"), extra_bufts=True, chosen_by="probe: usable")
    cached = EngineConfig(path=Path("m.gguf"), extra_bufts=True, chosen_by="cached probe: usable")
    assert probed == cached and hash(probed) == hash(cached)  # engine_for: one engine
    assert probed != dataclasses.replace(probed, n_ctx=8192)
    assert probed != dataclasses.replace(probed, extra_bufts=False)
    forced = dataclasses.replace(probed, parallel=4, batching_by="-M parallel=4", exact_batches=False)
    found = dataclasses.replace(forced, batching_by="batch probe: every row", exact_batches=True)
    assert forced == found  # the same computation, whether or not the probe vouched for it
    assert found != dataclasses.replace(found, batch_kv=256)
    with pytest.raises(dataclasses.FrozenInstanceError):
        probed.n_ctx = 1  # type: ignore[misc]
