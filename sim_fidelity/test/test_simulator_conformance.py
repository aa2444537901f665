"""The Simulator protocol's conformance suite: every implementation passes the same tests.

Implementations are the ``backend`` fixture's parameters: MujocoEngine in process, with island
threads, RosSimulator against a real sim_server process (one per module), and ClassicRosSimulator
against sim_server serving gazebo_msgs (no stepping: where a test only needs time to pass,
``advance`` plays instead). Adding one is one entry in
``BACKENDS``: a context manager that yields a paused Simulator on ``world_file``. What an
implementation lacks by design it declares in ``features()``; the tests then check that the
declaration holds (the call is refused with a typed error), never skip.
"""
from __future__ import annotations

import contextlib
import math
from pathlib import Path
from typing import Callable, Iterator

import numpy as np
import pytest
from ros_processes import (
    CLIENT_TIMEOUT_S,
    next_domain,
    paused_sim_server,
    settles,
    start_node,
    stop,
    wait_for,
)
from sdf_snippets import GROUND, box_model, servo_pendulum, world

from sim_fidelity.simulator import (
    EntityKind,
    InvalidOperationError,
    InvalidPoseError,
    Lever,
    SdfError,
    SimState,
    Simulator,
    SimulatorError,
    UnknownEntityError,
    UnsupportedFeatureError,
    UnsupportedLeverError,
)
from sim_fidelity.simulator.engine import MujocoEngine
from sim_fidelity.simulator.errors import EntityExistsError, InvalidNameError
from sim_fidelity.simulator.parallel import IslandParallelEngine

NESTED = """
    <model name="probe">
      <pose>0 -3 0.5 0 0 0</pose>
      <link name="link"><sensor name="imu" type="imu"><update_rate>10</update_rate></sensor></link>
    </model>
    <model name="outer">
      <pose>-3 0 0.5 0 0 0</pose>
      <model name="inner">""" + box_model("crate", 0, 0, 0).split(">", 1)[1].split("</model>")[0] \
    .replace("<static>false</static>", "") + """</model>
    </model>"""
WORLD = world("conformance", GROUND, box_model("resting", 0, 0, 0.2),
              box_model("floating", 2, 0, 1.0, edge=(0.2, 0.4, 0.6)),
              box_model("wall", 5, 0, 0.5, static=True), servo_pendulum(), NESTED)
NEW_BOX = "<sdf version='1.9'>" + box_model("spawned", 0, 0, 0) + "</sdf>"
BAD_GAIN = ("<sdf version='1.9'>" + servo_pendulum("bad").replace("<p_gain>200", "<p_gain>abc")
            + "</sdf>")  # loads, then fails where the engine turns the plugin into an actuator
STEP = 0.001


@contextlib.contextmanager
def in_process(world_file: Path, _tmp: Path) -> Iterator[Simulator]:
    engine = MujocoEngine.from_file(world_file)
    engine.set_sim_state(SimState.PAUSED)
    yield engine


@contextlib.contextmanager
def over_ros(world_file: Path, tmp: Path) -> Iterator[Simulator]:
    pytest.importorskip("simulation_interfaces.srv", reason="interface packages not built")
    with paused_sim_server(world_file, tmp) as (sim, _, _):
        yield sim


@contextlib.contextmanager
def over_ros_classic(world_file: Path, tmp: Path) -> Iterator[Simulator]:
    """The gazebo_msgs flavour against sim_server serving Gazebo classic's interface only."""
    pytest.importorskip("gazebo_msgs.srv", reason="interface packages not built")
    from sim_fidelity.simulator.ros.classic.client import ClassicRosSimulator
    domain = next_domain()
    proc = start_node("sim_fidelity.simulator.ros.server",
                      {"world": world_file, "paused": True, "real_time_factor": 1.0,
                       "interfaces": "gazebo_msgs", "serve_levers": False}, domain,
                      tmp / "sim_server.log")
    sim = ClassicRosSimulator(domain_id=domain, timeout=CLIENT_TIMEOUT_S,
                              world_file=str(world_file))
    try:
        sim.wait_for_server(60.0)
        yield sim
        assert proc.poll() is None, "sim_server died during the tests"
    finally:
        sim.close()
        stop(proc)


@contextlib.contextmanager
def island_threads(world_file: Path, _tmp: Path) -> Iterator[Simulator]:
    engine = IslandParallelEngine.from_file(world_file, threads=2)
    engine.set_sim_state(SimState.PAUSED)
    yield engine
    engine.close()


