"""The one kind of error a user's own input causes: printed as one line, never a traceback.

``inspect eval`` prints an error as a short message, with no traceback, only when it is
Inspect's ``PrerequisiteError``; ``cmi-inspect`` prints ``UserError`` the same way. Inspect
exports no public name for that class: it comes through ``inspect_private``, and if a later
Inspect moves it, ``UserError`` still works (``inspect eval`` would then print a traceback;
``tests/causal_locomo/test_causal_locomo.py`` checks the one line).
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection

from rich.markup import escape

from cmi_inspect.inspect_private import PrerequisiteError


class UserError(PrerequisiteError, ValueError):
    """A bad file, parameter or choice, with a message that says which and what to do."""

    def __init__(self, message: str) -> None:
        # Inspect prints the message through Rich: escaped, "cmi-inspect[mem0]" stays as written
        super().__init__(escape(message))
        self.args = (message,)

    def __str__(self) -> str:
        return str(self.args[0])


def choose(kind: str, value: object, choices: Collection[str]) -> str:
    """``value`` if it is one of ``choices``, else a UserError naming them."""
    if value not in tuple(choices):  # a tuple: an unhashable value is simply not one
        raise UserError(f"Unknown {kind} {value!r}; choose from {', '.join(choices)}.")
    return str(value)


def positive_int(name: str, value: object, minimum: int = 1) -> int:
    """An integer parameter of at least ``minimum``, from an int or its text (``-S k=3``)."""
    try:
        number = int(str(value)) if not isinstance(value, bool) else None
    except ValueError:
        number = None
    if number is None or number < minimum:
        raise UserError(f"{name} must be an integer of at least {minimum}, got {value!r}.")
    return number


SampleLimit = int | tuple[int, int]
"""Inspect's ``limit``: the first N samples, or the samples ``start`` to ``stop`` of a
``(start, stop)`` slice."""
LIMIT_RANGE = re.compile(r"\s*(\d+)\s*-\s*(\d+)\s*")


def sample_limit(name: str, value: object, available: int | None = None) -> SampleLimit | None:
    """A ``--limit`` as ``inspect eval`` reads it: N (at least 1) or FIRST-LAST (1-based and
    inclusive, ``301-1176``), as Inspect's int or ``(start, stop)``; never a negative or an
    empty selection, which Inspect would slice silently (``-1`` runs all but the last), nor,
    given the ``available`` samples, a range past their end."""
    if value is None:
        return None
    if isinstance(value, tuple | list) and len(value) == 2:
        value = f"{int(value[0]) + 1}-{int(value[1])}"  # Inspect's (start, stop) slice
    text = str(value)
    if match := LIMIT_RANGE.fullmatch(text):
        first, last = int(match[1]), int(match[2])
        if 1 <= first <= last:
            if available is not None and first > available:
                raise UserError(
                    f"{name} {text.strip()} selects nothing: there are only {available}."
                )
            return first - 1, last
    elif not isinstance(value, bool) and text.strip().isdigit() and int(text) >= 1:
        return int(text)
    raise UserError(
        f"{name} must be a number of samples of at least 1 or a range FIRST-LAST with "
        f"1 <= FIRST <= LAST (such as 301-1176), got {text!r}."
    )


def finite_float(
    name: str, value: object, minimum: float | None = None, maximum: float | None = None
) -> float:
    """A real-number parameter within ``[minimum, maximum]``, from a number or its text
    (``-S tau_u=1e-3`` reaches a solver as the string "1e-3"); never NaN or infinite."""
    low = "-inf" if minimum is None else minimum
    high = "inf" if maximum is None else maximum
    bounds = f" in [{low}, {high}]"
    try:
        number = float(str(value)) if not isinstance(value, bool) else math.nan
    except ValueError:
        number = math.nan
    if (
        not math.isfinite(number)
        or (minimum is not None and number < minimum)
        or (maximum is not None and number > maximum)
    ):
        raise UserError(f"{name} must be a finite number{bounds}, got {value!r}.")
    return number


def flag(name: str, value: object) -> bool:
    """A true/false parameter, from a boolean or its text."""
    text = str(value).strip().lower()
    if text in ("true", "1", "yes"):
        return True
    if text in ("false", "0", "no"):
        return False
    raise UserError(f"{name} must be true or false, got {value!r}.")


def name_value_pairs(flag: str, pairs: list[str]) -> dict[str, str]:
    """``-T`` / ``-M`` arguments as a dict, one line for one without ``=``."""
    args = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise UserError(f"{flag} expects name=value, got {pair!r}")
        args[key] = value
    return args
