"""Island-parallel stepping (paper 002's threaded islands on MuJoCo) and the step-time harness.

Parallel mode must give the serial engine's trajectories where islands never meet (bit for bit
where the parts' models equal the whole world's, else within round-off amplified over the run),
physically consistent results where they do, regroup exactly when units meet or part, and keep
levers, state get/set, spawn/delete and reset working. Timing is never asserted."""
from __future__ import annotations

import json
from pathlib import Path

import mujoco
import numpy as np
import pytest

from sim_fidelity.cli import main as simfid
from sim_fidelity.physics_bench import appendix, stats
from sim_fidelity.physics_bench.timing import make_engine, time_steps
from sim_fidelity.simulator import EntityKind, InvalidOperationError, Lever
from sim_fidelity.simulator.engine import MujocoEngine
from sim_fidelity.simulator.errors import SimulationDivergedError
from sim_fidelity.simulator.islands import deal, groups, pair_bounds, time_to_contact
from sim_fidelity.simulator.parallel import IslandParallelEngine
from sim_fidelity.world_generators import drop_test
from sim_fidelity.world_generators.joint_tree import generate as joint_tree_text

REPO = Path(__file__).resolve().parents[1]
WORLDS = REPO / "worlds"


def _pair(a: MujocoEngine, b: MujocoEngine, names: list[str]) -> tuple[float, float]:
    pa, va = a.get_states(names)
    pb, vb = b.get_states(names)
    return float(np.abs(pa - pb).max()), float(np.abs(va - vb).max())


def _models(engine: MujocoEngine) -> list[str]:
    return [n for n in engine.entities(EntityKind.MODEL) if not engine.entity_info(n).static]


def _sphere(name: str, x: float, y: float, vx: float = 0.0, r: float = 0.1) -> str:
    return f"""
    <model name="{name}"><pose>{x} {y} 1 0 0 0</pose>
      <link name="link"><inertial><mass>1</mass><inertia><ixx>0.004</ixx><iyy>0.004</iyy>\
<izz>0.004</izz><ixy>0</ixy><ixz>0</ixz><iyz>0</iyz></inertia></inertial>
        <collision name="c"><geometry><sphere><radius>{r}</radius></sphere></geometry></collision>
      </link></model>"""


def _space(*models: str) -> str:
    """A world without gravity or ground."""
    return f"""<?xml version="1.0"?><sdf version="1.9"><world name="space">
    <physics name="p" type="ode"><max_step_size>0.001</max_step_size></physics>
    <gravity>0 0 0</gravity>{''.join(models)}</world></sdf>"""


# --- trajectories ----------------------------------------------------------------------------
def test_never_meeting_joint_trees_are_bit_for_bit_serial():
    serial = MujocoEngine.from_file(WORLDS / "joint_tree_7x4.sdf")
    par = IslandParallelEngine.from_file(WORLDS / "joint_tree_7x4.sdf", threads=2)
    serial.step(400)
    par.step(400)
    assert sorted(len(p) for p in par.parts) == [3, 4]
    assert _pair(serial, par, _models(serial)) == (0.0, 0.0)
    links = serial.entities(EntityKind.LINK, "^tree_")
    assert _pair(serial, par, links) == (0.0, 0.0)
    par.close()


def test_one_thread_is_bit_for_bit_serial_and_two_robots_agree_within_round_off():
    serial = MujocoEngine.from_file(WORLDS / "dual_pr2.sdf")
    one = IslandParallelEngine.from_file(WORLDS / "dual_pr2.sdf", threads=1)
    two = IslandParallelEngine.from_file(WORLDS / "dual_pr2.sdf", threads=2)
    for e in (serial, one, two):
        e.step(300)
    names = serial.entities(EntityKind.LINK, "^pr2")
    assert _pair(serial, one, names) == (0.0, 0.0)
    assert len(two.parts) == 2
    # separate models solve each robot's constraints alone: the same up to round-off (1e-14 in
    # the first accelerations with constraints); the light fingers and wrists hitting their
    # joint limits as the arms fall grow it to ~5e-5 m (1e-3 m/s); the bases to < 1e-7 m
    dp, dv = _pair(serial, two, names)
    assert dp < 2e-4 and dv < 1e-2
    assert _pair(serial, two, ["pr2", "pr2_2"])[0] < 1e-6
    assert two.repartitions == 1
    one.close()
    two.close()