BACKENDS: dict[str, Callable[[Path, Path], contextlib.AbstractContextManager[Simulator]]] = {
    "mujoco": in_process, "mujoco_islands": island_threads, "ros": over_ros,
    "ros_classic": over_ros_classic}


def advance(sim: Simulator, n: int) -> None:
    """``n`` steps; a simulator that declares no stepping plays until as much time passed."""
    if sim.features().stepping:
        sim.step(n)
        return
    until = sim.time + n * sim.step_size
    sim.set_sim_state(SimState.PLAYING)
    assert wait_for(lambda: sim.time >= until, 60.0), "time does not advance while playing"
    sim.set_sim_state(SimState.PAUSED)


@pytest.fixture(scope="module")
def world_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("world") / "conformance.sdf"
    path.write_text(WORLD)
    return path


@pytest.fixture(scope="module", params=sorted(BACKENDS))
def backend(request, world_file, tmp_path_factory) -> Iterator[Simulator]:
    with BACKENDS[request.param](world_file, tmp_path_factory.mktemp(request.param)) as sim:
        yield sim


@pytest.fixture
def sim(backend: Simulator) -> Simulator:
    """The backend paused, at its initial state and time zero, with every lever on."""
    backend.set_sim_state(SimState.PAUSED)
    backend.reset()
    models = backend.entities(EntityKind.MODEL)
    for lever in backend.features().levers & {Lever.DYNAMICS, Lever.COLLISION, Lever.GRAVITY}:
        backend.set_lever(models, lever, True)
    return backend


# ---------------------------------------------------------------------- the scene
def test_is_a_simulator(sim):
    assert isinstance(sim, Simulator)


def test_entities_are_scoped_and_filtered(sim):
    models = sim.entities(EntityKind.MODEL)
    assert {"resting", "floating", "wall", "arm", "outer", "outer::inner"} <= set(models)
    links = sim.entities(EntityKind.LINK)
    assert {"resting::link", "arm::post", "arm::rod", "outer::inner::link"} <= set(links)
    assert all("::" in n for n in links)
    assert {"arm::hinge", "arm::fix"} <= set(sim.entities(EntityKind.JOINT))
    assert sim.entities(pattern="^arm::") == [n for n in sim.entities() if n.startswith("arm::")]
    assert set(sim.entities(EntityKind.LINK, pattern="^outer")) == {"outer::inner::link"}
    assert set(sim.entities()) >= set(models) | set(links)


def test_bad_entity_filters_raise_typed_errors(sim):
    with pytest.raises(UnsupportedFeatureError, match="kinds"):
        sim.entities("shape")
    with pytest.raises(InvalidOperationError, match="regular expression"):
        sim.entities(pattern="([unclosed")


def test_entity_info_names_kind_parent_and_static(sim):
    assert sim.entity_info("outer::inner").parent == "outer"
    assert sim.entity_info("outer::inner::link").parent == "outer::inner"
    assert sim.entity_info("arm::hinge").kind == EntityKind.JOINT
    assert sim.entity_info("arm::hinge").parent == "arm"
    assert sim.entity_info("wall").static and not sim.entity_info("resting").static
    assert sim.entity_info("resting").parent == ""
    with pytest.raises(UnknownEntityError, match="nosuch"):
        sim.entity_info("nosuch")


def test_bounds_of_models_and_links(sim):
    lo, hi = sim.bounds(["floating", "floating::link", "ground"])
    np.testing.assert_allclose(lo[:2], [[-0.1, -0.2, -0.3]] * 2, atol=1e-6)
    np.testing.assert_allclose(hi[:2], [[0.1, 0.2, 0.3]] * 2, atol=1e-6)
    assert np.isfinite(lo[2]).all() or np.isnan(lo[2]).all()  # a plane: whatever it reports, all
    lo, hi = sim.bounds(["arm::post"])  # a link without collision geometry
    assert np.isnan(lo).all() and np.isnan(hi).all()
    assert sim.bounds([])[0].shape == (0, 3)
    with pytest.raises(UnknownEntityError):
        sim.bounds(["nosuch"])


