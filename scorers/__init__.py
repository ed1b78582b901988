"""Inspect scorers of the benchmark, registered under bare names (see ``solvers``)."""

from scorers.causal_locomo import family_score, memory_selection, task_score

__all__ = ["family_score", "memory_selection", "task_score"]
