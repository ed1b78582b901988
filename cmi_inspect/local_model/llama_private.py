"""Every name of llama-cpp-python's that it does not document, behind one function each.

``Llama`` keeps its model, context and batch in ``_model``, ``_ctx`` and ``_batch`` (types
of ``llama_cpp._internals``), its library in ``llama_cpp.llama_cpp._lib`` and ggml's in
``llama_cpp._ggml``; a release may rename any of them. Each was checked against
llama-cpp-python 0.3.36 (pyproject.toml bounds it below 0.4), and
``tests/local_model/test_llama_private.py`` fails, naming it, when an upgrade moves one. No
other module reaches them (``tests/test_imports.py`` holds that for imports).
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from llama_cpp import Llama

_PARAMS_LOCK = threading.Lock()


@contextmanager
def model_params(extra_bufts: bool) -> Iterator[None]:
    """Models loaded inside this block use llama.cpp's extra buffer types or not.

    llama-cpp-python has no argument for ``use_extra_bufts``: ``Llama.__init__`` reads
    ``llama_cpp.llama_model_default_params()`` (0.3.36), so the block swaps that one function
    (under a lock, so a model loaded concurrently in another thread cannot see the swap).
    """
    import llama_cpp.llama_cpp as lib

    with _PARAMS_LOCK:
        default = lib.llama_model_default_params

        def chosen() -> Any:
            params = default()
            params.use_extra_bufts = extra_bufts
            return params

        lib.llama_model_default_params = chosen
        try:
            yield
        finally:
            lib.llama_model_default_params = default


def library_file() -> Path:
    """The llama.cpp shared library loaded (``llama_cpp.llama_cpp._lib._name``, 0.3.36);
    an empty path where it is not known."""
    import llama_cpp.llama_cpp as lib

    return Path(getattr(lib._lib, "_name", "") or "")


def token_text(llm: Llama, token: int) -> str:
    """A token's text as the vocabulary spells it (``Llama._model.token_get_text``, 0.3.36)."""
    return llm._model.token_get_text(token)


def is_end_of_generation(llm: Llama, token: int) -> bool:
    """Whether the vocabulary marks ``token`` as ending generation
    (``llama_vocab_is_eog`` on ``Llama._model.vocab``, 0.3.36)."""
    import llama_cpp

    return bool(llama_cpp.llama_vocab_is_eog(llm._model.vocab, token))


def logits_buffer(llm: Llama) -> Any:
    """The context's logits, a ctypes pointer to their first row: after ``Llama.eval``, which
    asks for the last token's alone, that token's (``Llama._ctx.get_logits``, 0.3.36)."""
    return llm._ctx.get_logits()


def forget_after(llm: Llama, start: int) -> None:
    """Drop every sequence's KV cells from position ``start`` on
    (``Llama._ctx.kv_cache_seq_rm``, 0.3.36)."""
    llm._ctx.kv_cache_seq_rm(-1, start, -1)


def decode_all_logits(llm: Llama, tokens: list[int], n_past: int) -> None:
    """Decode ``tokens`` at positions from ``n_past`` in ``Llama``'s own batch, asking for
    every row's logits (``Llama._batch.set_batch`` and ``Llama._ctx.decode``, 0.3.36)."""
    llm._batch.set_batch(batch=tokens, n_past=n_past, logits_all=True)
    llm._ctx.decode(llm._batch)


def second_context(llm: Llama, params: Any) -> Any:
    """Another context of ``llm``'s loaded model, with llama.cpp's context ``params``; its
    ``ctx`` is the raw context pointer and ``close()`` frees it
    (``llama_cpp._internals.LlamaContext`` over ``Llama._model``, 0.3.36)."""
    from llama_cpp._internals import LlamaContext

    return LlamaContext(model=llm._model, params=params, verbose=False)


def op_description() -> Callable[[int], bytes]:
    """ggml's ``ggml_op_desc``: a tensor's operation, by the tensor's address
    (``llama_cpp._ggml.libggml``, 0.3.36)."""
    import llama_cpp._ggml as ggml

    describe = ggml.libggml.ggml_op_desc
    describe.argtypes, describe.restype = [ctypes.c_void_p], ctypes.c_char_p
    return describe  # type: ignore[no-any-return]
