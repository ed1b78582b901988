"""``gguf/NAME``: the Inspect model provider over the in-process engine."""

from __future__ import annotations

import threading
from typing import Any

import anyio
from inspect_ai.log import transcript
from inspect_ai.model import (
    ChatMessage,
    GenerateConfig,
    ModelAPI,
    ModelCall,
    ModelInfo,
    ModelOutput,
    ModelUsage,
    set_model_info,
)
from inspect_ai.tool import ToolChoice, ToolInfo
from pydantic import JsonValue

from cmi_inspect.extras import require
from cmi_inspect.local_model.capability import FORCED_DECODING
from cmi_inspect.local_model.config import EngineConfig
from cmi_inspect.local_model.engine import Engine, engine_for
from cmi_inspect.local_model.files import gguf_identity
from cmi_inspect.local_model.served import ServedModel, served_model

DEFAULT_MAX_TOKENS = 128
_NO_CONFIG = GenerateConfig()


def template_message(role: str, text: str) -> dict[str, str]:
    """One message as the chat template takes it (a tool's result is read as the user's)."""
    return {"role": role if role != "tool" else "user", "content": text}


def as_chat(input: list[ChatMessage]) -> list[dict[str, str]]:
    """Inspect's messages as the role/content dicts of the model's chat template."""
    return [template_message(m.role, m.text) for m in input]


def reply_text(response: dict[str, Any]) -> str:
    """The engine's reply, stripped of the whitespace the template leaves around it."""
    return (response["choices"][0]["message"]["content"] or "").strip()


def engine_choice(settings: EngineConfig) -> dict[str, Any]:
    """What every output records of the engine that ran: its buffers, its batching, and
    what chose each."""
    return {
        "extra_bufts": settings.extra_bufts,
        "chosen_by": settings.chosen_by,
        "parallel": settings.parallel,
        "batch_kv": settings.batch_kv,
        "batching_by": settings.batching_by,
    }


class GGUFModel(ModelAPI):
    """Greedy (temperature 0) chat completion on a local GGUF model.

    ``-M extra_bufts=auto`` (the default) probes once per machine whether llama.cpp's
    extra weight buffers (AMX) run here and turns them off where they crash (``probe``);
    ``on`` / ``off`` force the choice. Every output's metadata says which ran.
    ``-M parallel=auto`` (the default) decodes up to four concurrent requests together,
    batching only the rows the batch probe finds computed as alone (``batch_probe``), so
    the completions are those of one slot; ``-M parallel=N`` forces N slots batching every
    row, ``parallel=1`` one request at a time. The ``-M`` arguments are read and checked by
    ``EngineConfig.from_model_args``, the one place that declares them.
    """

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = _NO_CONFIG,
        **model_args: Any,
    ) -> None:
        require("local", f"--model gguf/{model_name}", "llama_cpp")
        self.engine_config = EngineConfig.from_model_args(model_name, **model_args)
        # Inspect keys its model-call cache on the base URL: make it the file's identity
        # (and the engine configuration, where it differs from the default), so a different
        # GGUF file under the same name, batches that may change answers or another thread
        # count (a long prompt's answer depends on it) never read another model's answers
        settings = self.engine_config
        identity = (
            gguf_identity(settings.path)
            + ("" if settings.extra_bufts else ":no-extra-bufts")
            + ("" if settings.exact_batches else f":batched-{settings.parallel}")
            + f":threads-{settings.threads}"
        )
        super().__init__(model_name, base_url or identity, api_key, [], config)
        set_model_info(
            f"gguf/{model_name}",
            ModelInfo(context_length=settings.n_ctx, output_tokens=settings.n_ctx),
        )

    @property
    def engine(self) -> Engine:
        return engine_for(self.engine_config)

    def served(self, n_ctx: int, chat_format: str | None = None) -> ServedModel:
        """This model's file and extra-buffers choice behind an OpenAI-compatible endpoint on
        loopback with an ``n_ctx`` window (``served``), for code that speaks only that API
        (the LLM of mem0, LangMem, Graphiti); ``chat_format`` is llama.cpp's (None: the
        file's own template)."""
        return served_model(
            self.engine_config.path, n_ctx, self.engine_config.extra_bufts, chat_format
        )

    def max_tokens(self) -> int | None:
        return DEFAULT_MAX_TOKENS

    def max_connections(self) -> int:
        return self.engine_config.parallel

    async def count_text_tokens(self, text: str) -> int:
        return self.engine.text_tokens(text)

    async def count_tokens(
        self, input: str | list[ChatMessage], config: GenerateConfig | None = None
    ) -> int:
        if isinstance(input, str):
            return await self.count_text_tokens(input)
        return self.engine.prompt_tokens(as_chat(input))

    async def continuation_logprobs(
        self, input: list[ChatMessage], continuations: list[str]
    ) -> list[list[float]]:
        """Per token, the log-probability of each continuation as the model's whole reply
        to ``input`` (forced decoding: nothing is generated), its end-of-turn included; the
        sample's transcript records it (``FORCED_DECODING``), so a run's cost counts it."""
        messages = as_chat(input)
        scores: list[list[float]] = await anyio.to_thread.run_sync(
            self.engine.continuation_logprobs, messages, continuations
        )
        prompt = self.engine.prompt_tokens(messages)  # as count_tokens counts a chat
        record: dict[str, JsonValue] = {
            "prompt_tokens": prompt,
            "continuation_tokens": sum(map(len, scores)),
        }
        transcript().info({FORCED_DECODING: record}, source=FORCED_DECODING)
        return scores

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> tuple[ModelOutput, ModelCall]:
        messages = as_chat(input)
        max_tokens = config.max_tokens or DEFAULT_MAX_TOKENS
        settings = self.engine_config
        chosen = engine_choice(settings)
        request = {
            "model": str(settings.path.name),
            "messages": messages,
            "max_tokens": max_tokens,
            "engine": chosen,
        }
        engine = self.engine
        # a cancelled sample (Ctrl-C, a time limit) stops waiting at once and tells the
        # engine, which ends the completion at its next token or never starts it
        cancel = threading.Event()
        try:
            response = await anyio.to_thread.run_sync(
                engine.chat, messages, max_tokens, config.stop_seqs, cancel, abandon_on_cancel=True
            )
        except anyio.get_cancelled_exc_class():
            cancel.set()
            raise
        choice = response["choices"][0]
        usage = response["usage"]
        output = ModelOutput.from_content(
            model=self.model_name,
            content=reply_text(response),
            stop_reason="max_tokens" if choice.get("finish_reason") == "length" else "stop",
        )
        output.usage = ModelUsage(
            input_tokens=usage["prompt_tokens"],
            output_tokens=usage["completion_tokens"],
            total_tokens=usage["total_tokens"],
        )
        output.metadata = {"llama_cpp": chosen}
        return output, ModelCall.create(request, response)
