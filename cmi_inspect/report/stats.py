"""A mean with its standard error, from a log's own metrics or from per-sample values."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass
class Mean:
    mean: float
    stderr: float
    n: int

    @classmethod
    def of(cls, values: Sequence[float]) -> Mean:
        """Mean and standard error (sample variance) of per-sample values."""
        n = len(values)
        mean = sum(values) / n if n else math.nan
        if n < 2:
            return cls(mean, math.nan, n)
        var = sum((v - mean) ** 2 for v in values) / (n - 1)
        return cls(mean, math.sqrt(var / n), n)


def fmt(value: float | None, digits: int = 3) -> str:
    return "-" if value is None or math.isnan(value) else f"{value:.{digits}f}"


def plus_minus(m: Mean) -> str:
    return fmt(m.mean) if math.isnan(m.stderr) else f"{m.mean:.3f} ± {m.stderr:.3f}"
