"""The embedded llama.cpp provider, on the real default model (SmolLM2-135M)."""

from __future__ import annotations

import asyncio
import ctypes
import threading

import pytest
from cmi_inspect.local_model import (
    LARGE_BATCH,
    GGUFModel,
    PromptTooLongError,
    _SavedStates,
    gguf_identity,
    large_prefix,
    resolve_gguf,
    reusable_prefix,
    reuse_totals,
)
from inspect_ai.model import GenerateConfig, Model, get_model

PROMPT = "What is the capital of France? Answer in one word."


def history(days: int) -> str:
    return " ".join(f"On day {i} the user said their favourite number was {i * 7}." for i in range(days))


@pytest.mark.slow  # generates with the real model
async def test_generates_with_usage_and_is_deterministic():
    model = get_model("gguf/smollm2", memoize=False)
    first = await model.generate(PROMPT, config=GenerateConfig(max_tokens=16))
    second = await model.generate(PROMPT, config=GenerateConfig(max_tokens=16))
    assert first.completion.strip() and first.completion == second.completion
    assert first.usage is not None
    assert first.usage.input_tokens > 5 and 0 < first.usage.output_tokens <= 16
    assert first.usage.total_tokens == first.usage.input_tokens + first.usage.output_tokens


@pytest.mark.slow  # generates with the real model
async def test_concurrent_calls_share_one_instance_and_thread_and_match_sequential(monkeypatch):
    model = get_model("gguf/smollm2", memoize=False)
    other = get_model("gguf/smollm2", memoize=False)
    assert isinstance(model.api, GGUFModel) and isinstance(other.api, GGUFModel)
    engine = model.api.engine
    assert engine is other.api.engine
    threads: set[int] = set()  # every llama.cpp call runs on one thread (see _Engine)
    complete = engine.llm.create_chat_completion

    def spy(**kwargs):
        threads.add(threading.get_ident())
        return complete(**kwargs)

    monkeypatch.setattr(engine.llm, "create_chat_completion", spy)
    prompts = [f"Name a colour that starts with the letter {c}." for c in "bgrp"]
    config = GenerateConfig(max_tokens=12)  # cache=False: an earlier eval may leave a cache policy active
    sequential = [(await model.generate(p, config=config, cache=False)).completion for p in prompts]
    concurrent = await asyncio.gather(*(other.generate(p, config=config, cache=False) for p in prompts))
    assert [o.completion for o in concurrent] == sequential
    assert len(threads) == 1 and threading.get_ident() not in threads


@pytest.mark.slow  # generates with the real model
async def test_prompt_over_the_window_is_a_clear_error():
    model = get_model("gguf/smollm2", n_ctx=256, memoize=False)
    with pytest.raises(PromptTooLongError, match=r"exceeds the 256-token context window"):
        await model.generate("word " * 400, config=GenerateConfig(max_tokens=8))


@pytest.mark.slow  # generates with the real model
async def test_small_window_is_checked_against_the_window_asked_for():
    # llama.cpp runs a 64-token window as 256 tokens, but its token buffers hold only 64
    model = get_model("gguf/smollm2", n_ctx=64, memoize=False)
    output = await model.generate("Hi", config=GenerateConfig(max_tokens=8))
    assert output.usage is not None and output.usage.total_tokens <= 64
    with pytest.raises(PromptTooLongError, match=r"exceeds the 64-token context window"):
        await model.generate("word " * 60, config=GenerateConfig(max_tokens=8))


@pytest.mark.slow  # generates with the real model
async def test_window_too_small_for_any_prompt_is_a_clear_error():
    model = get_model("gguf/smollm2", n_ctx=16, memoize=False)
    with pytest.raises(ValueError, match=r"n_ctx=16 is too small for SmolLM2"):
        await model.generate("Hi", config=GenerateConfig(max_tokens=4))


def stats(model: Model) -> tuple[int, int]:
    """Prompt tokens asked for and evaluated so far by the model's engine."""
    assert isinstance(model.api, GGUFModel)
    return model.api.engine.stats.prompt_tokens, model.api.engine.stats.evaluated_tokens


@pytest.mark.slow  # generates with the real model
@pytest.mark.parametrize(
    ("days", "reused"),
    [
        (60, lambda n: 1024),  # 1,036 tokens: a fresh run ends in a batch of 12, so whole blocks only
        (50, lambda n: n - LARGE_BATCH),  # 866 tokens: all but one large batch comes back
    ],
)
async def test_shared_prefix_is_reused_with_the_same_completions(days, reused):
    reuse = get_model("gguf/smollm2", n_ctx=2048, memoize=False)
    fresh = get_model("gguf/smollm2", n_ctx=2048, prefix_cache_mb=0, memoize=False)
    config = GenerateConfig(max_tokens=12)  # cache=False: an earlier eval may leave a cache policy active
    first, second = (f"{history(days)}\n\nWhat was the favourite number on day {d}?" for d in (3, 41))
    await reuse.generate(first, config=config, cache=False)
    await reuse.generate(PROMPT, config=config, cache=False)  # another prompt in between
    asked, evaluated = stats(reuse)
    answer = await reuse.generate(second, config=config, cache=False)
    asked, evaluated = stats(reuse)[0] - asked, stats(reuse)[1] - evaluated
    assert asked - evaluated == reused(asked)
    assert answer.usage is not None and answer.usage.input_tokens == asked
    before, totals = stats(fresh), reuse_totals()
    expected = await fresh.generate(second, config=config, cache=False)
    assert stats(fresh)[1] - before[1] == stats(fresh)[0] - before[0] == asked
    assert answer.completion == expected.completion
    after = reuse_totals()  # every engine of the process, as benchmarks/run_speed.py reads them
    assert (after.prompt_tokens - totals.prompt_tokens, after.evaluated_tokens - totals.evaluated_tokens) == (
        asked, asked)


