"""``cmi-inspect audit``: how well surface artefacts of a view give its labels away."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

NAME = "audit"
HELP = "how well surface artefacts give labels away"


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dataset", default="release", help="release (default) or xl")
    parser.add_argument("--data-file", help="a JSONL file in the release's schema instead")
    parser.add_argument("--protocol", default="blind", help="the view: blind (default) or paper")
    parser.add_argument("--json", action="store_true", help="print the AUCs as one JSON object")
    parser.add_argument(
        "--conflicts",
        action="store_true",
        help="also the share of bank pairs CMI's conflict relation flags, by label pair (runs e5)",
    )


def run(args: argparse.Namespace) -> int:
    from cmi_inspect.causal_locomo.audit import audit, audit_items
    from cmi_inspect.causal_locomo.dataset import dataset_path
    from cmi_inspect.causal_locomo.files import load_records
    from cmi_inspect.causal_locomo.protocol import named_protocol
    from cmi_inspect.report.audits import artefact_table

    protocol = named_protocol(args.protocol).name
    path = Path(args.data_file) if args.data_file else dataset_path(args.dataset)
    items = audit_items(load_records(path), protocol)
    result: dict[str, Any] = audit(items)
    title = f"{path.name}, {protocol} view"
    text = artefact_table(result, title)
    if args.conflicts:
        from cmi_inspect.strategies.cmi.conflict_audit import conflict_shares, conflict_table

        result["conflicts"] = conflict_shares(items)
        text += "\n" + conflict_table(result["conflicts"])
    print(json.dumps(result) if args.json else text)
    return 0
