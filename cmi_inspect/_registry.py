"""Inspect entry point: registers the model providers, importing nothing heavy."""

from inspect_ai.model import ModelAPI, modelapi


@modelapi(name="gguf")
def gguf() -> type[ModelAPI]:
    from cmi_inspect.local_model import GGUFModel

    return GGUFModel


@modelapi(name="fixed_latency")
def fixed_latency() -> type[ModelAPI]:
    from cmi_inspect.latency_model import FixedLatencyModel

    return FixedLatencyModel
