"""Snapshots of the embedded engine: restore-then-step repeats the original trajectory bit for bit
(the truck's scripts, contacts, levers lowered in between, sleeping islands, island-parallel
parts), and a snapshot that does not fit is refused, changing nothing."""
from __future__ import annotations

import copy

import numpy as np
import pytest

from sim_fidelity.simulator import EntityKind, InvalidOperationError, Lever
from sim_fidelity.simulator.engine import MujocoEngine
from sim_fidelity.simulator.parallel import IslandParallelEngine
from sim_fidelity.simulator.snapshot import ServerSnapshot
from sim_fidelity.truck.controller import UnloadingController
from sim_fidelity.truck.robot import load_truck

STEPS = 10  # physics steps per controller tick (the truck worlds' 2 ms step, 20 ms ticks)


def _drive(sim, robot, controller, ticks: int, lower_at: int) -> tuple[np.ndarray, int]:
    """Tick and step; at tick ``lower_at`` the last three packets go LOW. Returns qpos per tick
    and the unload count."""
    out = []
    for k in range(ticks):
        if k == lower_at:
            sim.set_lever(robot.packets[-3:], Lever.DYNAMICS, False)
            sim.set_lever(robot.packets[-3:], Lever.COLLISION, False)
        controller.tick()
        sim.step(STEPS)
        out.append(sim.data.qpos.copy())
    return np.array(out), robot.unloaded


@pytest.mark.parametrize("sleep", [False, True], ids=["awake", "sleeping-islands"])
def test_truck_restore_then_step_is_bit_for_bit(small_wall, sleep):
    sim, robot = load_truck(small_wall, sleep=sleep)
    assert sim.features().snapshots
    controller = UnloadingController(robot, seed=0)
    for _ in range(60):  # 1.2 s: the robot drives towards the wall
        controller.tick()
        sim.step(STEPS)
    snap = sim.snapshot()
    if sleep:  # the resting packets sleep (their contacts are not computed then)
        assert (sim.data.tree_asleep >= 0).any()
    else:  # packets on the floor and against each other, at least
        assert sim.data.ncon > 0
    again = copy.deepcopy(controller, {id(robot): robot})
    first, unloaded = _drive(sim, robot, controller, 50, lower_at=15)
    assert not sim.get_lever(robot.packets[-3:], Lever.DYNAMICS).any()
    sim.restore(snap)
    assert sim.time == snap.time
    assert sim.get_lever(robot.packets[-3:], Lever.DYNAMICS).all()  # the levers as saved
    second, unloaded_again = _drive(sim, robot, again, 50, lower_at=15)
    assert np.array_equal(first, second)
    assert unloaded == unloaded_again
    assert [p for _, p in controller.stats.phases] == [p for _, p in again.stats.phases]


def _sphere(name: str, x: float, y: float) -> str:
    return f"""<model name="{name}"><pose>{x} {y} 1 0 0 0</pose><link name="link">
      <inertial><mass>1</mass><inertia><ixx>0.004</ixx><iyy>0.004</iyy><izz>0.004</izz>
      <ixy>0</ixy><ixz>0</ixz><iyz>0</iyz></inertia></inertial>
      <collision name="c"><geometry><sphere><radius>0.1</radius></sphere></geometry></collision>
      </link></model>"""


SPACE = f"""<?xml version="1.0"?><sdf version="1.9"><world name="space">
    <physics name="p" type="ode"><max_step_size>0.001</max_step_size></physics>
    <gravity>0 0 0</gravity>{_sphere("a", -1.0, 0.0)}{_sphere("b", 0.0, 0.05)}</world></sdf>"""


def test_a_snapshot_restores_on_a_second_engine_of_the_same_world():
    a, b = MujocoEngine.from_string(SPACE), MujocoEngine.from_string(SPACE)
    a.set_states(["a"], twists=np.array([[4.0, 0, 0, 0, 0, 0]]))
    a.step(200)
    b.restore(a.snapshot())
    a.step(100)
    b.step(100)
    assert np.array_equal(a.data.qpos, b.data.qpos) and a.time == b.time
    assert a.data.qpos[0] > -0.1  # a moved on from where it was restored


def test_parallel_engine_restores_its_parts_and_repeats_the_trajectory():
    """a flies into b (they merge into one part and collide; b is held later); restored to
    before the merge, the engine steps the saved parts and repeats every step."""
    par = IslandParallelEngine.from_string(SPACE, threads=2)
    par.set_states(["a"], twists=np.array([[4.0, 0, 0, 0, 0, 0]]))
    par.step(20)
    before = par.parts
    snap = par.snapshot()

    def fly() -> np.ndarray:
        out = []
        for k in range(60):
            if k == 40:
                par.set_lever(["b"], Lever.DYNAMICS, False)
            par.step(10)
            out.append(par.get_states(["a", "b"])[0])
            merged.append(par.part_of("a") == par.part_of("b"))
        return np.array(out)

    merged: list[bool] = []
    first = fly()
    assert par.repartitions >= 2 and any(merged)
    par.restore(snap)
    assert par.parts == before
    assert np.array_equal(first, fly())
    par.close()


def test_a_snapshot_that_does_not_fit_is_refused_and_changes_nothing(small_wall):
    sim = MujocoEngine.from_string(SPACE)
    sim.step(10)
    snap = sim.snapshot()
    sim.spawn("d", f"<sdf version='1.9'>{_sphere('d', 5.0, 5.0)}</sdf>")
    sim.step(5)
    qpos, t = sim.data.qpos.copy(), sim.time
    with pytest.raises(InvalidOperationError, match=r"entities differ.*'d'.*spawn or delete"):
        sim.restore(snap)
    with pytest.raises(InvalidOperationError, match="ServerSnapshot cannot be restored"):
        sim.restore(ServerSnapshot(time=0.0, world="space", id=1, server="/sim_server"))
    truck, _ = load_truck(small_wall)
    with pytest.raises(InvalidOperationError, match="world 'space'.*does not fit world"):
        truck.restore(snap)
    assert np.array_equal(sim.data.qpos, qpos) and sim.time == t
    assert "d" in sim.entities(EntityKind.MODEL)
