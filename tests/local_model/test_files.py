"""Model names to GGUF files, and the identity that keys Inspect's model-call cache."""

from __future__ import annotations

import os

import pytest
from cmi_inspect.local_model import gguf_identity, resolve_gguf
from inspect_ai.model import get_model


def test_model_resolution(tmp_path):
    assert resolve_gguf("smollm2").name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert resolve_gguf(str(resolve_gguf("smollm2"))).is_file()
    with pytest.raises(ValueError, match="Unknown local model 'gpt2'"):
        resolve_gguf("gpt2")
    with pytest.raises(ValueError, match="Unknown local model"):
        resolve_gguf(str(tmp_path / "missing.gguf"))
    with pytest.raises(ValueError, match="Unknown arguments for the gguf provider"):
        get_model("gguf/smollm2", temperature_boost=1, memoize=False)


def test_cache_identity_follows_the_file_not_its_name(tmp_path, probe_verdict):
    bundled = resolve_gguf("smollm2")
    assert gguf_identity(bundled) == gguf_identity(bundled)
    # a run without the extra buffers computes differently: it has a cache key of its own
    expected = gguf_identity(bundled) + ("" if probe_verdict else ":no-extra-bufts")
    threads = f":threads-{os.cpu_count()}"
    assert get_model("gguf/smollm2", memoize=False, parallel=1).api.base_url == expected + threads
    copy = tmp_path / "SmolLM2-135M-Instruct.Q4_1.gguf"
    copy.write_bytes(bundled.read_bytes()[:-1] + b"\0")  # same name and size, other content
    assert gguf_identity(copy) != gguf_identity(bundled)


def test_batches_found_exact_share_one_slots_cache_key_and_forced_ones_do_not(batch_verdict):
    one = get_model("gguf/smollm2", memoize=False, extra_bufts="off", parallel=1).api.base_url
    assert one is not None and one.endswith(f":no-extra-bufts:threads-{os.cpu_count()}")
    assert get_model("gguf/smollm2", memoize=False, extra_bufts="off").api.base_url == one  # auto
    forced = get_model("gguf/smollm2", memoize=False, extra_bufts="off", parallel=4)  # every row
    assert forced.api.base_url == one.replace(":threads", ":batched-4:threads")


def test_another_thread_count_has_a_cache_key_of_its_own():
    # a long prompt's answer depends on the thread count (flash attention splits by thread)
    one = get_model("gguf/smollm2", memoize=False, parallel=1, n_threads=1).api.base_url
    two = get_model("gguf/smollm2", memoize=False, parallel=1, n_threads=2).api.base_url
    assert one is not None and one.endswith(":threads-1") and two is not None and two.endswith(":threads-2")
