"""A pre-registered subset of XL: so many examples of each group from every conversation,
the first in the data file's order (which interleaves families and, within a conversation,
follows a hash of the id: it says nothing of a label or a result).

    python -m cmi_inspect.causal_locomo.xl.subset --confirmed 4 --control 4 \
        --unanswerable 1 > ids.txt
"""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Mapping, Sequence

from cmi_inspect.causal_locomo.data import ExampleRecord
from cmi_inspect.causal_locomo.xl.assemble import GROUPS
from cmi_inspect.errors import UserError


def subset(records: Sequence[ExampleRecord], per_conversation: Mapping[str, int]) -> list[str]:
    """The ids of the first ``per_conversation[group]`` examples of each group of every
    conversation, in the records' order; a conversation with fewer gives what it has."""
    unknown = sorted(set(per_conversation) - set(GROUPS))
    if unknown:
        raise UserError(f"No XL group {unknown[0]!r}: the groups are {', '.join(GROUPS)}.")
    taken: Counter[tuple[str, str]] = Counter()
    ids = []
    for record in records:
        group = str((record.model_extra or {}).get("metadata", {}).get("group", ""))
        key = (record.example_id.split("_")[0], group)
        if taken[key] < per_conversation.get(group, 0):
            taken[key] += 1
            ids.append(record.example_id)
    return ids


def main(argv: Sequence[str] | None = None) -> None:
    from cmi_inspect.causal_locomo.data_files import load_records
    from cmi_inspect.causal_locomo.xl.assemble import xl_path

    parser = argparse.ArgumentParser(prog="python -m cmi_inspect.causal_locomo.xl.subset")
    for group in GROUPS:
        parser.add_argument(
            f"--{group}", type=int, default=0, help=f"{group} examples a conversation"
        )
    args = parser.parse_args(argv)
    counts = {g: getattr(args, g) for g in GROUPS}
    records = [r for r in load_records(xl_path()) if r.model_extra]
    print("\n".join(subset(records, counts)))


if __name__ == "__main__":
    main()
