"""``cmi-inspect build-xl``: Causal-LoCoMo-XL built from LoCoMo."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

NAME = "build-xl"
HELP = "build Causal-LoCoMo-XL from LoCoMo"


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("out_dir", type=Path)
    parser.add_argument(
        "--xl-version", type=int, choices=(4, 3, 2), default=4, help="4 (default), 3 or 2"
    )
    parser.add_argument(
        "--inline-banks",
        action="store_true",
        help="v3 and v4: also write every example with its whole bank inline, in the release's "
        "schema (causal_locomo_xl_inline.jsonl, for audits)",
    )


def run(args: argparse.Namespace) -> int:
    from cmi_inspect.errors import UserError
    from cmi_inspect.paths import writable_dir
    from cmi_inspect.xl import BUILDERS, locomo_path

    if args.inline_banks and args.xl_version == 2:
        raise UserError("--inline-banks is v3's and v4's: v2 writes every bank inline already.")
    writable_dir(args.out_dir, "XL build")  # before the build, not after it
    build = BUILDERS[args.xl_version]
    inline = {"inline": True} if args.inline_banks else {}
    manifest = build(locomo_path(), args.out_dir, **inline)
    print(json.dumps(manifest, indent=2))
    return 0
