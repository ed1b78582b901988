"""llama.cpp's OpenAI-compatible server, run with the embedded engine's choice of buffers.

``python -m cmi_inspect.local_model.serve --model FILE.gguf [--extra-bufts auto|on|off]
[llama_cpp.server's own options]``: the same probe as the in-process provider decides
whether llama.cpp's extra weight buffers (AMX) are used, so the server does not die with
``Illegal instruction`` on a CPU that advertises AMX it cannot run. ``--model`` also takes a
bundled model's name (``smollm2``). With ``CMI_SERVED_API_KEY`` set (and no ``--api_key``)
every request must carry ``Authorization: Bearer`` that key. Started by ``served``, it ends
with the process that started it.
"""

from __future__ import annotations

import argparse
import os
import sys

from cmi_inspect.errors import UserError
from cmi_inspect.local_model.files import resolve_gguf
from cmi_inspect.local_model.llama_private import model_params
from cmi_inspect.local_model.probe import choose_extra_bufts
from cmi_inspect.local_model.served import API_KEY_ENV, follow_parent


def main(argv: list[str]) -> int:
    follow_parent()
    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    parser.add_argument("--extra-bufts", default="auto")
    parser.add_argument("--model", required=True)
    ours, rest = parser.parse_known_args(argv)
    try:
        model = resolve_gguf(ours.model)
        choice = choose_extra_bufts(ours.extra_bufts, model)
    except UserError as ex:
        print(f"serve: {ex}", file=sys.stderr)
        return 2
    print(
        f"llama.cpp extra buffers: {'on' if choice.extra_bufts else 'off'} ({choice.chosen_by})",
        file=sys.stderr,
        flush=True,
    )
    from llama_cpp.server.__main__ import main as serve

    key = os.environ.get(API_KEY_ENV)
    if key and "--api_key" not in rest:
        rest += [f"--api_key={key}"]  # one token: a key may start with "-"; argv only here
    sys.argv = ["llama_cpp.server", "--model", str(model), *rest]
    with model_params(choice.extra_bufts):  # every model the server loads
        serve()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
