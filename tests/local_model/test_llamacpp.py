"""The llama-cpp-python adapter: the model parameters a load sees."""

from __future__ import annotations

import llama_cpp.llama_cpp as lib
import pytest
from cmi_inspect.local_model.llamacpp import build_identity, model_params


@pytest.mark.parametrize("extra_bufts", [True, False])
def test_a_load_inside_the_block_sees_the_chosen_buffers_and_the_default_comes_back(extra_bufts):
    default = lib.llama_model_default_params
    with model_params(extra_bufts):
        assert lib.llama_model_default_params().use_extra_bufts is extra_bufts
    assert lib.llama_model_default_params is default
    assert lib.llama_model_default_params().use_extra_bufts is True


def test_the_build_identity_names_the_version_features_and_library_file():
    import llama_cpp

    identity = build_identity()
    assert identity["version"] == llama_cpp.__version__
    assert identity["system_info"] == llama_cpp.llama_print_system_info().decode().strip()
    assert identity["library"].startswith("libllama")
