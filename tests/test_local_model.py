"""The embedded llama.cpp provider, on the real default model (SmolLM2-135M)."""

from __future__ import annotations

import asyncio

import pytest
from inspect_ai.model import GenerateConfig, get_model

from cmi_inspect.local_model import GGUFModel, PromptTooLongError, resolve_gguf

PROMPT = "What is the capital of France? Answer in one word."


async def test_generates_with_usage_and_is_deterministic():
    model = get_model("gguf/smollm2", memoize=False)
    first = await model.generate(PROMPT, config=GenerateConfig(max_tokens=16))
    second = await model.generate(PROMPT, config=GenerateConfig(max_tokens=16))
    assert first.completion.strip() and first.completion == second.completion
    assert first.usage is not None
    assert first.usage.input_tokens > 5 and 0 < first.usage.output_tokens <= 16
    assert first.usage.total_tokens == first.usage.input_tokens + first.usage.output_tokens


async def test_concurrent_calls_share_one_instance_and_match_sequential():
    model = get_model("gguf/smollm2", memoize=False)
    other = get_model("gguf/smollm2", memoize=False)
    assert isinstance(model.api, GGUFModel) and isinstance(other.api, GGUFModel)
    assert model.api.engine is other.api.engine
    prompts = [f"Name a colour that starts with the letter {c}." for c in "bgrp"]
    config = GenerateConfig(max_tokens=12)
    sequential = [(await model.generate(p, config=config)).completion for p in prompts]
    concurrent = await asyncio.gather(*(other.generate(p, config=config) for p in prompts))
    assert [o.completion for o in concurrent] == sequential


async def test_prompt_over_the_window_is_a_clear_error():
    model = get_model("gguf/smollm2", n_ctx=256, memoize=False)
    with pytest.raises(PromptTooLongError, match=r"exceeds the 256-token context window"):
        await model.generate("word " * 400, config=GenerateConfig(max_tokens=8))


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