def test_pendulums_split_in_two_parts_and_follow_serial():
    serial = MujocoEngine.from_file(WORLDS / "revolute_joint_test.sdf")
    par = IslandParallelEngine.from_file(WORLDS / "revolute_joint_test.sdf", threads=2)
    serial.step(300)
    par.step(300)
    assert sorted(len(p) for p in par.parts) == [4, 4]
    dp, dv = _pair(serial, par, serial.entities(EntityKind.LINK, "^double_pendulum"))
    assert dp < 1e-8 and dv < 1e-7
    par.close()


def _fly(world: str, steps: int = 100) -> tuple[np.ndarray, list[int], MujocoEngine,
                                                  IslandParallelEngine]:
    """Sphere ``a`` sent at 2 m/s along +x: per 10 steps, whether a and b share a part and the
    serial engine's contact count; and both engines at the end."""
    par = IslandParallelEngine.from_string(world, threads=2)
    serial = MujocoEngine.from_string(world)
    for e in (par, serial):
        e.set_states(["a"], twists=np.array([[2.0, 0, 0, 0, 0, 0]]))
    together, contacts = [], []
    for _ in range(steps):
        par.step(10)
        serial.step(10)
        together.append(par.part_of("a") == par.part_of("b"))
        contacts.append(serial.data.ncon)
    return np.array(together), contacts, serial, par


def test_islands_merge_before_they_pass_close_and_split_after():
    # a passes b at 0.01 m surface distance: they share a part while close, not before or after
    together, contacts, serial, par = _fly(_space(_sphere("a", -1.0, 0.0),
                                                  _sphere("b", 0.0, 0.21)))
    assert not any(contacts)
    assert not together[0] and together.any() and not together[-1]
    assert par.repartitions >= 3  # split, merged, split again
    assert _pair(serial, par, ["a", "b"]) == (0.0, 0.0)  # one-sphere parts equal the whole
    par.close()


def test_islands_that_collide_share_a_part_from_before_the_contact():
    together, contacts, serial, par = _fly(_space(_sphere("a", -1.0, 0.0),
                                                  _sphere("b", 0.0, 0.0)))
    hit = [i for i, n in enumerate(contacts) if n]
    assert hit and not together[0]
    assert together[hit[0] - 1] and all(together[i] for i in hit)
    dp, dv = _pair(serial, par, ["a", "b"])
    assert dp < 1e-9 and dv < 1e-9  # merged into the whole world's model before the contact
    par.close()


def test_drop_test_energy_and_contacts_consistent_with_serial(tmp_path):
    path = tmp_path / "drop.sdf"
    path.write_text(drop_test.generate(24, seed=1, half_width=1.0, height=(0.3, 1.5)))
    serial = MujocoEngine.from_file(path)
    par = IslandParallelEngine.from_file(path, threads=2)

    def energy(e: MujocoEngine) -> float:
        m = e.model
        names = _models(e)
        pose, twist = e.get_states(names)
        bids = [m.body(f"{n}::link").id for n in names]
        mass = m.body_mass[bids]
        inertia = m.body_inertia[bids, 0]
        return float(np.sum(0.5 * mass * np.sum(twist[:, :3] ** 2, axis=1)
                            + 0.5 * inertia * np.sum(twist[:, 3:] ** 2, axis=1)
                            + 9.8 * mass * pose[:, 2]))

    e0 = energy(serial)
    ncon_s, ncon_p = [], []
    for _ in range(15):
        serial.step(100)
        par.step(100)
        ncon_s.append(serial.data.ncon)
        ncon_p.append(par.contact_count())
    assert abs(energy(par) - energy(serial)) < 0.02 * e0
    assert abs(np.mean(ncon_p) - np.mean(ncon_s)) <= 0.2 * np.mean(ncon_s) + 1
    assert par.divergences == 0
    par.close()


# --- chunks: steps deferred and run many at a time ---------------------------------------------
def test_single_steps_run_in_chunks_and_equal_serial_bit_for_bit():
    """step(1) calls are deferred and run as chunks; a read in between runs what is deferred:
    where islands never meet (constraint-free joint trees) every read equals serial exactly."""
    serial = MujocoEngine.from_file(WORLDS / "joint_tree_7x4.sdf")
    par = IslandParallelEngine.from_file(WORLDS / "joint_tree_7x4.sdf", threads=2)
    links = serial.entities(EntityKind.LINK, "^tree_")
    for steps in (1, 37, 250, 13):
        for _ in range(steps):
            serial.step(1)
            par.step(1)
        assert par.time == serial.time
        assert _pair(serial, par, links) == (0.0, 0.0)
    assert len(par.parts) == 2 and par.rollbacks == 0
    par.close()


