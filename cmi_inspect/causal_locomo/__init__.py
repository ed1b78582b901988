"""Causal-LoCoMo, the eval: its data, protocols, task, scorers and judge in one folder.

It imports nothing here, so a strategy can import the data and view layers without loading
the task (which imports every strategy's solver). README.md says what the eval measures.
"""
