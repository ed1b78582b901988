"""The llama-cpp-python adapter: the model parameters a load sees, where a completion stops."""

from __future__ import annotations

import llama_cpp.llama_cpp as lib
import pytest
from cmi_inspect.local_model.llamacpp import Completion, build_identity, model_params


@pytest.mark.parametrize("extra_bufts", [True, False])
def test_a_load_inside_the_block_sees_the_chosen_buffers_and_the_default_comes_back(extra_bufts):
    default = lib.llama_model_default_params
    with model_params(extra_bufts):
        assert lib.llama_model_default_params().use_extra_bufts is extra_bufts
    assert lib.llama_model_default_params is default
    assert lib.llama_model_default_params().use_extra_bufts is True


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
