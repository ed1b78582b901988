"""Refuse a label-reading CMI for a blind run before the run starts (no log, one line).

``-T protocol=blind`` reaches the task factory, ``-S intervention=gold`` the solver
factory, and nothing else of ours runs before Inspect opens the run's log: Inspect calls
hooks (``on_task_start`` included) after the log is written and turns an exception a hook
raises into a warning, and a task's ``setup`` runs per sample. So the task records its
protocol here and the ``cmi`` solver factory reads it: Inspect builds a run's tasks
before the solver named by ``--solver``, as ``eval(task(...), solver=cmi(...))`` does in
Python. Whatever this misses (tasks built after the solver, as in ``cmi-inspect run``, or
of mixed protocols) the per-sample refusal catches, with the same line, once the run has
started.
"""

from __future__ import annotations

from inspect_ai.hooks import Hooks, TaskStart, hooks

from cmi_inspect.strategies.cmi.rules import Choices, CMIConfig
from cmi_inspect.view import ProtocolName

_built_task_protocols: list[ProtocolName] = []
"""Protocols of the Causal-LoCoMo tasks built since the last ``cmi`` solver was or the
last task started."""


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


def refuse_for_blind_tasks(config: CMIConfig) -> None:
    """Refuse a label-reading intervention scorer or risk filter when every task just
    built is blind. The oracle ablation is left to the per-sample refusal, so that a run
    of every ablation under blind still runs the others."""
    protocols = set(_built_task_protocols)
    _built_task_protocols.clear()
    if protocols != {"blind"}:
        return
    choices = Choices.of(config, "blind")
    for choice in (choices.scorer, choices.risk):
        choices.profile.allow(choice.refused_under_blind)
