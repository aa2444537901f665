"""Issue 23, item 2: the manager's incremental tick (only the state rows that changed since the
last tick are read again) gives the same levels as the full tick (every row through
``get_states``) on a truck run: scenario B, AdFi-3 with MuJoCo's sleeping islands, the controller
picking and the manager ticking every 40 ms, run once each way from the same seed. Equal levels
at every tick make equal lever writes, so the two runs must also end in the same physics state;
and at every tick the incremental read equals ``get_states`` row for row."""
from __future__ import annotations

import numpy as np

from sim_fidelity.fidelity_manager import FidelityManager, Level
from sim_fidelity.simulator.state_reader import EngineStateReader, FullStateReader
from sim_fidelity.truck.bench import TICK_PERIOD, truck_config
from sim_fidelity.truck.controller import CONTROL_PERIOD, DECISION_SETTLE, UnloadingController
from sim_fidelity.truck.robot import load_truck

DURATION = 14.0  # s of sim time: the approach, the first decision points, picks (26 changes)


def run(incremental: bool) -> tuple[np.ndarray, np.ndarray, type]:
    """Levels after every tick, the final qpos, and the manager's reader type."""
    sim, robot = load_truck("B", sleep=True)
    manager = FidelityManager(sim, truck_config(medium="near"), "adfi-3", incremental=incremental)
    controller = UnloadingController(robot, seed=0, decide=manager.decision_point,
                                     settle=DECISION_SETTLE)
    steps = int(round(CONTROL_PERIOD / sim.step_size))
    tick_every = int(round(TICK_PERIOD / CONTROL_PERIOD))
    levels = []
    with manager:
        for period in range(1, int(round(DURATION / CONTROL_PERIOD)) + 1):
            controller.tick()
            sim.step(steps)
            if period % tick_every == 0:
                states = sim.get_states(manager.state_names)
                manager.tick()
                levels.append(manager.levels.copy())
                if incremental:  # what the tick read, row for row
                    np.testing.assert_array_equal(manager.reader.poses, states[0])
                    np.testing.assert_array_equal(manager.reader.twists, states[1])
        assert not sim.divergences
        return np.array(levels), sim.data.qpos.copy(), type(manager.reader)


def test_incremental_and_full_ticks_give_the_same_levels_on_truck_b():
    full, full_qpos, full_reader = run(incremental=False)
    incremental, incremental_qpos, incremental_reader = run(incremental=True)
    assert (full_reader, incremental_reader) == (FullStateReader, EngineStateReader)
    # the run exercises the rules: levels change often, all three levels occur
    changes = (np.diff(full, axis=0) != 0).any(axis=1).sum()
    assert changes >= 15, changes
    assert {int(Level.HIGH), int(Level.MEDIUM), int(Level.LOW)} <= set(np.unique(full).tolist())
    differ = np.flatnonzero((full != incremental).any(axis=1))
    assert differ.size == 0, (f"levels differ at {differ.size} of {len(full)} ticks, first at "
                              f"t = {(differ[0] + 1) * TICK_PERIOD:.2f} s")
    np.testing.assert_array_equal(incremental_qpos, full_qpos)
