"""The embedded llama.cpp provider, on the real default model (SmolLM2-135M)."""

from __future__ import annotations

import asyncio
import sys
import threading

import pytest
from cmi_inspect.local_model import LARGE_BATCH, GGUFModel, PromptTooLongError, reuse_totals
from cmi_inspect.local_model import probe as probe_module
from cmi_inspect.local_model.sequences import BATCH_INVARIANT_KV
from inspect_ai.model import ChatMessageUser, GenerateConfig, Model, get_model

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

    def spying(target: object, name: str) -> None:
        original = getattr(target, name)

        def spy(*args):
            threads.add(threading.get_ident())
            return original(*args)

        monkeypatch.setattr(target, name, spy)

    spying(engine.llm, "complete")  # a completion alone
    if engine.sequences is not None:  # parallel=auto's slots
        spying(engine.sequences, "prompt")
        spying(engine.sequences, "step")
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
        asked,
        asked,
    )


@pytest.mark.slow  # loads the embedded model
async def test_token_counting_uses_the_model_tokenizer():
    model = get_model("gguf/smollm2", memoize=False)
    assert await model.count_tokens("hello world") == 2
    assert await model.count_tokens(PROMPT) < await model.count_tokens(PROMPT + " " + PROMPT)


@pytest.mark.slow  # generates with the real model
@pytest.mark.parametrize("extra_bufts", ["auto", "off"])  # never "on": it crashes some CPUs
async def test_a_long_prompt_gets_an_answer_and_the_output_names_the_engine(extra_bufts):
    model = get_model("gguf/smollm2", extra_bufts=extra_bufts, memoize=False)
    prompt = f"{history(120)}\n\nWhat was the favourite number on day 5?"
    assert await model.count_tokens(prompt) >= 1000
    output = await model.generate(prompt, config=GenerateConfig(max_tokens=16), cache=False)
    assert output.completion.strip()
    assert output.usage is not None and output.usage.input_tokens >= 1000
    assert output.metadata is not None
    engine = output.metadata["llama_cpp"]
    assert isinstance(model.api, GGUFModel)
    settings = model.api.engine_config
    assert engine == {
        "extra_bufts": settings.extra_bufts,
        "chosen_by": settings.chosen_by,
        "parallel": settings.parallel,
        "batch_kv": settings.batch_kv,
        "batching_by": settings.batching_by,
    }
    if extra_bufts == "off":
        assert (engine["extra_bufts"], engine["chosen_by"]) == (False, "-M extra_bufts=off")


def test_a_crashing_probe_turns_the_extra_buffers_off(monkeypatch, tmp_path):
    monkeypatch.setenv("CMI_CACHE_DIR", str(tmp_path))
    crash = [sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGILL)"]
    monkeypatch.setattr(probe_module, "child_command", lambda model: crash)
    model = get_model("gguf/smollm2", memoize=False, parallel=1)
    assert isinstance(model.api, GGUFModel)
    assert model.api.engine_config.extra_bufts is False
    assert "SIGILL" in model.api.engine_config.chosen_by
    assert model.api.base_url is not None and ":no-extra-bufts:" in model.api.base_url
    forced = get_model("gguf/smollm2", extra_bufts=True, memoize=False, parallel=1)  # -M extra_bufts=on
    assert isinstance(forced.api, GGUFModel) and forced.api.engine_config.extra_bufts is True
    assert forced.api.base_url is not None and not forced.api.base_url.endswith("-bufts")


@pytest.mark.slow  # scores with the real model
async def test_forced_decoding_scores_replies_the_same_whatever_ran_before():
    prompt = history(30) + " What was the favourite number on day 3? Answer briefly."
    model = get_model("gguf/smollm2", memoize=False)
    fresh = get_model("gguf/smollm2", prefix_cache_mb=0, memoize=False)  # its own engine: no reuse
    config = GenerateConfig(max_tokens=16)
    answer = (await model.generate(prompt, config=config, cache=False)).completion
    replies = [answer, "Berlin is the capital of Germany."]
    scored = await model.api.continuation_logprobs([ChatMessageUser(content=prompt)], replies)  # type: ignore[attr-defined]
    assert [len(s) for s in scored] == [len(model.api.engine.llm.tokenize(r)) + 1 for r in replies]  # type: ignore[attr-defined]
    assert all(x <= 0 for s in scored for x in s)
    assert sum(scored[0]) > sum(scored[1])  # the model's own greedy reply is the likelier
    again = await model.api.continuation_logprobs([ChatMessageUser(content=prompt)], replies[::-1])  # type: ignore[attr-defined]
    alone = await fresh.api.continuation_logprobs([ChatMessageUser(content=prompt)], replies)  # type: ignore[attr-defined]
    assert again[::-1] == scored and alone == scored
    after = (await model.generate(prompt, config=config, cache=False)).completion
    assert after == answer  # scoring leaves later completions as they were
    from cmi_inspect.local_model.capability import FORCED_DECODING
    from inspect_ai.event import InfoEvent
    from inspect_ai.log import transcript

    records = [
        e.data[FORCED_DECODING]
        for e in transcript().events
        if isinstance(e, InfoEvent) and isinstance(e.data, dict) and FORCED_DECODING in e.data
    ]
    assert records[-1] == {  # each forced decoding is in the transcript, for a run's cost
        "prompt_tokens": model.api.engine.prompt_tokens([{"role": "user", "content": prompt}]),  # type: ignore[attr-defined]
        "continuation_tokens": sum(map(len, scored)),
    }


