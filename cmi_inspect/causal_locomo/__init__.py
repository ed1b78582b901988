"""Causal-LoCoMo, the eval: its data, protocols, scorers and judge in one folder.

It imports nothing here and none of it imports a strategy, so a strategy can import the
data and view layers; the ``@task`` that joins them to the strategy solvers is
``cmi_inspect.task``, above both. README.md says what the eval measures.
"""
