"""The example's own test: one call checks that it keeps the benchmark's contract."""

import pytest
from keyword_memory import KeywordMemory

from cmi_inspect.testing import check_strategy


@pytest.mark.slow  # four runs of the task
def test_keyword_memory_keeps_the_contract():
    check_strategy(KeywordMemory, max_picks=2)
    check_strategy(KeywordMemory, max_picks=1, top_k=1)