def batch_kinds(n_prompt: int, start: int, block: int, large: int) -> list[object]:
    """Per token of a prompt decoded from ``start`` in ``block``-token batches: "large",
    or the (start, size) of its small batch; tokens before ``start`` count as large."""
    kinds: list[object] = ["large"] * start
    for begin in range(start, n_prompt, block):
        size = min(block, n_prompt - begin)
        kinds += ["large" if size >= large else (begin, size)] * size
    return kinds


def test_reusable_prefix_keeps_every_token_in_the_batch_kind_of_a_fresh_run():
    block, large = 16, 4
    for n_prompt in range(1, 70):
        fresh = batch_kinds(n_prompt, 0, block, large)
        for shared in range(n_prompt + 1):
            valid = [
                cut
                for cut in range(min(shared, n_prompt - 1) + 1)
                if all(kind == "large" for kind in fresh[:cut])
                and batch_kinds(n_prompt, cut, block, large) == fresh
            ]
            cut = reusable_prefix(shared, n_prompt, block, large)
            assert cut == max(valid), (n_prompt, shared)  # valid, and the deepest valid one
            decoded = batch_kinds(n_prompt, cut, block, large)
            large_tokens = next((i for i, k in enumerate(decoded) if k != "large"), n_prompt)
            assert large_prefix(cut, n_prompt, block, large) == large_tokens


def test_reuse_cuts_on_the_real_block_size():
    assert reusable_prefix(60, 130, 512) == 60  # a one-memory prompt: its shared instruction
    assert reusable_prefix(60, 100, 512) == 100 - LARGE_BATCH  # the last batch stays large
    assert reusable_prefix(1900, 1036, 512) == 1024  # a fresh run ends in a 12-token batch
    assert reusable_prefix(1480, 2000, 512) == 2000 - 512 - LARGE_BATCH  # not a 8-token batch


def test_saved_states_keep_the_longest_prefixes_within_capacity():
    states = _SavedStates(capacity=10)
    states.put((1, 2, 3), (ctypes.c_uint8 * 4)(), 3)
    states.put((1, 2, 3, 4), (ctypes.c_uint8 * 4)(), 4)  # makes the state of (1, 2, 3) redundant
    states.put((5, 6), (ctypes.c_uint8 * 4)(), 2)
    assert list(states.states) == [(1, 2, 3, 4), (5, 6)]
    assert states.longest([1, 2, 3, 9]) == ((1, 2, 3, 4), 3)
    assert states.longest([9]) == ((), 0)
    states.get((1, 2, 3, 4))
    states.put((7,), (ctypes.c_uint8 * 4)(), 1)  # over capacity: the least recently used goes
    assert list(states.states) == [(1, 2, 3, 4), (7,)] and states.size == 8
    states.put((8,), (ctypes.c_uint8 * 11)(), 1)  # larger than the whole capacity: not kept
    assert (8,) not in states.states and states.size == 8


def test_saved_states_offer_only_their_large_batch_tokens():
    states = _SavedStates(capacity=100)
    states.put((1, 2, 3, 4, 5), (ctypes.c_uint8 * 4)(), 2)  # tokens 3 to 5 came in a small batch
    states.put((1, 2, 3, 4), (ctypes.c_uint8 * 4)(), 4)
    states.put((1, 2, 3, 4, 5, 6), (ctypes.c_uint8 * 4)(), 3)  # fewer large tokens: both kept
    assert list(states.states) == [(1, 2, 3, 4), (1, 2, 3, 4, 5, 6)]
    assert states.longest([1, 2, 3, 4, 5, 6]) == ((1, 2, 3, 4), 4)


async def test_token_counting_uses_the_model_tokenizer():
    model = get_model("gguf/smollm2", memoize=False)
    assert await model.count_tokens("hello world") == 2
    assert await model.count_tokens(PROMPT) < await model.count_tokens(PROMPT + " " + PROMPT)


def test_model_resolution(tmp_path):
    assert resolve_gguf("smollm2").name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert resolve_gguf(str(resolve_gguf("smollm2"))).is_file()
    with pytest.raises(ValueError, match="Unknown local model 'gpt2'"):
        resolve_gguf("gpt2")
    with pytest.raises(ValueError, match="Unknown local model"):
        resolve_gguf(str(tmp_path / "missing.gguf"))
    with pytest.raises(ValueError, match="Unknown arguments for the gguf provider"):
        get_model("gguf/smollm2", temperature_boost=1, memoize=False)


def test_cache_identity_follows_the_file_not_its_name(tmp_path):
    bundled = resolve_gguf("smollm2")
    assert gguf_identity(bundled) == gguf_identity(bundled)
    assert get_model("gguf/smollm2", memoize=False).api.base_url == gguf_identity(bundled)
    copy = tmp_path / "SmolLM2-135M-Instruct.Q4_1.gguf"
    copy.write_bytes(bundled.read_bytes()[:-1] + b"\0")  # same name and size, other content
    assert gguf_identity(copy) != gguf_identity(bundled)
