"""The smoke test of llama-cpp-python's undocumented names: each adapter function still finds
what it reaches for. An upgrade that renames one fails here, naming it, before any engine
test fails for a reason harder to read. (This module reaches the private names itself, to
check them.)"""

from __future__ import annotations

import llama_cpp
import llama_cpp.llama_cpp as lib
import numpy as np
import pytest
from cmi_inspect.local_model import llama_private, resolve_gguf
from cmi_inspect.local_model.llamacpp import LlamaCpp


@pytest.mark.parametrize("extra_bufts", [True, False])
def test_a_load_inside_the_block_sees_the_chosen_buffers_and_the_default_comes_back(extra_bufts):
    default = lib.llama_model_default_params
    with llama_private.model_params(extra_bufts):
        assert lib.llama_model_default_params().use_extra_bufts is extra_bufts
    assert lib.llama_model_default_params is default
    assert lib.llama_model_default_params().use_extra_bufts is True


def test_the_library_and_ggml_names_are_where_the_adapter_reads_them():
    library = llama_private.library_file()
    assert library.is_file() and library.name.startswith("libllama")
    assert callable(llama_private.op_description())
    from llama_cpp._internals import LlamaBatch, LlamaContext, LlamaModel

    for cls, names in (
        (LlamaModel, ("token_get_text",)),
        (LlamaContext, ("get_logits", "kv_cache_seq_rm", "decode", "close")),
        (LlamaBatch, ("set_batch",)),
    ):
        missing = [n for n in names if not callable(getattr(cls, n, None))]
        assert not missing, f"llama_cpp._internals.{cls.__name__} lacks {missing}"


@pytest.mark.slow  # loads the embedded model and decodes with it
def test_each_function_reaches_a_loaded_models_own_parts():
    llm = LlamaCpp(resolve_gguf("smollm2"), n_ctx=512, n_threads=None, extra_bufts=False)
    try:
        for part in ("_model", "_ctx", "_batch"):
            assert hasattr(llm.llm, part), f"llama_cpp.Llama has no {part}"
        eos = llm.llm.token_eos()
        assert llama_private.token_text(llm.llm, eos) == "<|im_end|>"
        word = llm.tokenize(" hello")[0]
        assert llama_private.is_end_of_generation(llm.llm, eos)
        assert not llama_private.is_end_of_generation(llm.llm, word)
        tokens = llm.tokenize("The fox jumps over the dog.")
        llama_private.forget_after(llm.llm, 0)
        llama_private.decode_all_logits(llm.llm, tokens, 0)
        rows = np.ctypeslib.as_array(lib.llama_get_logits(llm.llm.ctx), shape=(len(tokens), llm.llm.n_vocab()))
        first = np.ctypeslib.as_array(llama_private.logits_buffer(llm.llm), shape=(llm.llm.n_vocab(),))
        assert np.isfinite(rows).all() and np.array_equal(first, rows[0])
        assert not np.array_equal(rows[0], rows[-1])  # every row's logits, as asked
        params = llama_cpp.llama_context_default_params()
        params.n_ctx = 256
        other = llama_private.second_context(llm.llm, params)
        assert other.ctx is not None
        other.close()
    finally:
        llm.close()
