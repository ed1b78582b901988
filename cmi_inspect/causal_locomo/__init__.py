"""Causal-LoCoMo, the eval, in one folder as Inspect Evals lays one out.

Its data, protocols, scorers and judge; XL's builder (``xl/``); the memory strategies and
their strategy solvers (``strategies/``); and on top the ``@task``, ``causal_locomo.py``,
which no other module of the folder imports. The eval's two tasks, ``causal_locomo`` and
``judge_calibration``, are exported here. README.md says what the eval measures; eval.yaml
is its entry for the Inspect Evals register.
"""

from cmi_inspect.causal_locomo.causal_locomo import causal_locomo
from cmi_inspect.causal_locomo.judge_audit import judge_calibration

__all__ = ["causal_locomo", "judge_calibration"]
