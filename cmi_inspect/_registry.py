"""Inspect entry point: the task, solvers and scorers (``cmi_inspect/NAME``) and the model
providers (``gguf/``, ``fixed_latency/``), registered when Inspect loads the plugin."""

from inspect_ai.model import ModelAPI, modelapi

from cmi_inspect.judge_audit import judge_calibration
from cmi_inspect.scorers import memory_selection, task_score
from cmi_inspect.solvers import (
    cmi,
    full_history,
    graph_memory,
    memory_strategy,
    no_memory,
    reflection_memory,
    summary_memory,
    vector_memory,
)
from cmi_inspect.task import causal_locomo


@modelapi(name="gguf")
def gguf() -> type[ModelAPI]:
    from cmi_inspect.local_model import GGUFModel

    return GGUFModel


@modelapi(name="fixed_latency")
def fixed_latency() -> type[ModelAPI]:
    from cmi_inspect.latency_model import FixedLatencyModel

    return FixedLatencyModel


__all__ = [
    "causal_locomo",
    "cmi",
    "full_history",
    "graph_memory",
    "judge_calibration",
    "memory_selection",
    "memory_strategy",
    "no_memory",
    "reflection_memory",
    "summary_memory",
    "task_score",
    "vector_memory",
]
