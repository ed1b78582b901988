"""Parameter checks: a bad value is one line naming the parameter and what it takes."""

from __future__ import annotations

import pytest
from cmi_inspect.errors import UserError, name_value_pairs


def test_name_value_pairs_read_each_at_its_first_equals_sign_and_refuse_one_without():
    assert name_value_pairs("-M", ["n_ctx=8192", "stop=a=b"]) == {"n_ctx": "8192", "stop": "a=b"}
    with pytest.raises(UserError, match=r"^-T expects name=value, got 'limit'$"):
        name_value_pairs("-T", ["protocol=blind", "limit"])
