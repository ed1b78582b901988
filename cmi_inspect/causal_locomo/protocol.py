"""The benchmark's protocols: every fact that tells ``paper`` and ``blind`` apart, in one place.

A protocol says what a strategy may read of a sample (``view.memory_view`` shows what
``label_free`` allows), how the task score counts success unless ``-T scoring=`` says
otherwise, and whether a choice that reads the answer key may run. ``Protocol.refuse`` is
the one rule for that last fact: every check calls it, before a run (``BuiltTasks``), per
sample (CMI's choices) and where the gold answer is read (CMI's gold scorer).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from inspect_ai.hooks import Hooks, TaskStart

from cmi_inspect.errors import UserError, choose

ProtocolName = Literal["paper", "blind"]


class BlindProtocolError(UserError):
    """A label- or gold-reading choice was asked to run under a label-free protocol (one line)."""


@dataclass(frozen=True)
class Protocol:
    """What one protocol lets a strategy read, and how its runs are scored by default."""

    name: ProtocolName
    label_free: bool
    """Nothing of the answer key reaches a strategy: it sees each memory's content and
    timestamp under an opaque key, the release's label artefacts removed, and a choice that
    reads labels or the gold answer is refused. Otherwise it sees what the reference run
    showed: each memory's id, content, scope and label."""
    scoring: str
    """How the task score counts success by default (``scorers.SCORINGS``)."""

    def permits(self, refusal: str | None) -> bool:
        """Whether a choice may run here; ``refusal``: why a label-free protocol refuses it,
        as the user reads it (None: it reads nothing a protocol hides)."""
        return refusal is None or not self.label_free

    def refuse(self, refusal: str | None) -> None:
        """Raise ``refusal`` as one line unless ``permits``."""
        if not self.permits(refusal):
            raise BlindProtocolError(str(refusal))


PROTOCOLS: dict[ProtocolName, Protocol] = {
    p.name: p
    for p in (
        Protocol("paper", label_free=False, scoring="paper"),
        # a hedge across several values is no success: a label-free run is scored as strictly
        # as it is read
        Protocol("blind", label_free=True, scoring="strict"),
    )
}
"""``-T protocol=``: the protocols by name, the reference's first."""


def named_protocol(name: object) -> Protocol:
    """The protocol called ``name``; one line naming the protocols for any other."""
    chosen = choose("protocol", name, tuple(PROTOCOLS))
    return next(p for p in PROTOCOLS.values() if p.name == chosen)


def logged_protocol(name: object) -> Protocol | None:
    """The protocol a log names, None for a name no protocol has (an edited task's)."""
    return next((p for p in PROTOCOLS.values() if p.name == name), None)


class BuiltTasks:
    """The protocols of the Causal-LoCoMo tasks built since a solver was last built or a run
    last started: the tasks the next solver is built for.

    It is how a solver factory can refuse a label-reading choice before a blind run starts
    (no log, one line). ``-T protocol=`` reaches only the task factory and ``-S`` only the
    solver factory, and nothing else of ours runs before Inspect writes the run's log: its
    hooks run after that and turn what they raise into warnings, and a task's ``setup`` runs
    per sample. Inspect builds a run's tasks before the solver named by ``--solver``, and
    ``eval(task(...), solver=s(...))`` does the same in Python, so the task notes its
    protocol here and the next solver factory takes the record (``for_solver``). A run that
    starts ends the record (the ``on_task_start`` hook ``_registry`` registers calls
    ``started``): its tasks have their solver, whichever was built first, so a solver built
    after it is for tasks built after it. What this cannot know (a solver built before its
    tasks, tasks of several protocols) is left to the per-sample check, with the same line,
    once the run has started.

    The record belongs to the benchmark, not to one strategy: the task notes a protocol
    without knowing which strategies exist, and any strategy's solver reads it
    (``MemoryStrategy.check_protocol``).
    """

    def __init__(self) -> None:
        self._protocols: list[ProtocolName] = []

    def built(self, name: ProtocolName) -> None:
        """A task was built under protocol ``name``."""
        self._protocols.append(name)

    def for_solver(self) -> Protocol | None:
        """The protocol of every task built since (None: no task, or tasks of several), for
        the solver being built; the record is then empty: those tasks have their solver."""
        names = set(self._protocols)
        self._protocols.clear()
        return PROTOCOLS[names.pop()] if len(names) == 1 else None

    def started(self) -> None:
        """A run started: the tasks recorded have their solver, whichever was built first."""
        self._protocols.clear()


BUILT_TASKS = BuiltTasks()
"""The process's record: Inspect builds tasks and solvers in the process that runs them."""


class RunStarted(Hooks):
    """Ends ``BUILT_TASKS``'s record when a run starts (``_registry`` registers it)."""

    async def on_task_start(self, data: TaskStart) -> None:
        BUILT_TASKS.started()
