"""The signaler parameter kind ``name`` (joint_command's ``joint``): a non-empty string passes
as given; an empty one or one that is not a string is refused with the key named and a message
that says a non-empty name was expected and shows the value."""
from __future__ import annotations

import pytest

from sim_fidelity.fidelity_manager.errors import ParamError
from sim_fidelity.fidelity_manager.signalers.base import Param, check_params

DECLARED = {"joint": Param("name", help="scoped joint")}


def test_a_non_empty_name_passes_as_given():
    assert check_params(DECLARED, {"joint": "arm::elbow"}) == {"joint": "arm::elbow"}


@pytest.mark.parametrize("value", ["", 5, 0, None, ["arm::elbow"]])
def test_an_empty_or_non_string_name_is_refused_naming_the_key(value):
    with pytest.raises(ParamError) as err:
        check_params(DECLARED, {"joint": value})
    assert err.value.key == "joint"
    assert str(err.value) == f"expected a non-empty name, got {value!r}"