@pytest.mark.slow  # generates with the real model, three times
async def test_parallel_slots_answer_one_request_as_the_single_context_does():
    """A request that decodes alone in its slot gets the completion of parallel=1, whatever
    the slots held before; requests that a forced parallel=4 decodes together may not
    (every row batched changes the arithmetic: benchmarks/compare_completions.py measures
    how often), but each is whole."""
    notes = " ".join(f"Note {i}: the team met on {i} May 2023 about the launch." for i in range(1, 30))
    prompts = [f"{notes[: 150 * i]}\nName a colour that starts with the letter {c}." for i, c in enumerate("bgrpoy")]
    config = GenerateConfig(max_tokens=24)
    one = get_model("gguf/smollm2", memoize=False, parallel=1)
    batched = get_model("gguf/smollm2", memoize=False, parallel=4)
    assert isinstance(batched.api, GGUFModel) and batched.api.engine.config.parallel == 4
    assert batched.api.engine.config.batch_kv is None and not batched.api.engine_config.exact_batches
    assert batched.api.engine is not one.api.engine  # type: ignore[attr-defined]
    assert batched.api.base_url != one.api.base_url  # its answers are cached apart
    expected = [await one.generate(p, config=config, cache=False) for p in prompts]
    in_turn = [await batched.generate(p, config=config, cache=False) for p in prompts]
    assert [o.completion for o in in_turn] == [o.completion for o in expected]
    assert [o.usage for o in in_turn] == [o.usage for o in expected]
    together = await asyncio.gather(*(batched.generate(p, config=config, cache=False) for p in prompts))
    assert all(o.completion for o in together)
    assert [o.usage.input_tokens for o in together] == [o.usage.input_tokens for o in expected]  # type: ignore[union-attr]
    assert all(o.usage.output_tokens <= 24 for o in together)  # type: ignore[union-attr]


def long_prompts() -> list[str]:
    """Prompts of about 40 to 700 tokens whose replies run on (some pass 256 tokens while
    they decode): short rows batch, long ones decode alone, both while others run."""
    notes = " ".join(f"Note {i}: the team met on {i} May 2023 about the launch." for i in range(1, 80))
    return [f"{notes[: 60 * i * i]}\nList every meeting date you can find." for i in range(1, 9)]


@pytest.mark.slow  # probes, then generates with the real model twice
@pytest.mark.heavy  # minutes on two cores: -m 'not heavy' leaves it out
async def test_auto_batches_concurrent_requests_and_answers_exactly_as_one_slot():
    """Whatever the batch probe finds on this machine, parallel=auto (the default) gives
    concurrent requests the completions of parallel=1 bit for bit, and every output says
    how it was batched (what follows from each verdict: test_batch_probe)."""
    config = GenerateConfig(max_tokens=96)
    one = get_model("gguf/smollm2", memoize=False, parallel=1)
    auto = get_model("gguf/smollm2", memoize=False)
    assert isinstance(auto.api, GGUFModel) and isinstance(one.api, GGUFModel)
    settings = auto.api.engine_config
    assert "batch probe: " in settings.batching_by and settings.exact_batches
    assert auto.api.base_url == one.api.base_url  # the same answers: one model-call cache
    prompts = long_prompts()
    expected = [await one.generate(p, config=config, cache=False) for p in prompts]
    together = await asyncio.gather(*(auto.generate(p, config=config, cache=False) for p in prompts))
    assert [o.completion for o in together] == [o.completion for o in expected]
    assert [o.usage for o in together] == [o.usage for o in expected]
    assert max(o.usage.input_tokens + o.usage.output_tokens for o in together) > BATCH_INVARIANT_KV  # type: ignore[union-attr]
    metadata = together[0].metadata or {}
    assert metadata["llama_cpp"]["parallel"] == settings.parallel
    assert metadata["llama_cpp"]["batching_by"] == settings.batching_by
