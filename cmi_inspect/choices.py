"""Which intervention scorer and which risk filter CMI runs, and their defaults by protocol.

Kept apart from ``intervention`` (which needs the strategies) so that CMI itself can
resolve names without an import cycle. Every bad name ends in one line naming the choices,
and a choice that reads labels is refused for a blind run before the run starts.
"""

from __future__ import annotations

from inspect_ai.hooks import Hooks, TaskStart, hooks

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


class BlindProtocolError(UserError):
    """A label- or gold-reading choice was asked to run under the blind protocol (one line)."""


def gold_needs_answers(protocol: ProtocolName) -> None:
    """The gold scorer reads the answer key, which the blind protocol forbids: say so."""
    if protocol == "blind":
        raise BlindProtocolError(
            "cmi with -S intervention=gold (the paper's CMI) reads the gold answer "
            "inside its selection loop, which the blind protocol forbids. Run it "
            "with -T protocol=paper, or choose the label-free -S intervention=evidence."
        )


def label_filter_needs_labels(protocol: ProtocolName) -> None:
    """The label risk filter has nothing to read under blind: say so, naming the choices."""
    if protocol == "blind":
        raise BlindProtocolError(
            "risk_filter=label drops memories by their label, which the blind protocol "
            f"hides; choose from {', '.join(f for f in RISK_FILTERS if f != 'label')}."
        )


_built_task_protocols: list[ProtocolName] = []
"""Protocols of the Causal-LoCoMo tasks built since the last ``cmi`` solver was or the last
task started. Inspect builds a run's tasks before the solver named by ``--solver``, so that
solver can refuse a label-reading choice for a blind run once, before any sample starts."""


@hooks(
    name="cmi_inspect_blind_check",
    description="Lets cmi refuse gold-reading choices before a blind run starts",
)
class ForgetStartedTasks(Hooks):
    """Once a task starts its solver is built, so the tasks recorded concern no later one."""

    async def on_task_start(self, data: TaskStart) -> None:
        _built_task_protocols.clear()


def note_task_protocol(protocol: ProtocolName) -> None:
    """Record that a task was built under ``protocol`` (read by the next ``cmi`` solver)."""
    _built_task_protocols.append(protocol)


def refuse_for_blind_tasks(intervention: str | None, risk_filter: str | bool | None) -> None:
    """Refuse ``gold`` or ``label`` before the run when every task just built is blind.

    Tasks of mixed protocols are left to the per-sample check, which names the same choices.
    """
    protocols = set(_built_task_protocols)
    _built_task_protocols.clear()
    if protocols != {"blind"}:
        return
    if intervention_name(intervention) == "gold":
        gold_needs_answers("blind")
    if risk_filter_name(risk_filter) == "label":
        label_filter_needs_labels("blind")
