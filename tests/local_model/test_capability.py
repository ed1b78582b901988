"""Forced decoding, asked for by type: which providers offer it."""

from __future__ import annotations

from cmi_inspect.local_model import GGUFModel
from cmi_inspect.local_model.capability import ContinuationLogprobs, continuation_scorer
from inspect_ai.model import get_model


def test_the_gguf_provider_scores_continuations(probe_verdict):
    model = get_model("gguf/smollm2", memoize=False, parallel=1)  # no engine is loaded to ask
    assert isinstance(model.api, GGUFModel) and continuation_scorer(model) is model.api
    assert issubclass(GGUFModel, ContinuationLogprobs)


def test_inspects_providers_do_not():
    assert continuation_scorer(get_model("mockllm/model", memoize=False)) is None
    # what ``cmi-inspect run --serve`` and an OpenAI-compatible server are reached through
    served = get_model("openai-api/cmi-served/smollm2", base_url="http://127.0.0.1:9/v1", api_key="k", memoize=False)
    assert continuation_scorer(served) is None