# ---------------------------------------------------------------------- state
def test_states_in_one_batch_with_keywords(sim):
    names = ["floating", "resting", "outer::inner"]
    p0, t0 = sim.get_states(names)
    assert p0.shape == (3, 7) and t0.shape == (3, 6)
    np.testing.assert_allclose(p0[:, :3], [[2, 0, 1.0], [0, 0, 0.2], [-3, 0, 0.5]], atol=1e-9)
    pose = np.array([[1.0, 2.0, 3.0, 0, 0, math.sin(0.2), math.cos(0.2)],
                     [0.0, 1.0, 0.2, 0, 0, 0, 1.0]])
    twist = np.array([[0.1, 0, 0, 0, 0, 0.5], [0, 0, 0, 0, 0, 0.0]])
    sim.set_states(["floating", "resting"], poses=pose, twists=twist)
    p, t = sim.get_states(["floating", "resting"])
    np.testing.assert_allclose(p, pose, atol=1e-9)
    np.testing.assert_allclose(t, twist, atol=1e-9)
    sim.set_states(["floating"], twists=np.array([[0, 0, 0.3, 0, 0, 0.0]]))  # pose kept
    p, t = sim.get_states(["floating"])
    np.testing.assert_allclose(p, pose[:1], atol=1e-9)
    np.testing.assert_allclose(t, [[0, 0, 0.3, 0, 0, 0]], atol=1e-9)
    sim.set_states(["outer"], poses=np.array([[-3, 1, 0.5, 0, 0, 0, 1.0]]))  # a nested model moves
    np.testing.assert_allclose(sim.get_states(["outer::inner::link"])[0][0, :3], [-3, 1, 0.5],
                               atol=1e-9)
    assert sim.get_states([])[0].shape == (0, 7)


def test_bad_states_raise_typed_errors(sim):
    before = sim.get_states(["floating"])[0]
    for bad in ([[np.nan, 0, 0, 0, 0, 0, 1]], [[0, 0, 1, 0, 0, 0, 0.0]], [[0, 0, 1, 0, 0, 0, 2.0]]):
        with pytest.raises(InvalidPoseError):
            sim.set_states(["floating"], poses=np.array(bad, float))
    with pytest.raises(InvalidPoseError):
        sim.set_states(["floating"], twists=np.array([[np.inf, 0, 0, 0, 0, 0.0]]))
    with pytest.raises(InvalidPoseError):
        sim.set_states(["floating", "resting"], poses=np.zeros((1, 7)) + [0, 0, 0, 0, 0, 0, 1])
    np.testing.assert_array_equal(sim.get_states(["floating"])[0], before)  # nothing moved
    with pytest.raises(UnknownEntityError, match="nosuch"):
        sim.get_states(["floating", "nosuch"])
    with pytest.raises(UnknownEntityError, match="nosuch"):
        sim.set_states(["nosuch"], poses=np.array([[0, 0, 1, 0, 0, 0, 1.0]]))


def test_invalid_operations(sim):
    """Well-formed requests that this entity or state does not allow: InvalidOperationError."""
    with pytest.raises(InvalidOperationError):
        sim.set_states(["arm::rod"], poses=np.array([[0, 0, 1, 0, 0, 0, 1.0]]))  # jointed link
    if sim.features().deleting:
        with pytest.raises(InvalidOperationError):
            sim.delete("resting::link")  # only top-level models
        with pytest.raises(InvalidOperationError):
            sim.delete("outer::inner")
    with pytest.raises(InvalidOperationError):
        sim.bounds(["arm::hinge"])  # joints have no geometry
    with pytest.raises(InvalidOperationError):
        sim.get_states(["arm::hinge"])  # nor a pose


# ---------------------------------------------------------------------- time
def test_step_advances_time_by_n_steps(sim):
    assert sim.step_size == pytest.approx(STEP)
    if not sim.features().stepping:  # declared: refused
        with pytest.raises(UnsupportedFeatureError):
            sim.step(1)
        return
    assert sim.time == 0.0
    sim.step(250)
    assert sim.time == pytest.approx(250 * STEP, abs=1e-9)
    z = sim.get_states(["floating"])[0][0, 2]
    assert z == pytest.approx(1.0 - 9.81 * (250 * STEP) ** 2 / 2, abs=5e-3)
    sim.step()
    assert sim.time == pytest.approx(251 * STEP, abs=1e-9)
    sim.step(0)
    assert sim.time == pytest.approx(251 * STEP, abs=1e-9)
    with pytest.raises(InvalidOperationError):
        sim.step(-1)


