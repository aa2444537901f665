"""Periodic state components (angles that wrap at +-pi): the spec key, the distance, node
matching, the kernel lookup grid, kernel fits across the wrap and the bag ingest."""
from __future__ import annotations

import math

import numpy as np
import pytest

from sim_fidelity.reality_gap import (
    History,
    KernelSet,
    Spec,
    SpecError,
    distance,
    generate,
    load_spec,
    match_nodes,
    read_history,
    write_run,
)
from sim_fidelity.reality_gap.kernels import Kernel
from sim_fidelity.reality_gap.transitions import wrap_angle

PI = math.pi
ODOM = {"topic": "/odom", "type": "nav_msgs/msg/Odometry"}
IMU = {"topic": "/imu", "type": "sensor_msgs/msg/Imu", "field": "orientation"}
ACTION = [{"name": "v", "topic": "/cmd", "type": "geometry_msgs/msg/Twist", "field": "linear.x",
           "values": [1.0]}]


def spec(state: list[dict], **sections) -> Spec:
    return Spec.from_dict({"state": state, "action": ACTION, **sections})


def heading_spec(periodic: bool = True, **sections) -> Spec:
    """x from odometry and a heading (a plain numeric field) that wraps."""
    return spec([{"name": "x", **ODOM, "field": "pose.pose.position.x", "weight": 1.0},
                 {"name": "h", **ODOM, "field": "pose.pose.orientation.z", "weight": 1.0,
                  **({"periodic": True} if periodic else {})}], **sections)


def test_the_spec_declares_periodic_components_and_keeps_old_hashes():
    yaw = {"name": "yaw", **IMU, "convert": "yaw"}
    plain, wrapped = spec([yaw]), spec([{**yaw, "periodic": True}])
    assert plain.periodic.tolist() == [False] and wrapped.periodic.tolist() == [True]
    assert "periodic" not in plain.raw["state"][0] and wrapped.raw["state"][0]["periodic"]
    assert spec([{**yaw, "periodic": False}]).hash == plain.hash != wrapped.hash
    ugv = load_spec("config/reality_gap/ackermann_ugv.yaml")
    assert dict(zip(ugv.state_names, ugv.periodic.tolist())) == {
        "x": False, "y": False, "yaw": True, "pitch": False}


@pytest.mark.parametrize("entry, words", [
    ({"name": "yaw", **IMU, "convert": "yaw", "periodic": "yes"}, "must be true or false"),
    ({"name": "p", **IMU, "convert": "pitch", "periodic": True}, "never wraps"),
    ({"name": "x", "topic": "/fix", "type": "sensor_msgs/msg/NavSatFix", "convert": "east",
      "origin": "o", "periodic": True}, "distance in metres"),
    ({"name": "t", "topic": "/t", "type": "std_msgs/msg/Bool", "field": "data",
      "periodic": True}, "a bool"),
])
def test_periodic_on_what_cannot_wrap_is_an_error_naming_the_component(entry, words):
    origins = {"o": {"latitude": 41.0, "longitude": -73.0, "altitude": 0.0}}
    with pytest.raises(SpecError, match=words) as err:
        spec([entry], origins=origins)
    assert f"'{entry['name']}'" in str(err.value)


def test_periodic_on_an_action_is_an_error():
    with pytest.raises(SpecError, match=r"action\[0\]: 'periodic' is for state components"):
        Spec.from_dict({"state": [{"name": "x", **ODOM, "field": "pose.pose.position.x"}],
                        "action": [{**ACTION[0], "periodic": True}]})


def test_the_distance_goes_the_short_way_round():
    w, mask = np.array([1.0, 0.5]), np.array([False, True])
    a, b = np.array([0.0, PI - 0.05]), np.array([0.0, -PI + 0.05])
    assert distance(a, b, w, mask) == pytest.approx(0.05)
    assert distance(a, b, w) == pytest.approx(0.5 * (2 * PI - 0.1))  # not declared: the long way
    assert distance(np.array([0.0, 3 * PI]), np.array([0.0, -PI]), w, mask) == pytest.approx(0.0)


def test_states_either_side_of_the_wrap_share_a_node_centred_on_the_wrap():
    rng = np.random.default_rng(0)
    h = wrap_angle(PI + rng.uniform(-0.2, 0.2, 200))  # both signs, all within 0.2 of +-pi
    states = np.c_[rng.uniform(0.0, 0.1, 200), h]
    w = np.array([1.0, 1.0])
    nodes, ids = match_nodes(states, w, 1.0, periodic=np.array([False, True]))
    assert len(nodes) == 1 and (ids == 0).all()
    assert abs(nodes.centres[0, 1]) > PI - 0.05  # the circular mean, not the mean (near 0)
    split, _ = match_nodes(states, w, 1.0)  # undeclared, the two signs are 2 pi apart
    assert len(split) == 2
    only_angles, _ = match_nodes(h[:, None], np.ones(1), 1.0, periodic=np.array([True]))
    assert len(only_angles) == 1  # every component periodic: no sorting axis


