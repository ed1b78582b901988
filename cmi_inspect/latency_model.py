"""A model provider that answers after a fixed delay, to time orchestration rather than inference.

``--model fixed_latency/0.5`` waits 0.5 s per call (the model name is the
delay in seconds) and answers with the first note of a memory prompt, or "I
do not know." without one, so memory strategies still change its answers. It counts
tokens as words.
"""

from __future__ import annotations

from typing import Any

import anyio
from inspect_ai.model import ChatMessage, GenerateConfig, ModelAPI, ModelOutput, ModelUsage
from inspect_ai.tool import ToolChoice, ToolInfo

from cmi_inspect.causal_locomo.prompts import note_contents
from cmi_inspect.errors import UserError
from cmi_inspect.text import word_count

_NO_CONFIG = GenerateConfig()


def scripted_answer(prompt: str) -> str:
    """The first memory note of the prompt, or a refusal when it has none."""
    notes = note_contents(prompt)
    return notes[0] if notes else "I do not know."


class FixedLatencyModel(ModelAPI):
    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = _NO_CONFIG,
        **model_args: Any,
    ) -> None:
        super().__init__(model_name, base_url, api_key, [], config)
        try:
            self.delay = float(model_name)
        except ValueError:
            raise UserError(
                f"fixed_latency model name must be a delay in seconds, got {model_name!r}."
            ) from None

    def max_connections(self) -> int:
        return 64

    async def count_text_tokens(self, text: str) -> int:
        """Its tokens are words, as its usage counts them: no tokenizer to download, so a
        long history (XL v3's) is fitted to its window offline too."""
        return word_count(text)

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        await anyio.sleep(self.delay)
        prompt = "\n".join(m.text for m in input)
        answer = scripted_answer(prompt)
        output = ModelOutput.from_content(model=self.model_name, content=answer)
        n_in, n_out = word_count(prompt), word_count(answer)
        output.usage = ModelUsage(input_tokens=n_in, output_tokens=n_out, total_tokens=n_in + n_out)
        return output
