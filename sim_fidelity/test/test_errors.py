"""One error root: every exception class the package defines derives from SimFidelityError."""
from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import sim_fidelity
from sim_fidelity.errors import SimFidelityError
from sim_fidelity.fidelity_manager.errors import LevelError, UnknownNameError
from sim_fidelity.fidelity_manager.levels import parse_level
from sim_fidelity.fidelity_manager.signalers import signaler_class
from sim_fidelity.reality_gap.errors import SpecError
from sim_fidelity.reality_gap.messages import field_type
from sim_fidelity.world_generators.errors import WorldGenerationError
from sim_fidelity.world_generators.truck import layout


def package_exceptions() -> dict[str, type[BaseException]]:
    """Every public exception class defined in a module of sim_fidelity, by qualified name."""
    found = {}
    for info in pkgutil.walk_packages(sim_fidelity.__path__, "sim_fidelity."):
        module = importlib.import_module(info.name)
        for name, cls in inspect.getmembers(module, inspect.isclass):
            if (issubclass(cls, BaseException) and cls.__module__ == info.name
                    and not name.startswith("_")):
                found[f"{info.name}.{name}"] = cls
    return found


def test_every_package_error_derives_from_the_root():
    errors = package_exceptions()
    assert "sim_fidelity.simulator.errors.SdfError" in errors
    assert "sim_fidelity.reality_gap.errors.BagError" in errors
    # Interrupted is how a signal unwinds a run (a KeyboardInterrupt), not an error
    outside = sorted(name for name, cls in errors.items()
                     if not issubclass(cls, (SimFidelityError, KeyboardInterrupt)))
    assert not outside, f"not under SimFidelityError: {outside}"


@pytest.mark.parametrize(("call", "error", "message"), [
    (lambda: parse_level("highest"), LevelError, "bad level 'highest': expected one of"),
    (lambda: signaler_class("nope"), UnknownNameError, "unknown signaler type 'nope' (known: "),
    (lambda: field_type("nav_msgs/msg/Odometry", "pose.nope"), SpecError,
     "'geometry_msgs/msg/PoseWithCovariance' has no field 'nope'"),
    (lambda: layout("D"), WorldGenerationError, "truck world: unknown scenario 'D'"),
], ids=["level", "signaler", "message field", "scenario"])
def test_api_errors_are_typed_and_say_what_and_where(call, error, message):
    with pytest.raises(error) as raised:
        call()
    assert isinstance(raised.value, SimFidelityError)
    assert message in str(raised.value)
