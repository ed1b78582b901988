"""The probe's child process: load a model with llama.cpp's extra buffers, decode a long
prompt, exit 0. A CPU that cannot run them kills this process, never the eval's."""

from __future__ import annotations

import sys
from pathlib import Path

from cmi_inspect.local_model.llamacpp import LlamaCpp
from cmi_inspect.local_model.probe import PROBE_TOKENS

SENTENCE = "The quick brown fox jumps over the lazy dog while the band plays on."


def main(argv: list[str]) -> int:
    llm = LlamaCpp(Path(argv[0]), n_ctx=2 * PROBE_TOKENS, n_threads=None, extra_bufts=True)
    text = SENTENCE
    while len(llm.tokenize(text)) < PROBE_TOKENS:
        text += " " + SENTENCE
    llm.complete([{"role": "user", "content": text}], max_tokens=4, stop=None)
    llm.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
