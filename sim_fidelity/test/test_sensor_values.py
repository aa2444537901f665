"""Settable sensor values: declared in SDF, computed from regions, overridden and released —
in process on the engine, and over ROS through sim_server and RosSimulator."""
import math

import numpy as np
import pytest
from ros_processes import CLIENT_TIMEOUT_S, next_domain, settles, start_node, stop, wait_for
from topic_listener import Listener

from sim_fidelity.simulator import Lever
from sim_fidelity.simulator.engine import MujocoEngine
from sim_fidelity.simulator.errors import InvalidOperationError, SdfError, UnknownEntityError
from sim_fidelity.simulator.sensor_values import SensorValues
from sim_fidelity.world_generators.one_d_track import ROBOT, TERRAIN, TERRAIN_TOPIC, track_world


def at(engine: MujocoEngine, x: float) -> None:
    engine.set_states([ROBOT], np.array([[x, 0, 0, 0, 0, 0, 1.0]]))


def test_regions_give_the_computed_value():
    engine = MujocoEngine.from_string(track_world([(2.0, 3.0), (5.0, 6.5)]))
    table = SensorValues(engine)
    assert table.names == [TERRAIN] and table.sensors[0].topic == TERRAIN_TOPIC
    for x, expected in ((1.9, 0), (2.0, 1), (2.5, 1), (3.1, 0), (6.4, 1), (7.0, 0)):
        at(engine, x)
        assert table.value(TERRAIN) == expected, x


def test_override_holds_until_released_and_bool_is_coerced():
    engine = MujocoEngine.from_string(track_world([(2.0, 3.0)]))
    table = SensorValues(engine)
    at(engine, 0.5)
    table.set_sensor_values([TERRAIN], [0.8])  # a bool sensor stores 0/1
    assert table.value(TERRAIN) == 1.0 and table.computed()[0] == 0.0
    at(engine, 2.5)
    table.set_sensor_values([TERRAIN], [0.2])
    engine.step(3)
    assert table.value(TERRAIN) == 0.0 and table.computed()[0] == 1.0
    table.set_sensor_values([TERRAIN], [math.nan])
    assert table.value(TERRAIN) == 1.0
    with pytest.raises(UnknownEntityError, match="not a value sensor"):
        table.set_sensor_values(["robot::link::nothing"], [1.0])
    with pytest.raises(UnknownEntityError, match="nothing"):  # a known name beside: unchanged
        table.set_sensor_values([TERRAIN, "robot::link::nothing"], [0.0, 1.0])
    assert table.value(TERRAIN) == 1.0 and np.isnan(table.overrides).all()
    with pytest.raises(InvalidOperationError, match="1 names but 2 values"):
        table.set_sensor_values([TERRAIN], [1.0, 0.0])


def test_double_sensor_without_regions_is_a_constant():
    sdf = track_world().replace('type="bool" default="0"', 'type="double" default="0.25"')
    table = SensorValues(MujocoEngine.from_string(sdf))
    assert table.values().tolist() == [0.25]
    table.set_sensor_values([TERRAIN], [0.7])
    assert table.value(TERRAIN) == pytest.approx(0.7)


@pytest.mark.parametrize("change, message", [
    (('type="bool"', 'type="int"'), "type must be one of"),
    (('2 -1 -1 3 1 1', '3 -1 -1 2 1 1'), "region 0 must be"),
    (('2 -1 -1 3 1 1', '2 -1 -1 x 1 1'), "not a number"),
    (('<region value="1">', '<box value="1">'), "only <region>"),
])
def test_bad_declarations_name_the_sensor(change, message):
    sdf = track_world([(2.0, 3.0)]).replace(*change)
    if change[0] == '<region value="1">':
        sdf = sdf.replace("</region>", "</box>")
    with pytest.raises(SdfError, match=message) as err:
        SensorValues(MujocoEngine.from_string(sdf))
    assert TERRAIN in str(err.value)


def test_sim_server_publishes_and_overrides_sensor_values(tmp_path):
    pytest.importorskip("sim_fidelity_interfaces.srv", reason="interface packages not built")
    from std_msgs.msg import Bool

    from sim_fidelity.simulator.ros.client import RosSimulator
    world = tmp_path / "track.sdf"
    world.write_text(track_world([(2.0, 3.0)]))
    domain = next_domain()
    proc = start_node("sim_fidelity.simulator.ros.server",
                      {"world": world, "paused": True, "publish_rate": 20.0}, domain,
                      tmp_path / "sim_server.log")
    sim = RosSimulator(domain_id=domain, timeout=CLIENT_TIMEOUT_S)
    listener = Listener(domain, {TERRAIN_TOPIC: Bool})
    try:
        sim.wait_for_server(60.0)

        def reads(value: bool) -> bool:  # a fresh message carries the value
            listener.latest.pop(TERRAIN_TOPIC, None)
            return wait_for(lambda: (m := listener.latest.get(TERRAIN_TOPIC)) is not None
                            and m.data is value, 60.0)

        assert reads(False)
        sim.set_states([ROBOT], np.array([[2.5, 0, 0, 0, 0, 0, 1.0]]))
        assert reads(True)
        sim.set_sensor_values([TERRAIN], [0.0])
        assert reads(False)
        sim.set_sensor_values([TERRAIN], [math.nan])
        assert reads(True)
        with pytest.raises(UnknownEntityError):
            sim.set_sensor_values(["robot::link::nothing"], [1.0])
        sim.set_lever([TERRAIN], Lever.SENSOR, False)  # a disabled sensor is not published
        assert settles(lambda: len(listener.received[TERRAIN_TOPIC])), \
            "a disabled sensor is still published"
        sim.set_lever([TERRAIN], Lever.SENSOR, True)
        assert reads(True)
        assert proc.poll() is None
    finally:
        listener.close()
        sim.close()
        stop(proc)
