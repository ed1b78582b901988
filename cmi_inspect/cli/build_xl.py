"""``cmi-inspect build-xl``: Causal-LoCoMo-XL built from LoCoMo."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

NAME = "build-xl"
HELP = "build Causal-LoCoMo-XL from LoCoMo"


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("out_dir", type=Path)


def run(args: argparse.Namespace) -> int:
    from cmi_inspect.paths import writable_dir
    from cmi_inspect.xl import build_xl, locomo_path

    writable_dir(args.out_dir, "XL build")  # before the build, not after it
    manifest = build_xl(locomo_path(), args.out_dir)
    print(json.dumps(manifest, indent=2))
    return 0
