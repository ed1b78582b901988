"""Engine: which tokens it decodes again and which it takes from the context or a saved
state, on a fake llama.cpp that records its calls (the real model's bit-for-bit checks are
the slow tests of test_provider)."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from cmi_inspect.local_model import engine as engine_module
from cmi_inspect.local_model.config import EngineConfig
from cmi_inspect.local_model.engine import Engine, GenerationCancelled
from cmi_inspect.local_model.llamacpp import Completion


class FakeLlama:
    """Prompts are ``"n"`` (tokens 0..n-1) or ``"n+offset"``; it records decode calls."""

    block = 512
    fail_load = False

    def __init__(self, *args: Any) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def prompt_ids(self, messages: list[dict[str, str]]) -> list[int]:
        n, _, offset = messages[-1]["content"].partition("+")
        return list(range(int(offset or 0), int(offset or 0) + int(n)))

    def tokenize(self, text: str) -> list[int]:
        return [1] * len(text)

    def end_of_turn(self) -> int:
        return 2

    def keep(self, tokens: list[int], n: int) -> None:
        self.calls.append(("keep", n))

    def reset(self) -> None:
        self.calls.append(("reset",))

    def complete(self, messages: Any, max_tokens: int, stop: Any, cancel: Any = None) -> dict[str, Any]:
        self.calls.append(("complete", len(self.prompt_ids(messages))))
        return {}

    def decode(self, tokens: list[int], start: int) -> None:
        self.calls.append(("decode", len(tokens), start))

    def tail_logprobs(self, tokens: list[int], start: int) -> list[float]:
        return [0.0] * (len(tokens) - start - 1)

    def save_state(self) -> bytes:
        return b"kv"

    def load_state(self, state: bytes) -> None:
        if self.fail_load:
            raise RuntimeError("llama.cpp could not restore a saved prompt state")
        self.calls.append(("load",))

    def close(self) -> None:
        pass

    def is_end(self, token: int) -> bool:
        return token == 0

    def detokenize(self, tokens: list[int], prev: list[int]) -> bytes:
        return " ".join(map(str, tokens)).encode()

    def completion(self, prompt: list[int], max_tokens: int, stop: Any, cancel: Any = None) -> Completion:
        return Completion(self, prompt, max_tokens, [], cancel=cancel)  # type: ignore[arg-type]


class FakeSequences:
    """Each sequence counts down from its prompt's length mod 4 to the end token, 0."""

    def __init__(self, llm: Any, n: int, n_ctx: int) -> None:
        self.batches: list[int] = []
        self.prompts: list[tuple[int, int, int]] = []
        self.batch_kv: set[int | None] = set()

    def prompt(self, seq: int, tokens: list[int], start: int, cancel: Any = None) -> int:
        self.prompts.append((seq, len(tokens), start))
        return len(tokens) % 4

    def step(self, rows: list[tuple[int, int, int]], batch_kv: int | None = None) -> list[int]:
        time.sleep(0.01)  # let concurrent requests arrive between batches
        self.batches.append(len(rows))
        self.batch_kv.add(batch_kv)
        return [token - 1 for _, token, _ in rows]

    def save_state(self, seq: int) -> bytes:
        return b"kv"

    def load_state(self, seq: int, state: bytes) -> None:
        pass

    def close(self) -> None:
        pass


def config(parallel: int = 1, batch_kv: int | None = None) -> EngineConfig:
    return EngineConfig(
        path=Path("model.gguf"),
        extra_bufts=False,
        n_ctx=8192,
        n_threads=1,
        prefix_cache_mb=1,
        parallel=parallel,
        batch_kv=batch_kv,
    )


@pytest.fixture
def engine(monkeypatch):
    monkeypatch.setattr(engine_module, "LlamaCpp", FakeLlama)
    e = Engine(config())
    yield e
    e.close()


