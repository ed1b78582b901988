"""``cmi-inspect build-xl``: Causal-LoCoMo-XL built from LoCoMo and the shipped verdicts."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

NAME = "build-xl"
HELP = "build Causal-LoCoMo-XL from LoCoMo"


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("out_dir", type=Path)
    parser.add_argument(
        "--inline-banks",
        action="store_true",
        help="also write every example with its whole store inline, in the release's schema "
        "(causal_locomo_xl_inline.jsonl, for audits)",
    )


def run(args: argparse.Namespace) -> int:
    from cmi_inspect.causal_locomo.xl import build_xl, locomo_path
    from cmi_inspect.paths import writable_dir

    writable_dir(args.out_dir, "XL build")  # before the build, not after it
    manifest = build_xl(locomo_path(), args.out_dir, inline=args.inline_banks)
    print(json.dumps(manifest, indent=2))
    return 0
