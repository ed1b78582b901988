"""llama.cpp's OpenAI-compatible server, run with the embedded engine's choice of buffers.

``python -m cmi_inspect.local_model.serve --model FILE.gguf [--extra-bufts auto|on|off]
[llama_cpp.server's own options]``: the same probe as the in-process provider decides
whether llama.cpp's extra weight buffers (AMX) are used, so the server does not die with
``Illegal instruction`` on a CPU that advertises AMX it cannot run.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cmi_inspect.local_model.llamacpp import model_params
from cmi_inspect.local_model.probe import choose_extra_bufts


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--extra-bufts", default="auto")
    parser.add_argument("--model", required=True)
    ours, rest = parser.parse_known_args(argv)
    choice = choose_extra_bufts(ours.extra_bufts, Path(ours.model))
    print(
        f"llama.cpp extra buffers: {'on' if choice.extra_bufts else 'off'} ({choice.chosen_by})",
        file=sys.stderr,
        flush=True,
    )
    from llama_cpp.server.__main__ import main as serve

    sys.argv = ["llama_cpp.server", "--model", ours.model, *rest]
    with model_params(choice.extra_bufts):  # every model the server loads
        serve()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
