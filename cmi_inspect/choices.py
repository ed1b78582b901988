"""Which intervention scorer and which risk filter CMI runs, and their defaults by protocol.

Kept apart from ``intervention`` (which needs the strategies) so that CMI itself can
resolve names without an import cycle. Every bad name ends in one line naming the choices.
"""

from __future__ import annotations

from cmi_inspect.errors import UserError, choose
from cmi_inspect.view import ProtocolName

INTERVENTION_SCORERS = ("gold", "evidence")
"""``gold``: the deterministic score against the answer key (paper); ``evidence``:
agreement with the agent's own history (label-free)."""
DEFAULT_INTERVENTION: dict[ProtocolName, str] = {"paper": "gold", "blind": "evidence"}
RISK_FILTERS = ("label", "evidence", "none")
"""``label``: drop memories labelled harmful (paper); ``evidence``: drop a memory that
conflicts with a candidate the history supports better (label-free); ``none``."""
DEFAULT_RISK_FILTER: dict[ProtocolName, str] = {"paper": "label", "blind": "evidence"}


def intervention_name(value: str | None) -> str | None:
    """The intervention scorer's name from ``-S intervention=`` (None: the protocol's default)."""
    return None if value is None else choose("intervention scorer", value, INTERVENTION_SCORERS)


def risk_filter_name(value: str | bool | None) -> str | None:
    """The risk filter's name from ``-S risk_filter=``; booleans as before (True: the
    protocol's default, False: ``none``), None: the protocol's default."""
    if isinstance(value, bool):
        return None if value else "none"
    return None if value is None else choose("risk filter", value, RISK_FILTERS)


def label_filter_needs_labels(protocol: ProtocolName) -> None:
    """The label risk filter has nothing to read under blind: say so, naming the choices."""
    if protocol == "blind":
        raise UserError(
            "risk_filter=label drops memories by their label, which the blind protocol "
            f"hides; choose from {', '.join(f for f in RISK_FILTERS if f != 'label')}."
        )
