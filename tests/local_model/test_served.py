"""The embedded model served on loopback: started once per file and window, stopped after."""

from __future__ import annotations

import json
import urllib.request

import pytest
from cmi_inspect.local_model import resolve_gguf, served


@pytest.mark.slow  # starts llama.cpp's server in a subprocess
def test_one_server_per_model_and_window_answering_on_loopback():
    path = resolve_gguf("smollm2")
    first = served.served_model(path, 2048, extra_bufts=False)
    try:
        assert first.url.startswith("http://127.0.0.1:") and first.model == served.ALIAS
        assert served.served_model(path, 2048, extra_bufts=False) == first  # reused, not restarted
        with urllib.request.urlopen(f"{first.url}/models", timeout=10) as response:
            assert [m["id"] for m in json.load(response)["data"]] == [served.ALIAS]
    finally:
        process, _ = served._servers[(str(path), 2048, False)]
        served._stop(process)
    assert process.returncode is not None
    with pytest.raises(RuntimeError, match="exited with status"):
        served.served_model(path, 2048, extra_bufts=False)
    del served._servers[(str(path), 2048, False)]
