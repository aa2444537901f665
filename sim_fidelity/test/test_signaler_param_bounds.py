"""Signaler parameter kinds at their bounds (issue 20's finite numbers and counts >= 1, issue
18's choice of clocks): the smallest count passes, the one below is refused, a non-finite number
or an unknown choice is refused with a message that names the value
(test_fidelity_signaler_params.py has the other kinds)."""
from __future__ import annotations

import math

import pytest

from sim_fidelity.fidelity_manager.errors import ParamError
from sim_fidelity.fidelity_manager.signalers.base import Param, check_params


def test_a_count_of_one_is_the_smallest_accepted():
    assert check_params({"n": Param("count")}, {"n": 1}) == {"n": 1}
    assert check_params({"n": Param("count")}, {"n": 2}) == {"n": 2}


@pytest.mark.parametrize("value", [0, -3])
def test_a_count_below_one_is_refused(value):
    with pytest.raises(ParamError) as info:
        check_params({"still_steps": Param("count")}, {"still_steps": value})
    assert info.value.key == "still_steps"
    assert str(info.value).startswith(f"expected an integer >= 1, got {value}"), str(info.value)


@pytest.mark.parametrize("kind", ["float", "nonneg", "vec3"])
@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_non_finite_numbers_are_refused(kind, value):
    given = [1.0, value, 1.0] if kind == "vec3" else value
    with pytest.raises(ParamError) as info:
        check_params({"r": Param(kind)}, {"r": given})
    assert info.value.key == "r"
    assert str(info.value).startswith(f"expected a finite number, got {value!r}"), str(info.value)


def test_a_choice_takes_one_of_its_options_and_names_them_when_refused():
    assert check_params({"still_clock": Param("clock")}, {"still_clock": "ticks"}) == \
        {"still_clock": "ticks"}
    assert check_params({"still_clock": Param("clock")}, {"still_clock": "steps"}) == \
        {"still_clock": "steps"}
    with pytest.raises(ParamError) as info:
        check_params({"still_clock": Param("clock")}, {"still_clock": "seconds"})
    assert info.value.key == "still_clock"
    assert str(info.value).startswith("expected one of steps, ticks, got 'seconds'"), \
        str(info.value)
