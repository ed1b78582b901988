"""Causal-LoCoMo and Causal Memory Intervention (CMI) for Inspect AI."""
