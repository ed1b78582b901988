"""Causal-LoCoMo, the eval: its data, protocols, scorers and judge in one folder.

None of its modules imports a strategy, so a strategy can import the data and view layers;
the ``@task`` that joins them to the strategy solvers is ``cmi_inspect.task``, above both.
The eval's two tasks, ``causal_locomo`` and ``judge_calibration``, are exported here and
load on first use (PEP 562), so importing this package loads neither. README.md says what
the eval measures; eval.yaml is its entry for the Inspect Evals register.
"""

from __future__ import annotations

import importlib
from typing import Any

_MODULES = {  # by name, on first use: the task sits above this package and its strategies
    "causal_locomo": "cmi_inspect.task",
    "judge_calibration": "cmi_inspect.causal_locomo.judge_audit",
}
"""Each task's module."""

__all__ = ["causal_locomo", "judge_calibration"]  # noqa: F822 (served by __getattr__)


def __getattr__(name: str) -> Any:
    """A task, imported from its module on first use."""
    if name not in _MODULES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_MODULES[name]), name)
    globals()[name] = value
    return value
