"""The llama-cpp-python adapter: the build's identity, where a completion stops, batched decoding."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from cmi_inspect.local_model import resolve_gguf
from cmi_inspect.local_model.llamacpp import Completion, LlamaCpp, build_identity
from cmi_inspect.local_model.sequences import BATCH_INVARIANT_KV, Activation, Sequences


def test_the_build_identity_names_the_version_features_and_library_file():
    import llama_cpp

    identity = build_identity()
    assert identity["version"] == llama_cpp.__version__
    assert identity["system_info"] == llama_cpp.llama_print_system_info().decode().strip()
    assert identity["library"].startswith("libllama")


class Words:
    """A vocabulary of words for Completion: token i is words[i]; token 0 ends generation."""

    words = ["<end>", "The", " answer", " is", " 42", ".", " STOP", " more"]

    def is_end(self, token: int) -> bool:
        return token == 0

    def detokenize(self, tokens: list[int], prev: list[int]) -> bytes:
        return "".join(self.words[t] for t in tokens).encode()


def feed(completion: Completion, tokens: list[int]) -> int:
    """Give tokens until the completion ends; how many it took."""
    for n, token in enumerate(tokens, 1):
        if completion.add(token):
            return n
    return len(tokens)


def test_a_completion_ends_at_its_end_token_a_stop_string_or_max_tokens():
    ended = Completion(Words(), [9], max_tokens=10, stop=[b" STOP"])  # type: ignore[arg-type]
    assert feed(ended, [1, 2, 3, 4, 0, 7]) == 5
    assert (ended.text, ended.finish_reason, ended.tokens) == (b"The answer is 42", "stop", [1, 2, 3, 4])
    stopped = Completion(Words(), [9], max_tokens=10, stop=[b" STOP"])  # type: ignore[arg-type]
    assert feed(stopped, [1, 2, 6, 7]) == 3
    assert (stopped.text, stopped.finish_reason, len(stopped.tokens)) == (b"The answer", "stop", 3)
    long = Completion(Words(), [9], max_tokens=3, stop=[])  # type: ignore[arg-type]
    assert feed(long, [1, 2, 3, 4]) == 3 and (long.text, long.finish_reason) == (b"The answer is", "length")
    response = long.response()
    assert response["choices"][0]["message"]["content"] == "The answer is"
    assert response["usage"] == {"prompt_tokens": 1, "completion_tokens": 3, "total_tokens": 4}


def test_a_cancelled_completion_ends_at_its_next_token():
    cancel = threading.Event()
    completion = Completion(Words(), [9], max_tokens=10, stop=[], cancel=cancel)  # type: ignore[arg-type]
    assert not completion.add(1) and not completion.add(2)
    cancel.set()
    assert completion.add(3)
    assert (completion.text, completion.finish_reason, completion.tokens) == (b"The answer", "stop", [1, 2])


class SetAfter(threading.Event):
    """A cancel flag that reads as set from its ``n + 1``-th look on (one look a token)."""

    def __init__(self, n: int) -> None:
        super().__init__()
        self.n, self.looks = n, 0

    def is_set(self) -> bool:
        self.looks += 1
        return self.looks > self.n


@pytest.mark.slow  # generates with the real model
@pytest.mark.heavy  # minutes on two cores: -m 'not heavy' leaves it out
def test_a_cancelled_chat_completion_ends_at_its_next_token_and_an_uncancelled_one_is_unchanged():
    llm = LlamaCpp(resolve_gguf("smollm2"), n_ctx=1024, n_threads=None, extra_bufts=False)
    try:
        story = [{"role": "user", "content": "Write a long story about a dragon who learns to read."}]
        plain = llm.complete(story, 48, None)
        assert plain["usage"]["completion_tokens"] == 48  # a long reply: the window it had
        llm.reset()
        watched = llm.complete(story, 48, None, threading.Event())  # never set
        assert watched["choices"] == plain["choices"] and watched["usage"] == plain["usage"]
        llm.reset()
        cancelled = llm.complete(story, 48, None, SetAfter(3))
        assert cancelled["usage"]["completion_tokens"] == 3
        assert cancelled["choices"][0]["finish_reason"] == "stop"
        assert plain["choices"][0]["message"]["content"].startswith(cancelled["choices"][0]["message"]["content"])
    finally:
        llm.close()


def test_only_rows_of_short_sequences_share_a_batch_and_logits_come_back_in_row_order():
    batches: list[list[tuple[int, int, int, bool]]] = []
    sequences = Sequences.__new__(Sequences)  # its batching alone: no context
    sequences.n_vocab = 2
    sequences._decode = batches.append  # type: ignore[method-assign, assignment]
    sequences._logits = lambda k: np.array([batches[-1][k][2], k], dtype=np.float32)  # type: ignore[method-assign, assignment]
    rows = [(0, 10, 255), (1, 11, 256), (2, 12, 3), (3, 13, 900)]  # (sequence, token, position)
    logits = sequences.step_logits(rows, batch_kv=256)
    # positions 255 and 3 leave their sequences 256 and 4 tokens: one batch; the others alone
    assert [[row[2] for row in batch] for batch in batches] == [[0, 2], [1], [3]]
    assert logits.tolist() == [[0, 0], [1, 0], [2, 1], [3, 0]]
    batches.clear()
    sequences.step_logits(rows)  # no rule: every row in one batch
    assert [[row[2] for row in batch] for batch in batches] == [[0, 1, 2, 3]]


@pytest.mark.slow  # decodes with the real model
def test_an_observer_sees_every_layer_and_changes_no_logit_and_a_long_row_is_decoded_alone():
    llm = LlamaCpp(resolve_gguf("smollm2"), 1024, None, extra_bufts=False)
    prompts = [llm.tokenize("The band plays on while the fox jumps. " * k)[:n] for k, n in ((40, 300), (10, 60))]
    seen: list[Activation] = []

    def next_rows(sequences: Sequences, both: bool, batch_kv: int | None) -> np.ndarray:
        firsts = [sequences.prompt(seq, p, 0) for seq, p in enumerate(prompts)]
        rows = [(seq, firsts[seq], len(p)) for seq, p in enumerate(prompts)][: 2 if both else 1]
        return sequences.step_logits(rows, batch_kv)

    try:
        observed = Sequences(llm, 2, 512, observe=seen.append)
        plain = Sequences(llm, 2, 512)
        try:
            lone = next_rows(plain, False, None)[0]
            assert np.array_equal(next_rows(observed, False, None)[0], lone)
            # the 300-token sequence's row goes alone: the logits of its lone decoding
            assert np.array_equal(next_rows(plain, True, BATCH_INVARIANT_KV)[0], lone)
        finally:
            observed.close()
            plain.close()
        names = {a.name for a in seen}
        assert {"l_out-0", "l_out-29", "result_output"} <= names
        [last] = [a for a in seen if a.name == "result_output"][-1:]
        assert last.op == "MUL_MAT" and np.array_equal(last.values.reshape(-1), lone)
        unified = Sequences(llm, 2, 512, settings={"kv_unified": True})
        unified.close()
    finally:
        llm.close()
