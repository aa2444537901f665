"""Bag ingest on real bags written with rosbags (MCAP and sqlite3)."""
from __future__ import annotations

import numpy as np
import pytest
from rosbags.rosbag2 import StoragePlugin, Writer

from sim_fidelity.reality_gap import BagError, Spec, read_histories, read_history, write_run
from sim_fidelity.reality_gap.messages import default_message, typestore

STATE = [
    {"name": "x", "topic": "/odom", "type": "nav_msgs/msg/Odometry",
     "field": "pose.pose.position.x"},
    {"name": "pitch", "topic": "/imu", "type": "sensor_msgs/msg/Imu", "field": "orientation",
     "convert": "pitch", "weight": 2.0},
    {"name": "terrain", "topic": "/terrain", "type": "std_msgs/msg/Bool", "field": "data"},
]
ACTION = [
    {"name": "speed", "topic": "/drive", "type": "ackermann_msgs/msg/AckermannDriveStamped",
     "field": "drive.speed", "bins": [0.0, 1.0, 2.0]},
    {"name": "turn", "topic": "/cmd_vel", "type": "geometry_msgs/msg/Twist",
     "field": "angular.z", "values": [-1.0, 0.0, 1.0]},
]
REWARD = {"topic": "/reward", "type": "std_msgs/msg/Float64", "field": "data"}


def make_spec(interpolation: str = "hold", rate: float = 0.5, **extra) -> Spec:
    return Spec.from_dict({"state": STATE, "action": ACTION, "reward": REWARD,
                           "sampling": {"rate_hz": rate, "interpolation": interpolation},
                           **extra})


def run_data(n: int = 8):
    t = np.arange(n) * 2.0  # 0.5 Hz, the paper's logging rate
    states = np.c_[np.arange(n) * 1.5, np.linspace(-0.2, 0.3, n), np.arange(n) % 3 == 1]
    actions = np.c_[np.linspace(0.2, 1.8, n), np.tile([1.0, -1.0], n)[:n]]
    rewards = np.arange(1.0, n)
    return t, states, actions, rewards


@pytest.mark.parametrize("storage", ["mcap", "sqlite3"])
def test_round_trip_with_hold(tmp_path, storage):
    spec = make_spec()
    t, states, actions, rewards = run_data()
    write_run(tmp_path / "run", spec, t, states, actions, rewards, storage=storage)
    h = read_history(tmp_path / "run", spec)
    assert len(h) == len(t) - 1
    np.testing.assert_allclose(h.s, states[:-1], atol=1e-9)
    np.testing.assert_allclose(h.s2, states[1:], atol=1e-9)
    np.testing.assert_allclose(h.u, actions[:-1], atol=1e-6)  # float32 speed
    np.testing.assert_allclose(h.r, rewards)
    np.testing.assert_allclose(h.t, t[:-1])
    # speed bins [0,1), [1,2] x turn values (-1, 0, 1): id = speed_bin * 3 + turn_index
    expected = (actions[:-1, 0] >= 1).astype(int) * 3 + np.where(actions[:-1, 1] > 0, 2, 0)
    np.testing.assert_array_equal(h.a, expected)


def test_several_bags_of_both_storages_are_separate_runs(tmp_path):
    spec = make_spec()
    t, states, actions, rewards = run_data()
    write_run(tmp_path / "a", spec, t, states, actions, rewards, storage="mcap")
    shifted = states[:5] + [10.0, 0.1, 0.0]
    write_run(tmp_path / "b", spec, t[:5] + 100.0, shifted, actions[:5], rewards[:4],
              storage="sqlite3")
    h = read_histories([tmp_path / "a", tmp_path / "b"], spec)
    assert len(h) == 7 + 4
    np.testing.assert_array_equal(h.run, [0] * 7 + [1] * 4)
    # no transition joins the end of one run to the start of the next
    np.testing.assert_allclose(h.s2[6], states[7])
    np.testing.assert_allclose(h.s[7], shifted[0])
    np.testing.assert_allclose(h.track(1), shifted, atol=1e-9)


def test_linear_interpolation_versus_hold(tmp_path):
    """Sampling at 1 Hz a run logged at 0.5 Hz: hold repeats, linear interpolates (except the
    bool terrain flag, which is always held)."""
    t, states, actions, rewards = run_data(5)
    write_run(tmp_path / "run", make_spec(), t, states, actions, rewards)
    hold = read_history(tmp_path / "run", make_spec("hold", rate=1.0))
    linear = read_history(tmp_path / "run", make_spec("linear", rate=1.0))
    mid = (states[:-1] + states[1:]) / 2
    np.testing.assert_allclose(hold.s[1::2], states[:-1])
    np.testing.assert_allclose(linear.s[1::2, :2], mid[:, :2], atol=1e-9)
    np.testing.assert_allclose(linear.s[1::2, 2], states[:-1, 2])
    np.testing.assert_allclose(linear.u, hold.u)  # commands are held in both modes
    # rewards: the sum of the reward messages in (t_k, t_k+1] in either mode
    np.testing.assert_allclose(hold.r[1::2], rewards)
    np.testing.assert_allclose(hold.r[0::2], 0.0)


