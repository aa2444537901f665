"""Snapshots over ROS: sim_server keeps them (``~/save_snapshot``, ``~/restore_snapshot``,
``~/drop_snapshot``), RosSimulator uses them; restore-then-step repeats the trajectory bit for
bit, and bad ids and requests get clear errors and change nothing. One sim_server process on a
small truck world (packets, the robot and its scripts) for the module."""
from __future__ import annotations

import numpy as np
import pytest
from ros_processes import paused_sim_server

from sim_fidelity.simulator import EntityKind, InvalidOperationError, Lever
from sim_fidelity.simulator.ros.snapshot_store import MAX_SNAPSHOTS
from sim_fidelity.simulator.snapshot import ServerSnapshot

pytest.importorskip("sim_fidelity_interfaces.srv", reason="interface packages not built")


@pytest.fixture(scope="module")
def sim(small_wall, tmp_path_factory):
    with paused_sim_server(small_wall, tmp_path_factory.mktemp("snapshot_ros"),
                           ready="save_snapshot") as (client, _, _):
        yield client


def _packets(sim) -> list[str]:
    return sim.entities(EntityKind.MODEL, r"^packet_\d+$")


def test_restore_then_step_is_bit_for_bit_over_ros(sim):
    assert sim.features().snapshots
    packets = _packets(sim)
    # one packet thrown back against the others: contacts all along
    sim.set_states(packets[:1], twists=np.array([[-1.5, 0.0, 1.5, 0.0, 2.0, 0.0]]))
    sim.step(40)
    snap = sim.snapshot()
    assert snap.time == pytest.approx(sim.time) and snap.id >= 1

    def run() -> np.ndarray:
        sim.step(30)
        sim.set_lever(packets[-2:], Lever.DYNAMICS, False)
        sim.set_lever(packets[-2:], Lever.COLLISION, False)
        sim.step(30)
        return np.concatenate(sim.get_states([*packets, "unloader"]), axis=1)

    first = run()
    sim.restore(snap)
    assert sim.time == pytest.approx(snap.time, abs=1e-9)  # /clock counts whole nanoseconds
    assert sim.get_lever(packets[-2:], Lever.DYNAMICS).all()
    assert sim.get_lever(packets[-2:], Lever.COLLISION).all()
    assert np.array_equal(run(), first)
    sim.restore(snap)  # kept: restored again
    assert sim.time == pytest.approx(snap.time, abs=1e-9)
    sim.drop_snapshot(snap)


def test_bad_snapshot_requests_get_clear_errors_and_change_nothing(sim):
    packets = _packets(sim)
    sim.step(5)
    before, t = np.concatenate(sim.get_states(packets), axis=1), sim.time
    with pytest.raises(InvalidOperationError, match=r"no snapshot 999999 on this server"):
        sim.restore(ServerSnapshot(time=0.0, world="", id=999999, server="/sim_server"))
    with pytest.raises(InvalidOperationError, match=r"no snapshot 999999 on this server"):
        sim.drop_snapshot(ServerSnapshot(time=0.0, world="", id=999999, server="/sim_server"))
    with pytest.raises(InvalidOperationError, match=r"server /elsewhere.*this client's server"):
        sim.restore(ServerSnapshot(time=0.0, world="", id=1, server="/elsewhere"))
    taken = []
    with pytest.raises(InvalidOperationError, match=f"holds {MAX_SNAPSHOTS} snapshots, its most"):
        for _ in range(MAX_SNAPSHOTS + 1):
            taken.append(sim.snapshot())
    assert 1 <= len(taken) <= MAX_SNAPSHOTS and len({s.id for s in taken}) == len(taken)
    for snap in taken:
        sim.drop_snapshot(snap)
    with pytest.raises(InvalidOperationError, match=rf"no snapshot {taken[0].id} "):
        sim.restore(taken[0])  # dropped: ids are never reused
    assert sim.time == t
    assert np.array_equal(np.concatenate(sim.get_states(packets), axis=1), before)
