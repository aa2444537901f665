"""The state spec: validation against message types, defaults, discretisation, hashing."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from sim_fidelity.reality_gap import Spec, SpecError, load_spec

CONFIG = Path(__file__).resolve().parents[1] / "config" / "reality_gap"
ODOM_X = {"name": "x", "topic": "/odom", "type": "nav_msgs/msg/Odometry",
          "field": "pose.pose.position.x"}
TWIST_V = {"name": "v", "topic": "/cmd", "type": "geometry_msgs/msg/Twist", "field": "linear.x",
           "values": [-1.0, 0.0, 1.0]}


def spec_of(state=(ODOM_X,), action=(TWIST_V,), **extra) -> Spec:
    return Spec.from_dict({"state": list(state), "action": list(action), **extra})


@pytest.mark.parametrize("name", ["one_d_track.yaml", "ackermann_ugv.yaml"])
def test_example_specs_load(name):
    spec = load_spec(CONFIG / name)
    assert spec.n_actions == len(spec.action_values()) > 1
    assert Spec.from_dict(spec.raw).hash == spec.hash  # the normalised form is a fixed point


def test_defaults_and_hash():
    spec = spec_of()
    assert (spec.rate_hz, spec.interpolation, spec.sigma) == (0.5, "hold", spec.eps_c)
    assert spec.hash == spec_of(sampling={"rate_hz": 0.5}).hash  # explicit default: same hash
    assert spec.hash != spec_of(distance={"eps_c": 0.2}).hash


def test_discretise_values_and_bins():
    binned = dict(TWIST_V, values=None, bins=[0.0, 1.0, 3.0])
    del binned["values"]
    spec = spec_of(action=(TWIST_V, dict(binned, name="w", field="angular.z")))
    np.testing.assert_allclose(spec.action_grids[1], [0.5, 2.0])  # bin centres
    u = np.array([[-0.9, -5.0], [0.2, 0.99], [0.6, 1.0], [7.0, 9.0]])
    # nearest value for v; bins for w with out-of-range values in the end bins
    np.testing.assert_array_equal(spec.discretise(u), [0, 2, 5, 5])
    np.testing.assert_allclose(spec.action_values()[5], [1.0, 2.0])
    assert spec.discretise(np.array([0.1, 0.5])) == 2


@pytest.mark.parametrize("entry, message, field", [
    (dict(ODOM_X, field="pose.pose.position.q"), "has no field 'q'", "pose.pose.position.q"),
    (dict(ODOM_X, field="pose.pose.position"), "not a number", "pose.pose.position"),
    (dict(ODOM_X, convert="pitch"), "needs a geometry_msgs/msg/Quaternion", "pose.pose.position.x"),
    (dict(ODOM_X, field="pose.covariance"), "arrays are not supported", "pose.covariance"),
    (dict(ODOM_X, type="nav_msgs/msg/Odometer"), "unknown message type", "pose.pose.position.x"),
])
def test_bad_state_fields_name_topic_and_field(entry, message, field):
    with pytest.raises(SpecError, match=message) as err:
        spec_of(state=(entry,))
    assert (err.value.topic, err.value.field) == ("/odom", field)
    assert "/odom" in str(err.value)


@pytest.mark.parametrize("raw, message", [
    ({"state": [ODOM_X], "action": [dict(TWIST_V, bins=[0, 1])]}, "exactly one of"),
    ({"state": [ODOM_X], "action": [dict(TWIST_V, values=[1, 0])]}, "strictly increasing"),
    ({"state": [ODOM_X], "action": []}, "non-empty"),
    ({"state": [ODOM_X, ODOM_X], "action": [TWIST_V]}, "unique"),
    ({"state": [ODOM_X], "action": [TWIST_V], "sampling": {"interpolation": "cubic"}},
     "interpolation"),
    ({"state": [ODOM_X], "action": [TWIST_V], "kernels": {"sigmaa": 1}}, "unknown key"),
    ({"state": [ODOM_X], "action": [TWIST_V], "apply": [{"state": "q", "entity": "r",
                                                          "component": "pose.x"}]}, "apply"),
    ({"state": [ODOM_X], "action": [TWIST_V], "apply": [{"state": "x", "entity": "r",
                                                          "component": "pose.w"}]}, "apply"),
    ({"state": [ODOM_X], "action": [TWIST_V], "apply": [{"state": "x", "entity": "r::l::s",
                                                          "component": "value",
                                                          "hold": "forever"}]},
     r"apply\[0\]: 'hold'"),
    ({"state": [ODOM_X], "action": [TWIST_V], "apply": [{"state": "x", "entity": "r",
                                                          "component": "pose.x",
                                                          "hold": "period"}]},
     r"apply\[0\]: 'hold' is for 'value' targets"),
    ({"state": [ODOM_X], "action": [TWIST_V], "rewards": {}}, "unknown section"),
    ({"state": [dict(ODOM_X, weight=0)], "action": [TWIST_V]}, "at least one > 0"),
    ({"state": [dict(ODOM_X, weight=-1)], "action": [TWIST_V]}, "weights must be >= 0"),
])
def test_bad_specs(raw, message):
    with pytest.raises(SpecError, match=message):
        Spec.from_dict(raw)


def test_load_spec_names_file(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("state: [\n")
    with pytest.raises(SpecError, match="bad.yaml"):
        load_spec(path)


def test_a_value_target_holds_while_active_unless_it_says_period():
    apply = [{"state": "x", "entity": "r::l::a", "component": "value"},
             {"state": "x", "entity": "r::l::b", "component": "value", "hold": "period"}]
    spec = Spec.from_dict({"state": [ODOM_X], "action": [TWIST_V], "apply": apply})
    assert [t.hold for t in spec.apply] == ["while_active", "period"]
    assert "hold" not in spec.raw["apply"][0] and spec.raw["apply"][1]["hold"] == "period"
    assert Spec.from_dict(spec.raw).hash == spec.hash  # the normalised form round-trips
