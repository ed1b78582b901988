"""The engine's configuration: one type, built in one place from the provider's ``-M`` arguments.

``EngineConfig.from_model_args`` checks the ``-M`` values (one line naming a bad one, before
the probe runs), resolves the model's file and chooses llama.cpp's extra buffers (``probe``);
the provider, ``engine_for`` and ``engine_server`` all take the ``EngineConfig`` it returns.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from cmi_inspect.errors import UserError, positive_int
from cmi_inspect.local_model.files import resolve_gguf
from cmi_inspect.local_model.probe import choose_extra_bufts

DEFAULT_N_CTX = 4096
"""Context window the embedded default runs with: SmolLM2 supports 8192, but
prompt processing on a small CPU slows down with the window, so the default
stays at 4096; raise it with ``-M n_ctx=8192``."""
DEFAULT_PREFIX_CACHE_MB = 2048
"""Memory for the KV states of earlier prompts, so that a prompt sharing a prefix with
one of them (an instruction, a conversation's history) skips re-evaluating it; SmolLM2-135M's
state takes about 23 KB a token, so this holds some 20 to 40 full-history prompts: in the
release, two examples sharing a history are up to 30 other histories apart.
``-M prefix_cache_mb=0`` turns prefix reuse off."""


@dataclass(frozen=True, kw_only=True)
class EngineConfig:
    """One engine's model file and settings, named as the ``-M`` arguments name them.

    Equal configurations share one engine (``engine_for``); ``chosen_by`` is recorded in
    every output but takes no part in that equality: it changes nothing computed."""

    path: Path
    extra_bufts: bool
    """Whether llama.cpp's extra weight buffers (AMX, repacking) are used."""
    n_ctx: int = DEFAULT_N_CTX
    n_threads: int | None = None
    """None: as many as the machine has cores."""
    prefix_cache_mb: int = DEFAULT_PREFIX_CACHE_MB
    """Memory for saved KV states; 0 turns prefix reuse off."""
    parallel: int = 1
    """Requests decoded together (``engine``); 1 decodes one at a time."""
    chosen_by: str = field(default="", compare=False)
    """What chose ``extra_bufts``: the ``-M`` value, or the probe and its verdict."""

    @classmethod
    def from_model_args(
        cls,
        model_name: str,
        n_ctx: int | str = DEFAULT_N_CTX,
        n_threads: int | str | None = None,
        prefix_cache_mb: int | str = DEFAULT_PREFIX_CACHE_MB,
        extra_bufts: object = "auto",
        parallel: int | str = 1,
        **unknown: object,
    ) -> EngineConfig:
        """The configuration of ``gguf/NAME`` with these ``-M`` arguments; a bad or unknown one
        is one line naming it, before the probe runs."""
        if unknown:
            raise UserError(f"Unknown arguments for the gguf provider: {sorted(unknown)}")
        window = positive_int("n_ctx", n_ctx)  # all checked before the probe runs
        threads = positive_int("n_threads", n_threads) if n_threads is not None else None
        cache_mb = positive_int("prefix_cache_mb", prefix_cache_mb, minimum=0)
        slots = positive_int("parallel", parallel)
        path = resolve_gguf(model_name)
        choice = choose_extra_bufts(extra_bufts, path)
        return cls(
            path=path,
            extra_bufts=choice.extra_bufts,
            n_ctx=window,
            n_threads=threads,
            prefix_cache_mb=cache_mb,
            parallel=slots,
            chosen_by=choice.chosen_by,
        )
