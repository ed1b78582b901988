"""Inspect scorers of the benchmark, registered under bare names (see ``solvers``)."""

from scorers.causal_locomo import memory_selection, task_score

__all__ = ["memory_selection", "task_score"]