def user(content: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": content}]


def test_a_head_whose_fresh_decoding_ends_in_a_small_batch_is_decoded_again(engine):
    engine.chat(user("576"), 8, None)  # 512 + 64: every token in a large batch
    engine.llm.calls.clear()
    engine.continuation_logprobs(user("576"), ["yes"])
    # the head's 575 tokens end in a batch of 63 when decoded fresh: whole blocks only are kept
    assert ("decode", 575, 512) in engine.llm.calls


def test_a_head_held_in_large_batches_is_not_decoded_again(engine):
    engine.chat(user("600"), 8, None)
    engine.llm.calls.clear()
    assert engine.continuation_logprobs(user("600"), ["yes", "no"]) == [[0.0] * 4, [0.0] * 3]
    assert not [c for c in engine.llm.calls if c[0] in ("decode", "load", "reset")]


def test_a_state_that_fails_to_load_leaves_no_prompt_known_in_the_context(engine):
    engine.chat(user("600"), 8, None)  # saved
    engine.chat(user("600+5000"), 8, None)  # another prompt in the context
    engine.llm.fail_load = True
    with pytest.raises(RuntimeError, match="could not restore"):
        engine.chat(user("700"), 8, None)  # would start from the first prompt's state
    assert engine.live == () and engine.live_large == 0


def test_parallel_slots_decode_concurrent_requests_together(monkeypatch):
    monkeypatch.setattr(engine_module, "LlamaCpp", FakeLlama)
    monkeypatch.setattr(engine_module, "Sequences", FakeSequences)
    e = Engine(config(parallel=2, batch_kv=256))
    try:
        lengths = [603, 602, 601, 603, 600]
        with ThreadPoolExecutor(5) as pool:
            answers = list(pool.map(lambda n: e.chat(user(str(n)), 8, None), lengths))
        fake = e.sequences
        assert isinstance(fake, FakeSequences)
        texts = [a["choices"][0]["message"]["content"] for a in answers]
        assert texts == ["3 2 1", "2 1", "1", "3 2 1", ""]  # each counted down alone
        assert [a["choices"][0]["finish_reason"] for a in answers] == ["stop"] * 5
        assert max(fake.batches) == 2  # two slots, decoded together
        assert fake.batch_kv == {256}  # under the configured rule for which rows share a batch
        assert e.stats.calls == 5 and e.stats.prompt_tokens == sum(lengths)
        again = e.chat(user("603"), 8, None)  # its slot, or a saved state, still holds it
        assert again["choices"][0]["message"]["content"] == "3 2 1"
        assert fake.prompts[-1][2] > 0
    finally:
        e.close()


def test_prompts_sharing_a_long_prefix_decode_it_once_whatever_order_they_come_in(monkeypatch):
    """Questions of one conversation under full history: concurrent, they would each decode
    the history; the first decodes it and the others wait for its state. Others run on."""
    monkeypatch.setattr(engine_module, "LlamaCpp", FakeLlama)
    monkeypatch.setattr(engine_module, "Sequences", FakeSequences)
    e = Engine(config(parallel=2, batch_kv=256))
    try:
        with ThreadPoolExecutor(5) as pool:
            held = pool.submit(e._run, time.sleep, 0.3)  # every request queues meanwhile
            time.sleep(0.05)
            prompts = ["1102", "1100", "1300+5000", "1101"]
            answers = [pool.submit(e.chat, user(p), 8, None) for p in prompts]
            held.result()
            assert all(a.result() for a in answers)
        fake = e.sequences
        assert isinstance(fake, FakeSequences)
        starts = {n: start for _, n, start in fake.prompts}
        shared = [starts[n] for n in (1100, 1101, 1102)]
        assert sorted(shared)[0] == 0 and min(sorted(shared)[1:]) >= 1024
        assert starts[1300] == 0
        assert [n for _, n, _ in fake.prompts][:2] == [1102, 1300]  # the unrelated one ran on
    finally:
        e.close()


class SlotStates(FakeSequences):
    def save_state(self, seq: int) -> bytes:
        return b"slot kv"


class OwnStatesOnly(FakeLlama):
    def load_state(self, state: bytes) -> None:
        assert state == b"kv", "the single context was handed a state the slots saved"
        super().load_state(state)


def test_the_single_context_never_restores_a_state_a_slot_saved(monkeypatch):
    """llama.cpp refuses a sequence's state saved in the slots' context of another shape:
    forced decoding after a batched completion of the same prompt decodes it instead."""
    monkeypatch.setattr(engine_module, "LlamaCpp", OwnStatesOnly)
    monkeypatch.setattr(engine_module, "Sequences", SlotStates)
    e = Engine(config(parallel=2, batch_kv=256))
    try:
        e.chat(user("1200"), 8, None)  # through a slot, which saves its state
        assert e.slot_saved.longest(list(range(1200)))[1] == 1200
        assert e.saved.longest(list(range(1200)))[1] == 0
        e.continuation_logprobs(user("1201"), ["yes"])
        fake = e.llm
        assert isinstance(fake, OwnStatesOnly)
        assert ("load",) not in fake.calls and any(c[0] == "decode" for c in fake.calls)
    finally:
        e.close()


class GeneratingLlama(FakeLlama):
    """A completion given a cancel flag generates until the flag is set (10 s at most)."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.generating = threading.Event()

    def complete(self, messages: Any, max_tokens: int, stop: Any, cancel: Any = None) -> dict[str, Any]:
        super().complete(messages, max_tokens, stop)
        if cancel is not None:
            self.generating.set()
            assert cancel.wait(10)
        return {"choices": []}


def test_a_cancelled_completion_ends_and_one_cancelled_while_waiting_is_never_decoded(monkeypatch):
    monkeypatch.setattr(engine_module, "LlamaCpp", GeneratingLlama)
    e = Engine(config())
    try:
        first, second = threading.Event(), threading.Event()
        with ThreadPoolExecutor(2) as pool:
            running = pool.submit(e.chat, user("10"), 8, None, first)
            assert e.llm.generating.wait(10)  # type: ignore[attr-defined]  # the fake's
            waiting = pool.submit(e.chat, user("20"), 8, None, second)
            second.set()  # its client left while it waited behind the first
            first.set()
            for future in (running, waiting):
                with pytest.raises(GenerationCancelled):
                    future.result(timeout=10)
        assert e.chat(user("30"), 8, None) == {"choices": []}  # the engine goes on
        calls = e.llm.calls  # type: ignore[attr-defined]  # the fake's
        assert [c for c in calls if c[0] == "complete"] == [("complete", 10), ("complete", 30)]
    finally:
        e.close()


class EndlessSequences(FakeSequences):
    """Every sequence repeats token 5 for ever; the third batch sets ``cancel``."""

    cancel = threading.Event()

    def prompt(self, seq: int, tokens: list[int], start: int, cancel: Any = None) -> int:
        super().prompt(seq, tokens, start)
        return 5

    def step(self, rows: list[tuple[int, int, int]], batch_kv: int | None = None) -> list[int]:
        self.batches.append(len(rows))
        if len(self.batches) == 3:
            self.cancel.set()
        return [5 for _ in rows]


def test_a_cancelled_slot_stops_at_its_next_token_and_a_waiting_one_is_never_decoded(monkeypatch):
    monkeypatch.setattr(engine_module, "LlamaCpp", FakeLlama)
    monkeypatch.setattr(engine_module, "Sequences", EndlessSequences)
    e = Engine(config(parallel=2))
    try:
        fake = e.sequences
        assert isinstance(fake, EndlessSequences)
        with pytest.raises(GenerationCancelled):
            e.chat(user("600"), 4000, None, fake.cancel)
        assert fake.batches == [1, 1, 1]  # not the 4,000 tokens asked for
        with pytest.raises(GenerationCancelled):
            e.chat(user("700"), 8, None, fake.cancel)  # already cancelled: no prompt decoded
        assert [p[1] for p in fake.prompts] == [600]
    finally:
        e.close()


class CancelledInPrompt(FakeSequences):
    """A prompt's decoding notices its completion's ``cancel`` flag between its batches."""

    def prompt(self, seq: int, tokens: list[int], start: int, cancel: Any = None) -> int:
        assert cancel is not None, "a slot's prompt is decoded without its cancel flag"
        cancel.set()  # as a Ctrl-C arriving while a long prompt is decoded
        raise GenerationCancelled("the completion was cancelled")


def test_a_slot_decoding_a_long_prompt_hears_its_cancel_flag_and_frees_the_slot(monkeypatch):
    monkeypatch.setattr(engine_module, "LlamaCpp", FakeLlama)
    monkeypatch.setattr(engine_module, "Sequences", CancelledInPrompt)
    e = Engine(config(parallel=2))
    try:
        with pytest.raises(GenerationCancelled):
            e.chat(user("3000"), 8, None, threading.Event())
        assert all(s.future is None and s.live == () for s in e.slots)
    finally:
        e.close()
