"""Inspect entry point: the task, strategy solvers and scorers (``cmi_inspect/NAME``) and the model
providers (``gguf/``, ``fixed_latency/``), registered when Inspect loads the plugin."""

from inspect_ai.model import ModelAPI, modelapi

from cmi_inspect.causal_locomo.causal_locomo import causal_locomo
from cmi_inspect.causal_locomo.judge_audit import judge_calibration
from cmi_inspect.causal_locomo.scorers import memory_selection, task_score
from cmi_inspect.causal_locomo.strategies.solvers import STRATEGY_SOLVERS, memory_strategy


@modelapi(name="gguf")
def gguf() -> type[ModelAPI]:
    from cmi_inspect.local_model import GGUFModel

    return GGUFModel


@modelapi(name="fixed_latency")
def fixed_latency() -> type[ModelAPI]:
    from cmi_inspect.latency_model import FixedLatencyModel

    return FixedLatencyModel


__all__ = [
    "STRATEGY_SOLVERS",
    "causal_locomo",
    "judge_calibration",
    "memory_selection",
    "memory_strategy",
    "task_score",
]