def test_reset_returns_to_the_initial_state(sim):
    start = sim.get_states(["floating", "resting"])[0]
    sim.set_states(["resting"], poses=np.array([[0, 2, 0.2, 0, 0, 0, 1.0]]))
    advance(sim, 100)
    sim.reset()
    assert sim.time == 0.0
    np.testing.assert_allclose(sim.get_states(["floating", "resting"])[0], start, atol=1e-9)


def test_state_machine(sim):
    assert sim.sim_state() == SimState.PAUSED
    sim.set_sim_state(SimState.PLAYING)
    assert sim.sim_state() == SimState.PLAYING
    if sim.features().free_running:  # declared: time runs on its own and step() is refused
        assert wait_for(lambda: sim.time > 0.02, 60.0), "time does not advance while playing"
        with pytest.raises(InvalidOperationError if sim.features().stepping
                           else UnsupportedFeatureError):
            sim.step(1)
    else:  # declared: time moves only by step(), in every state
        sim.step(10)
        assert sim.time == pytest.approx(10 * STEP, abs=1e-9)
    sim.set_sim_state(SimState.PAUSED)
    # over ROS, /clock sent before the pause may still be on its way
    assert settles(lambda: sim.time, quiet_s=0.5), "time runs on while paused"
    paused_at = sim.time
    if sim.features().stepping:
        sim.step(5)
        assert sim.time == pytest.approx(paused_at + 5 * STEP, abs=1e-9)
    sim.set_sim_state(SimState.STOPPED)  # stopped: paused and back to the start
    assert sim.sim_state() == SimState.STOPPED
    assert wait_for(lambda: sim.time == 0.0, 60.0)
    with pytest.raises(SimulatorError):
        sim.set_sim_state(SimState.LOADING_WORLD)
    assert sim.sim_state() == SimState.STOPPED


# ---------------------------------------------------------------------- scene edits
def test_spawn_and_delete(sim):
    f = sim.features()
    if not f.spawning:
        with pytest.raises(SimulatorError):
            sim.spawn("spawned", NEW_BOX)
        return
    assert "sdf" in f.spawn_formats
    name = sim.spawn("spawned", NEW_BOX, np.array([0, 4, 1, 0, 0, 0, 1.0]))
    try:
        assert name == "spawned" and {"spawned", "spawned::link"} <= set(sim.entities())
        np.testing.assert_allclose(sim.get_states(["spawned"])[0][0, :3], [0, 4, 1], atol=1e-9)
        advance(sim, 10)
        assert sim.get_states(["spawned"])[0][0, 2] < 1.0
        sim.reset()  # spawned entities stay, back where they were spawned
        np.testing.assert_allclose(sim.get_states(["spawned"])[0][0, :3], [0, 4, 1], atol=1e-9)
        with pytest.raises(InvalidPoseError):
            sim.spawn("bad_pose", NEW_BOX, np.array([0, 0, 1, 0, 0, 0, 2.0]))
        with pytest.raises(EntityExistsError, match="spawned"):
            sim.spawn("spawned", NEW_BOX)
        with pytest.raises(InvalidNameError):
            sim.spawn("outer::spawned", NEW_BOX)
        assert "bad_pose" not in sim.entities() and "outer::spawned" not in sim.entities()
    finally:
        if f.deleting:
            sim.delete(name)
    if not f.deleting:
        with pytest.raises(SimulatorError):
            sim.delete("resting")
        return
    assert "spawned" not in sim.entities() and "spawned::link" not in sim.entities()
    with pytest.raises(UnknownEntityError):
        sim.delete("spawned")
    assert sim.get_states(["resting"])[0].shape == (1, 7)  # the world is intact


def test_spawn_rejects_bad_sdf(sim):
    if not sim.features().spawning:
        return  # declared (test_spawn_and_delete checks the refusal)
    with pytest.raises(SdfError, match="line|:1:"):
        sim.spawn("broken", "<sdf version='1.9'><model name='x'><link")
    assert "broken" not in sim.entities() and "x" not in sim.entities()
    with pytest.raises(SdfError, match="p_gain"):
        sim.spawn("bad", BAD_GAIN)