def kernel_set(member: list[float], sigma: float, periodic: bool = True) -> KernelSet:
    s = heading_spec(periodic, kernels={"sigma": sigma, "activation_threshold": 0.5})
    transfer = np.array([[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.5]])  # h' = h + 0.5
    k = Kernel(centre=np.array(member), members=np.array([member]), sigma=sigma,
               divergence=(0.5, 0.5), support=1, transfer=transfer, samples=2)
    return KernelSet([k], s)


@pytest.mark.parametrize("sigma", [0.05, 0.4, 2.2])  # many cells round, a few, one
def test_a_kernel_at_the_wrap_is_found_from_the_other_side(sigma):
    reach = sigma * math.sqrt(2 * math.log(2))
    ks = kernel_set([0.0, PI - 0.01], sigma)
    state = np.array([0.0, -PI + reach / 2])  # 0.01 + reach / 2 from the member, across
    hit = ks.lookup(state, np.array([1.0]))
    assert hit is not None and hit[0] == 0
    # the map sees the heading next to the centre's and the result is wrapped
    assert hit[1][1] == pytest.approx(wrap_angle(state[1] + 0.5))
    assert ks.active(state[None]).tolist() == [0]
    assert ks.activation(state)[0] > 0.5
    far = np.array([0.0, -PI + 1.15 * reach - 0.01])  # 1.15 reach from the member
    assert ks.lookup(far, np.array([1.0])) is None and ks.active(far[None]).tolist() == [-1]
    assert kernel_set([0.0, PI - 0.01], sigma, periodic=False).lookup(
        state, np.array([1.0])) is None  # undeclared: 2 pi away


def circling(real: bool, runs: int, rng: np.random.Generator) -> History:
    """A heading that turns 0.3 rad per step from random starts; in reality it turns 0.9 rad
    per step where it starts within 0.35 rad of +-pi (x stays 0)."""
    parts = []
    for i in range(runs):
        h = [rng.uniform(-PI, PI)]
        for _ in range(20):
            fast = real and abs(wrap_angle(h[-1] - PI)) < 0.35
            h.append(float(wrap_angle(h[-1] + (0.9 if fast else 0.3))))
        s = np.c_[np.zeros(21), h]
        parts.append(History(s[:-1], np.ones((20, 1)), np.zeros(20, dtype=np.int64),
                             np.zeros(20), s[1:], np.arange(20) * 2.0, np.full(20, i)))
    return History.concatenate(parts)


def test_a_gap_across_the_wrap_makes_one_kernel_that_predicts_both_sides():
    rng = np.random.default_rng(1)
    sim, real = circling(False, 150, rng), circling(True, 150, rng)
    s = heading_spec(distance={"eps_c": 0.15}, rollouts={"count": 300, "max_steps": 30},
                     kernels={"sigma": 0.15, "activation_threshold": 0.5})
    gen = generate(sim, real, s, seed=0)
    assert gen.summary.kernels == 1, gen.summary  # one region linked across the wrap
    ks = KernelSet(gen.kernels, s)
    for h in (PI - 0.2, -PI + 0.2):
        hit = ks.lookup(np.array([0.0, h]), np.array([1.0]))
        assert hit is not None
        # reality's turn (0.9), not the simulation's (0.3); nodes at the region's edges
        # mix both, so the one linear map is not exact
        assert abs(wrap_angle(hit[1][1] - (h + 0.9))) < 0.2, (h, hit[1])
        assert gen.kernels[0].predict(np.array([0.0, h]), np.array([1.0]), s.periodic)[1] \
            == pytest.approx(hit[1][1])


def test_linear_sampling_of_a_periodic_field_goes_through_the_wrap(tmp_path):
    s = heading_spec(sampling={"rate_hz": 2.0, "interpolation": "linear"})
    times = np.arange(5) * 1.0  # written at 1 Hz, read at 2 Hz: midpoints interpolated
    h = wrap_angle(3.0 + 0.2 * np.arange(5))  # 3.0, 3.2 -> -3.08, ...
    write_run(tmp_path / "run", s, times, np.c_[np.zeros(5), h], np.ones((5, 1)))
    got = read_history(tmp_path / "run", s)
    mid = got.s[1, 1]  # halfway between 3.0 and 3.2 (wrapped), not through 0
    assert mid == pytest.approx(3.1)
    assert got.s2[2, 1] == pytest.approx(wrap_angle(3.3))