def test_yaw_is_interpolated_across_the_wrap(tmp_path):
    spec = Spec.from_dict({
        "state": [{"name": "yaw", "topic": "/odom", "type": "nav_msgs/msg/Odometry",
                   "field": "pose.pose.orientation", "convert": "yaw"}],
        "action": ACTION[1:], "sampling": {"rate_hz": 1.0, "interpolation": "linear"}})
    write_run(tmp_path / "run", spec, [0.0, 2.0], [[3.0], [-3.0]], [[0.0], [0.0]])
    h = read_history(tmp_path / "run", spec)
    # halfway from 3 rad to -3 rad the short way round is pi, not 0
    assert abs(abs(h.s2[0, 0]) - np.pi) < 1e-6


def _write_raw(path, topics: dict[str, str], storage=StoragePlugin.MCAP, count: int = 3):
    """A bag with ``count`` default messages on each topic (name -> type)."""
    store = typestore()
    with Writer(path, version=9, storage_plugin=storage) as w:
        for topic, msgtype in topics.items():
            conn = w.add_connection(topic, msgtype, typestore=store)
            for k in range(count):
                w.write(conn, k * 2_000_000_000,
                        store.serialize_cdr(default_message(msgtype), msgtype))


ALL = {"/odom": "nav_msgs/msg/Odometry", "/imu": "sensor_msgs/msg/Imu",
       "/terrain": "std_msgs/msg/Bool", "/drive": "ackermann_msgs/msg/AckermannDriveStamped",
       "/cmd_vel": "geometry_msgs/msg/Twist", "/reward": "std_msgs/msg/Float64"}


def test_missing_topic_names_bag_topic_and_field(tmp_path):
    _write_raw(tmp_path / "bag", {k: v for k, v in ALL.items() if k != "/imu"})
    with pytest.raises(BagError) as err:
        read_history(tmp_path / "bag", make_spec())
    assert (err.value.bag, err.value.topic, err.value.field) == (
        str(tmp_path / "bag"), "/imu", "orientation")
    assert "topic missing" in str(err.value) and str(tmp_path / "bag") in str(err.value)


def test_mismatched_type_names_bag_topic_and_field(tmp_path):
    _write_raw(tmp_path / "bag", {**ALL, "/terrain": "std_msgs/msg/Float64"},
               storage=StoragePlugin.SQLITE3)
    with pytest.raises(BagError) as err:
        read_history(tmp_path / "bag", make_spec())
    assert (err.value.topic, err.value.field) == ("/terrain", "data")
    assert "std_msgs/msg/Bool" in str(err.value) and "std_msgs/msg/Float64" in str(err.value)


@pytest.mark.parametrize("storage", [StoragePlugin.MCAP, StoragePlugin.SQLITE3])
def test_empty_bag(tmp_path, storage):
    _write_raw(tmp_path / "bag", ALL, storage=storage, count=0)
    with pytest.raises(BagError, match="empty") as err:
        read_history(tmp_path / "bag", make_spec())
    assert err.value.bag == str(tmp_path / "bag")


def test_topic_without_messages(tmp_path):
    store = typestore()
    with Writer(tmp_path / "bag", version=9, storage_plugin=StoragePlugin.MCAP) as w:
        for topic, msgtype in ALL.items():
            conn = w.add_connection(topic, msgtype, typestore=store)
            if topic != "/cmd_vel":
                w.write(conn, 0, store.serialize_cdr(default_message(msgtype), msgtype))
    with pytest.raises(BagError, match="no messages") as err:
        read_history(tmp_path / "bag", make_spec())
    assert (err.value.topic, err.value.field) == ("/cmd_vel", "angular.z")


def test_too_short_and_missing_bag(tmp_path):
    _write_raw(tmp_path / "short", ALL, count=1)
    with pytest.raises(BagError, match="less than one sampling period"):
        read_history(tmp_path / "short", make_spec())
    with pytest.raises(BagError, match="cannot open") as err:
        read_history(tmp_path / "nothing_here", make_spec())
    assert err.value.bag == str(tmp_path / "nothing_here")
    with pytest.raises(BagError, match="no bags"):
        read_histories([], make_spec())


def test_undecodable_message_names_bag_topic_and_field(tmp_path):
    """A message whose bytes do not match its declared type (e.g. another definition)."""
    store = typestore()
    with Writer(tmp_path / "bag", version=9, storage_plugin=StoragePlugin.SQLITE3) as w:
        for topic, msgtype in ALL.items():
            conn = w.add_connection(topic, msgtype, typestore=store)
            raw = store.serialize_cdr(default_message(msgtype), msgtype)
            for k in range(3):
                w.write(conn, k * 2_000_000_000, raw[:6] if topic == "/odom" else raw)
    with pytest.raises(BagError, match="cannot decode") as err:
        read_history(tmp_path / "bag", make_spec())
    assert (err.value.topic, err.value.field) == ("/odom", "pose.pose.position.x")
