"""Causal-LoCoMo-XL v4 (docs/xl.md)."""
