"""Which logged runs a selector may be fitted or chosen on: none with a sample from a
conversation kept for test.

The gate reads each sample's conversation from its data (the LoCoMo conversation its
example id names, ``dataset.conversation_of``), not from the run's arguments: a run given
those conversations' examples by ``-T data_file=``, a whole-XL run, and a run of the release
(whose examples come from the same ten conversations) are refused alike when a sample comes
from a held-out conversation. ``forbidden_conversations`` is the one place that says which
conversations a fit may not read: ``HELD_OUT`` for a fit that is not cross-fitted, the
held-out conversation for a fold of cross-fitting (``crossfit``), which reads every other
conversation of its logs and only what ``readable`` lets through. A data file of one's own
whose ids name no LoCoMo conversation is its own: its samples are read as conversations of
their own.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, TypeVar

from inspect_ai.log import EvalLog, EvalSample

from cmi_inspect.causal_locomo.dataset import conversation_of
from cmi_inspect.errors import UserError
from cmi_inspect.eval_logs import log_files, read_log

HELD_OUT = ("conv-41", "conv-47")
"""The conversations XL v2 kept for test, which the shipped learned selector was fitted and
chosen without (``strategies/cmi/selectors``); a fit that is not cross-fitted reads none
of them until the selector is refitted on XL v5 by cross-fitting (docs/xl.md)."""


def forbidden_conversations(fold: str | None = None) -> list[str]:
    """The conversations a fit may not read, sorted: for the fold of cross-fitting that
    holds out ``fold``, that conversation (each conversation is tested by the one fold that
    never reads it); otherwise ``HELD_OUT``, whatever data file a run read them from."""
    if fold is not None:
        return [fold]
    return sorted(HELD_OUT)


class FromConversation(Protocol):
    @property
    def conversation(self) -> str: ...


Sample = TypeVar("Sample", bound=FromConversation)


def readable(samples: Sequence[Sample], fold: str) -> list[Sample]:
    """The samples the fold holding out ``fold`` may read: none of a conversation
    ``forbidden_conversations(fold)`` names. A fold's fit and choice see only these."""
    forbidden = set(forbidden_conversations(fold))
    return [s for s in samples if s.conversation not in forbidden]


def sample_conversation(sample: EvalSample) -> str:
    """The conversation a logged sample comes from: the LoCoMo conversation its example id
    names, else the example id itself (a data file of one's own)."""
    example_id = str((sample.metadata or {}).get("example_id") or sample.id)
    return conversation_of(example_id) or example_id


def check_fittable(log: EvalLog) -> None:
    """One line naming the log, unless none of its samples comes from a conversation a fit
    may not read (``forbidden_conversations``)."""
    forbidden = set(forbidden_conversations())
    found = Counter(c for s in log.samples or [] if (c := sample_conversation(s)) in forbidden)
    if found:
        which = ", ".join(f"{c} ({n})" for c, n in sorted(found.items()))
        raise UserError(
            f"{log.location} holds samples of conversations the data set keeps for test "
            f"({which}): a selector is fitted and chosen without them (cross-fit by "
            "conversation with --cross-fit, or fit on runs of the other conversations)."
        )


def fitting_logs(log_dir: str | Path, cross_fit: bool = False) -> list[EvalLog]:
    """The logs of a folder (or one log file), headers only: a run on the ``test`` split is
    refused here, one with a test conversation's sample once its samples are read
    (``check_fittable``), unless they are read for cross-fitting, where each fold is kept
    from its held-out conversation instead (``readable``); a path that holds no readable
    log is one line."""
    path = Path(log_dir)
    if not path.exists():
        raise UserError(f"{log_dir} does not exist: name a folder of CMI logs.")
    found = [path.as_posix()] if path.is_file() else log_files(str(path))
    logs = []
    for location in found:
        header = read_log(location, header_only=True)
        if not cross_fit and header.eval.task_args.get("split") == "test":
            raise UserError(
                f"{location} is a run on the test split: a selector is fitted on train and "
                "chosen on dev, never on test."
            )
        logs.append(header)
    if not logs:
        raise UserError(f"No log in {log_dir}.")
    return logs