def test_one_island_world_steps_the_whole_world_like_serial():
    serial = MujocoEngine.from_file(WORLDS / "pr2.sdf")
    par = IslandParallelEngine.from_file(WORLDS / "pr2.sdf", threads=2)
    for _ in range(50):
        serial.step(1)
        par.step(1)
    assert par.parts == [frozenset({"pr2"})]
    names = serial.entities(EntityKind.LINK, "^pr2")
    assert _pair(serial, par, names) == (0.0, 0.0)
    par.close()


def _pushed(force: float, steps: int, batch: int) -> tuple[IslandParallelEngine, MujocoEngine]:
    """Sphere a, at rest 0.5 m from b, pushed at b by a constant force the speed bounds do not
    foresee; both engines after ``steps`` steps in calls of ``batch``."""
    world = _space(_sphere("a", -0.7, 0.0), _sphere("b", 0.0, 0.0))
    par = IslandParallelEngine.from_string(world, threads=2)
    serial = MujocoEngine.from_string(world)
    for e in (par, serial):
        e.data.xfrc_applied[e.model.body("a::link").id, 0] = force
        for _ in range(steps // batch):
            e.step(batch)
    return par, serial


@pytest.mark.parametrize("batch", [1, 100])
def test_a_chunk_never_lets_two_parts_interpenetrate(batch):
    """a starts at rest in its own part, so the chunk may be long (no contact foreseen), but it
    accelerates into b within it: the contact is found at the chunk's end, the chunk undone and
    run again with a and b in one part; the result is serial's, bit for bit."""
    par, serial = _pushed(100.0, 300, batch)
    assert par.rollbacks >= 1
    assert serial.get_states(["b"])[1][0, 0] > 1.0  # b was hit and moves on
    assert _pair(serial, par, ["a", "b"]) == (0.0, 0.0)
    par.close()


def test_groups_approaching_fast_merge_before_contact():
    """Two spheres closing at 60 m/s: the chunks shorten as they approach, and they share a part
    before they touch, without a chunk undone."""
    world = _space(_sphere("a", -1.5, 0.0), _sphere("b", 1.5, 0.0))
    par = IslandParallelEngine.from_string(world, threads=2)
    serial = MujocoEngine.from_string(world)
    for e in (par, serial):
        e.set_states(["a", "b"], twists=np.array([[30.0, 0, 0, 0, 0, 0], [-30.0, 0, 0, 0, 0, 0]]))
    for e in (par, serial):
        for _ in range(100):
            e.step(1)
    assert par.rollbacks == 0 and par.repartitions >= 2
    assert serial.get_states(["a"])[1][0, 0] < 25.0  # they collided: a lost speed
    assert _pair(serial, par, ["a", "b"]) == (0.0, 0.0)
    par.close()


class _Watched(IslandParallelEngine):
    """The engine with every step of a chunk taken alone (bit for bit the same as one
    ``mj_step(nstep)`` call) and, after each, the whole world's collision detection run on the
    parts' state: ``missed`` lists the steps at which geoms of two parts touched, which the check
    at the chunk's end would not see if they had parted again by then."""

    def __init__(self, *args, **kwargs):
        self.missed: list[float] = []
        self.watched = 0
        super().__init__(*args, **kwargs)

    def _dispatch(self, n: int) -> None:
        for _ in range(n):
            super()._dispatch(1)
            self._gather()
            m, d = self._model, self._data
            mujoco.mj_kinematics(m, d)
            mujoco.mj_collision(m, d)
            part_of = self._part_index()
            unit = self._body_unit[m.geom_bodyid[d.contact.geom[:d.ncon]]]
            a, b = unit[:, 0], unit[:, 1]
            both = (a >= 0) & (b >= 0)
            if np.any(part_of[a[both]] != part_of[b[both]]):
                self.missed.append(float(d.time))
            self.watched += 1
            self._ahead = True


@pytest.mark.parametrize("world", ["drop", "revolute_joint_test"])
def test_no_two_parts_touch_at_any_step_inside_a_chunk(world, tmp_path):
    """The check runs at a chunk's end only; at every step inside the chunks, no geoms of two
    parts touch (spheres falling onto each other and parting; pendulums swinging past each
    other 0.10 m apart)."""
    if world == "drop":
        path = tmp_path / "drop.sdf"
        path.write_text(drop_test.generate(24, seed=1, half_width=1.0, height=(0.3, 1.5)))
    else:
        path = WORLDS / f"{world}.sdf"
    par = _Watched.from_file(path, threads=2)
    for _ in range(1500):
        par.step(1)
    par.run_deferred()
    assert par.watched >= 1000 and par.missed == []  # steps run in parts, none with a miss
    par.close()


def _runaway() -> tuple[IslandParallelEngine, MujocoEngine]:
    """Sphere a, at 1 m/s, with a negative damping that doubles its speed every step (it
    diverges after about 25 steps), b far away: two parts, chunks as long as 100 steps."""
    world = _space(_sphere("a", -50.0, 0.0), _sphere("b", 50.0, 0.0))
    par = IslandParallelEngine.from_string(world, threads=2)
    serial = MujocoEngine.from_string(world)
    for e in (par, serial):
        e.set_states(["a"], twists=np.array([[1.0, 0, 0, 0, 0, 0]]))
        dof = e.index.body_free_dof[e.index.body_id["a::link"]]
        e.model.dof_damping[dof] = -0.5 / e.step_size  # implicit: v' = v - h b v / (m + h b)
    return par, serial


def test_a_divergence_goes_back_to_the_start_of_the_call_that_asked_for_it():
    """Steps deferred from returned calls run again after the undo: the world ends where the
    serial engine's does, at the start of the call whose steps diverged."""
    par, serial = _runaway()
    for e in (par, serial):
        for _ in range(10):
            e.step(1)
        with pytest.raises(SimulationDivergedError, match="bad acceleration of 'a::link'"):
            e.step(95)  # the chunk fills: 10 deferred steps and 90 of this call
    assert len(par.parts) == 2 and par.divergences == serial.divergences == 1
    assert par.time == serial.time == pytest.approx(0.010)
    assert _pair(serial, par, ["a", "b"]) == (0.0, 0.0)
    par.close()


def test_a_divergence_in_steps_of_returned_calls_says_so():
    """Deferred steps of calls that returned diverge when a read runs them: the world goes back
    where those steps began (the chunk's start), and the error says whose steps they were."""
    par, _ = _runaway()
    for _ in range(40):
        par.step(1)  # deferred: the chunk is not full
    with pytest.raises(SimulationDivergedError, match="deferred from calls that had returned"):
        par.get_states(["a"])
    assert par.time == 0.0 and par.divergences == 1
    par.close()


# --- the one-world view --------------------------------------------------------------------------
def test_levers_and_state_work_in_parallel_mode():
    par = IslandParallelEngine.from_file(WORLDS / "drop_test.sdf", threads=2)
    par.set_lever(["sphere_000"], Lever.GRAVITY, False)
    par.set_lever(["sphere_001"], Lever.COLLISION, False)
    z0 = par.get_states(["sphere_000", "sphere_001"])[0][:, 2]
    par.set_states(["sphere_002"], poses=np.array([[5.0, 5.0, 2.0, 0, 0, 0, 1]]),
                   twists=np.array([[1.0, 0, 0, 0, 0, 0]]))
    par.step(1200)
    pose, twist = par.get_states(["sphere_000", "sphere_001", "sphere_002"])
    assert pose[0, 2] == pytest.approx(z0[0], abs=1e-6)  # no gravity: floats where it was
    assert pose[1, 2] < -1.0  # no collision: fell through the ground
    assert pose[2, 0] > 5.5  # teleported and moving in +x
    assert par.get_lever(["sphere_000"], Lever.GRAVITY).tolist() == [False]
    par.set_lever(["sphere_000"], Lever.GRAVITY, True)
    par.step(300)
    assert par.get_states(["sphere_000"])[0][0, 2] < z0[0] - 0.1  # falls now
    par.close()


def test_spawn_delete_reset_in_parallel_mode():
    world = _space(_sphere("a", 0.0, 0.0), _sphere("b", 0.0, 5.0))
    par = IslandParallelEngine.from_string(world, threads=2)
    par.step(10)
    par.spawn("c", "<sdf version='1.9'>" + _sphere("c", 0, 0) + "</sdf>",
              pose=np.array([0.0, -5.0, 1.0, 0, 0, 0, 1]))
    par.set_states(["c"], twists=np.array([[0, 0, 1.0, 0, 0, 0]]))
    par.step(100)
    assert par.get_states(["c"])[0][0, 2] == pytest.approx(1.1, abs=1e-6)
    assert sum(len(p) for p in par.parts) == 3
    par.delete("b")
    par.step(10)
    assert sorted(n for p in par.parts for n in p) == ["a", "c"]
    par.reset()
    assert par.time == 0.0
    par.step(5)
    assert par.time == pytest.approx(0.005)
    par.close()


def test_equality_constraints_are_refused_in_parallel_mode():
    import mujoco

    from sim_fidelity.simulator.sdf import load_world_string

    def welded():
        w = load_world_string(_space(_sphere("a", 0.0, 0.0), _sphere("b", 1.0, 0.0)))
        w.spec.add_equality(type=mujoco.mjtEq.mjEQ_WELD, objtype=mujoco.mjtObj.mjOBJ_BODY,
                            name1="a::link", name2="b::link")
        return w

    with pytest.raises(InvalidOperationError, match="equality constraint"):
        IslandParallelEngine(welded(), threads=2)
    IslandParallelEngine(welded(), threads=0).step(10)  # serial is fine


def test_threads_from_sdf_and_bad_options(tmp_path):
    text = (WORLDS / "dual_pr2.sdf").read_text().replace(
        "<island_threads>0</island_threads>", "<island_threads>2</island_threads>")
    path = tmp_path / "w.sdf"
    path.write_text(text)
    assert IslandParallelEngine.from_file(path).threads == 2
    assert IslandParallelEngine.from_file(path, threads=0).threads == 0
    with pytest.raises(InvalidOperationError, match="threads"):
        IslandParallelEngine.from_file(path, threads=-1)


# --- grouping -------------------------------------------------------------------------------------
def test_grouping_helpers():
    lo = np.array([[0, 0, 0], [1.5, 0, 0], [10, 0, 0]], float)
    hi = lo + 1.0
    centre, radius, unit = (lo + hi) / 2, np.full(3, 0.87), np.arange(3)

    def bounds(speed):
        return pair_bounds(lo, hi, centre, radius, np.array(speed, float), unit, 3, 0.01, 0.0)

    slack, ttc = bounds([0.0, 0.0, 0.0])
    assert slack[0, 1] == pytest.approx(0.5 - 0.002) and slack[1, 2] == pytest.approx(7.5 - 0.002)
    assert groups(slack) == [frozenset({0}), frozenset({1}), frozenset({2})]
    assert np.isinf(ttc[0, 1])  # nothing moves
    slack, ttc = bounds([50.0, 0.0, 0.0])  # unit 0 can cover 0.5 m within 0.01 s
    assert groups(slack) == [frozenset({0, 1}), frozenset({2})]
    assert ttc[0, 1] == pytest.approx((0.5 - 0.002) / 50.0)
    assert time_to_contact(np.array([1.0]), np.array([0.0]), 9.8)[0] == pytest.approx(
        np.sqrt((1.0 - 0.002) / 9.8))
    parts = deal([frozenset({0}), frozenset({1}), frozenset({2}), frozenset({3})],
                 np.ones(4), np.array([[3, 0, 0], [0, 0, 0], [1, 0, 0], [2, 0, 0]], float), 2)
    assert parts == [frozenset({1, 2}), frozenset({0, 3})]


# --- the harness --------------------------------------------------------------------------------
def test_statistics_of_a_synthetic_timing_series():
    t = stats.trial_times(np.array([4.0, 1.0, 3.0, 2.0]) * 1e-3)
    assert (t.mean, t.min, t.max, t.steps) == (pytest.approx(2.5e-3), 1e-3, 4e-3, 4)
    box = stats.box_stats([5.0, 1.0, 3.0, 2.0, 4.0])
    assert (box.min, box.q1, box.median, box.q3, box.max) == (1.0, 2.0, 3.0, 4.0, 5.0)
    control = [stats.TrialTimes(m, m / 2, m, 10) for m in (2.0, 2.2, 1.8)]
    faster = [stats.TrialTimes(m, m / 4, m, 10) for m in (1.0, 1.1, 0.9)]
    rows = stats.summarise("islands", {0: control, 2: faster}, control=0)
    assert [r.threads for r in rows] == [0, 2]
    assert rows[0].speedup_mean == 1.0
    assert rows[1].speedup_mean == pytest.approx(2.0) and rows[1].speedup_min == pytest.approx(4.0)
    with pytest.raises(stats.TimingError, match="control"):
        stats.summarise("islands", {2: faster}, control=0)
    with pytest.raises(stats.TimingError):
        stats.trial_times(np.array([]))
    with pytest.raises(stats.TimingError):
        stats.trial_times(np.array([1.0, -1.0]))
    with pytest.raises(stats.TimingError, match="window"):
        stats.trial_times(np.array([1.0]), window=0)


def test_windows_give_chunked_stepping_its_per_step_time():
    """A chunked engine's calls: three deferred calls cost nothing and the fourth runs the
    chunk; over windows of whole chunks the minimum is a step's time, not a deferred call's."""
    chunked = stats.trial_times(np.array([0.0, 0.0, 0.0, 4.0, 0.0, 0.0, 0.0, 8.0]), window=4)
    assert (chunked.mean, chunked.min, chunked.max) == (1.5, 1.0, 2.0)
    ragged = stats.trial_times(np.array([4.0, 1.0, 3.0, 2.0, 6.0]), window=2)
    assert (ragged.min, ragged.max, ragged.steps) == (2.5, 6.0, 5)


def test_time_steps_times_each_call_and_advances_the_world():
    engine = make_engine(WORLDS / "joint_tree_1x4.sdf", "islands", 1)
    series = time_steps(engine, 40, batch=4)
    assert series.shape == (10,) and np.all(series > 0)
    assert engine.time == pytest.approx(0.04)
    engine.close()
    pool = make_engine(WORLDS / "joint_tree_1x4.sdf", "pool", 2)
    assert time_steps(pool, 5).shape == (5,)


def test_thread_counts_come_from_the_sdf_unless_given(tmp_path):
    from sim_fidelity.commands.bench_physics import thread_counts, world_path
    path = tmp_path / "w.sdf"
    path.write_text(joint_tree_text(island_threads=3))
    assert thread_counts(None, path) == [0, 3]
    assert thread_counts("2,1", path) == [0, 1, 2]  # the control is always measured
    with pytest.raises(stats.TimingError, match="integers"):
        thread_counts("two", path)
    assert world_path("dual_pr2") == WORLDS / "dual_pr2.sdf"
    with pytest.raises(stats.TimingError, match="no world file"):
        world_path(str(tmp_path / "missing.sdf"))


def test_bench_physics_command_json_and_plots(tmp_path, capsys):
    code = simfid(["bench", "physics", "--world", "joint_tree_1x4", "--threads", "0,1",
                   "--modes", "islands,pool", "--trials", "2", "--duration", "0.02",
                   "--rollout", "2", "--json", "--plots", str(tmp_path)])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert [(s["mode"], s["threads"]) for s in out["settings"]] == [
        ("islands", 0), ("islands", 1), ("pool", 0), ("pool", 1)]
    assert all(len(s["trials"]) == 2 and s["trials"][0]["steps"] == 20 for s in out["settings"])
    assert out["settings"][0]["speedup_mean"] == 1.0
    assert [r["threads"] for r in out["rollout"]] == [0, 1]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["joint_tree_1x4_speedup.png",
                                                         "joint_tree_1x4_step_time.png"]
    assert simfid(["bench", "physics", "--world", "no_such_world"]) == 2
    assert "no world 'no_such_world'" in capsys.readouterr().err


# --- the Appendix's checks -----------------------------------------------------------------------
def test_box_inside_the_ground_recovers_without_gaining_energy():
    default, overdamped, underdamped = appendix.penetration(0.01, duration=0.5)
    rest = appendix.EDGE / 2
    assert default.energy()[1:].max() <= 0.0  # never above resting on the ground
    assert abs(default.z[-1] - rest) < 1e-3 and abs(default.vz[-1]) < 1e-3
    assert underdamped.energy()[1:].max() > 1.0  # an ERP-like correction launches it
    deep_default, deep_over, _ = appendix.penetration(1.0, duration=2.0)
    assert deep_over.energy()[1:].max() <= 0.0 and abs(deep_over.z[-1] - rest) < 5e-3
    # MuJoCo's default contact, unlike the report's split correction, launches a box from 1 m
    assert deep_default.energy()[1:].max() > 10.0


def test_impact_is_inelastic():
    default, overdamped, _ = appendix.impact(height=0.5, duration=1.0)
    assert default.vz.min() < -3.0  # it did hit the ground at speed
    assert default.rebound() < 1e-3 and overdamped.rebound() < 1e-3
    assert abs(default.z[-1] - appendix.EDGE / 2) < 1e-3
