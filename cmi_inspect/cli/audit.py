"""``cmi-inspect audit``: how well surface artefacts give labels away."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cmi_inspect.causal_locomo.data import ExampleRecord

NAME = "audit"
HELP = "how well surface artefacts give labels away"


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dataset", default="release", help="release (default) or xl")
    parser.add_argument("--data-file", help="a JSONL file in the release's schema instead")
    parser.add_argument("--protocol", default="blind", help="the view: blind (default) or paper")
    parser.add_argument("--json", action="store_true", help="print the AUCs as one JSON object")
    parser.add_argument(
        "--form",
        action="store_true",
        help="the form audit: surface features of harmful against useful memories, each and "
        "together (a logistic regression cross-validated by conversation), then their "
        "relations to the question and the bank (gradient-boosted trees, one conversation out)",
    )
    parser.add_argument(
        "--bank-size", type=int, help="draw each bank down to N memories, as -T bank_size does"
    )
    parser.add_argument(
        "--examples",
        type=Path,
        metavar="FILE",
        help="only these examples (one id a line, as docs/results/xl5-examples.txt)",
    )
    parser.add_argument(
        "--no-e5",
        action="store_true",
        help="XL v5: leave out the e5 rows (e5 embeds every turn once, minutes on two cores)",
    )
    parser.add_argument(
        "--conflicts",
        action="store_true",
        help="also the share of bank pairs CMI's conflict relation flags, by label pair (runs e5)",
    )


def run(args: argparse.Namespace) -> int:
    from cmi_inspect.causal_locomo.bank_size import check_bank_size, smaller_bank
    from cmi_inspect.causal_locomo.data_files import load_records
    from cmi_inspect.causal_locomo.dataset import dataset_path
    from cmi_inspect.causal_locomo.protocol import named_protocol
    from cmi_inspect.errors import UserError

    protocol = named_protocol(args.protocol).name
    size = check_bank_size(args.bank_size)
    path = Path(args.data_file) if args.data_file else dataset_path(args.dataset)
    records = load_records(path)
    if args.examples is not None:
        records = only_examples(records, args.examples)
    if size:
        records = [smaller_bank(r, size) for r in records]
    if not args.form and not size and _is_v5(records):
        from cmi_inspect.causal_locomo.xl.audit import audit_table, xl_audit
        from cmi_inspect.causal_locomo.xl.locomo import load_locomo, locomo_path

        convs = {c.sample_id: c for c in load_locomo(locomo_path())}
        xl = xl_audit(records, convs, e5=not args.no_e5)
        print(json.dumps(xl) if args.json else audit_table(xl, f"{path.name}: XL v5 audit"))
        return 0
    if args.form:
        from cmi_inspect.causal_locomo.form_audit import form_audit, form_items
        from cmi_inspect.causal_locomo.relational_audit import (
            relational_audit,
            relational_features,
            relational_table,
        )
        from cmi_inspect.report.audits import form_table

        labelled = form_items(records)
        form = form_audit(labelled)
        form["relational"] = relational_audit(labelled, relational_features(records))
        title = f"{path.name}: form, harmful against useful"
        text = form_table(form, title) + "\n" + relational_table(form["relational"])
        print(json.dumps(form) if args.json else text)
        return 0
    if not size and any(len(r.memory_bank) > 100 for r in records):
        raise UserError(
            f"{path.name} holds banks of hundreds of memories (XL v3's stores): the artefact "
            "audit reads every pair of them; give --bank-size N (8, say), or run --form."
        )
    from cmi_inspect.causal_locomo.audit import audit, audit_items
    from cmi_inspect.report.audits import artefact_table

    items = audit_items(records, protocol)
    result: dict[str, Any] = audit(items)
    text = artefact_table(result, f"{path.name}, {protocol} view")
    if args.conflicts:
        from cmi_inspect.causal_locomo.strategies.cmi.conflict_audit import (
            conflict_shares,
            conflict_table,
        )

        result["conflicts"] = conflict_shares(items)
        text += "\n" + conflict_table(result["conflicts"])
    print(json.dumps(result) if args.json else text)
    return 0


def _is_v5(records: list[Any]) -> bool:
    """The records are XL v5's (its metadata names each example's group)."""
    return bool(records) and all(
        "group" in (r.model_extra or {}).get("metadata", {}) for r in records
    )


def only_examples(records: list[ExampleRecord], path: Path) -> list[ExampleRecord]:
    """The records whose example id ``path`` lists, one a line (one line for an unknown id)."""
    from cmi_inspect.errors import UserError

    try:
        wanted = {line.strip() for line in path.read_text(encoding="utf-8").splitlines()} - {""}
    except OSError as ex:
        raise UserError(f"--examples {path}: {ex.strerror or ex}.") from None
    unknown = sorted(wanted - {r.example_id for r in records})
    if unknown:
        raise UserError(
            f"--examples {path}: {len(unknown)} ids are not in the data (first {unknown[0]})."
        )
    return [r for r in records if r.example_id in wanted]