def test_a_rejected_spawn_leaves_the_world_as_it_was(sim):
    if not sim.features().spawning:
        return  # declared (test_spawn_and_delete checks the refusal)
    entities = sim.entities()
    advance(sim, 10)
    states = sim.get_states(["resting", "floating"])
    with pytest.raises(SimulatorError):  # which one: test_spawn_rejects_bad_sdf
        sim.spawn("bad", BAD_GAIN)
    assert sim.entities() == entities
    for now, then in zip(sim.get_states(["resting", "floating"]), states):
        np.testing.assert_array_equal(now, then)
    name = sim.spawn("bad", NEW_BOX.replace("spawned", "bad"), np.array([0, 4, 1, 0, 0, 0, 1.0]))
    try:
        assert name == "bad" and set(sim.entities()) - set(entities) == {"bad", "bad::link"}
        advance(sim, 10)  # and the world still steps
    finally:
        sim.delete(name)


# ---------------------------------------------------------------------- levers
LEVER_TARGETS = {Lever.DYNAMICS: "floating", Lever.COLLISION: "resting", Lever.GRAVITY: "floating",
                 Lever.ACTUATION: "arm::hinge", Lever.SENSOR: "probe", Lever.SCRIPT: "arm"}


def test_levers_match_features(sim):
    offered = sim.features().levers
    for lever, target in LEVER_TARGETS.items():
        if lever not in offered:  # declared missing: refused with a typed error
            with pytest.raises(UnsupportedLeverError):
                sim.set_lever([target], lever, False)
            continue
        assert sim.get_lever([target], lever).tolist() == [True]
        sim.set_lever([target], lever, False)
        assert sim.get_lever([target], lever).tolist() == [False]
        sim.set_lever([target], lever, True)
        assert sim.get_lever([target], lever).tolist() == [True]


def test_levers_act_in_batch(sim):
    if Lever.DYNAMICS not in sim.features().levers:
        return  # declared (test_levers_match_features checks the refusal)
    sim.set_lever(["floating", "resting"], Lever.DYNAMICS, False)
    assert sim.get_lever(["floating", "resting"], Lever.DYNAMICS).tolist() == [False, False]
    advance(sim, 200)
    assert sim.get_states(["floating"])[0][0, 2] == pytest.approx(1.0, abs=1e-6)
    sim.set_lever(["floating", "resting"], Lever.DYNAMICS, True)
    advance(sim, 100)
    assert sim.get_states(["floating"])[0][0, 2] < 0.99


def test_original_levers_stay_through_changes_and_reset_restores_them(sim):
    offered = {lever: target for lever, target in LEVER_TARGETS.items()
               if lever in sim.features().levers}
    for lever, target in offered.items():
        sim.set_lever([target], lever, False)
        assert sim.get_lever([target], lever).tolist() == [False]
        assert sim.get_lever([target], lever, original=True).tolist() == [True]
    sim.reset()
    for lever, target in offered.items():
        assert sim.get_lever([target], lever).tolist() == [True], lever
        assert sim.get_lever([target], lever, original=True).tolist() == [True]
    with pytest.raises(UnknownEntityError):
        sim.get_lever(["nosuch"], Lever.COLLISION, original=True)


def test_bad_levers_raise_typed_errors(sim):
    with pytest.raises(UnknownEntityError):
        sim.set_lever(["nosuch"], Lever.COLLISION, False)
    with pytest.raises(UnknownEntityError):
        sim.get_lever(["nosuch"], Lever.COLLISION)
    with pytest.raises(UnsupportedLeverError):
        sim.set_lever(["resting"], 99, False)
    if Lever.COLLISION in sim.features().levers:
        with pytest.raises(UnsupportedLeverError):
            sim.set_lever(["arm::hinge"], Lever.COLLISION, False)  # a joint has no geometry


# ---------------------------------------------------------------------- snapshots
def test_snapshots_restore_exactly_or_are_refused_as_declared(sim):
    if not sim.features().snapshots:  # declared missing: refused with a typed error
        with pytest.raises(UnsupportedFeatureError):
            sim.snapshot()
        return
    sim.set_states(["floating"], twists=np.array([[0.5, 0, 0, 0, 0, 1.0]]))
    sim.step(50)
    snap, saved = sim.snapshot(), sim.time

    def run() -> np.ndarray:
        sim.step(100)  # falls and turns, then is held where it is
        sim.set_lever(["floating"], Lever.DYNAMICS, False)
        sim.step(50)
        return np.concatenate(sim.get_states(["floating", "resting"]), axis=1)

    first = run()
    sim.restore(snap)
    assert sim.time == saved
    assert sim.get_lever(["floating"], Lever.DYNAMICS).tolist() == [True]
    assert np.array_equal(run(), first)
