"""Responsibility transfers between an in-process MuJoCo world and a Python model are exact."""
from __future__ import annotations

import numpy as np
import pytest
from sdf_snippets import GROUND, ball_model, box_model, world

from sim_fidelity.model_conductor.conductor import Conductor, SceneObject
from sim_fidelity.model_conductor.demo_models import Carrier
from sim_fidelity.model_conductor.errors import ResponsibilityError
from sim_fidelity.model_conductor.model import COLLISION, POSE, TWIST, Model
from sim_fidelity.model_conductor.simulation_model import SimulatorModel
from sim_fidelity.simulator.engine import MujocoEngine
from sim_fidelity.simulator.levers import HOLD_FACTOR
from sim_fidelity.simulator.protocol import Lever

G = 9.81
H = 0.001  # engine step
BALL = ball_model("ball", 0, 0, 5)


def ensemble(velocity=(0.5, 0.0, 1.0)) -> tuple[Conductor, SimulatorModel, Carrier]:
    engine = MujocoEngine.from_string(world("fall", GROUND, BALL, step=H))
    main = SimulatorModel("world", engine)
    carrier = Carrier("hand", entities=("ball",), velocity=velocity)
    conductor = Conductor(step=0.01)
    conductor.register(main, main=True)
    conductor.register(carrier)
    conductor.initialise()
    return conductor, main, carrier


def test_held_pose_follows_the_holder_and_release_continues_with_its_velocity():
    conductor, main, carrier = ensemble()
    engine = main.sim
    for _ in range(20):  # 0.2 s of free fall under the main simulation
        conductor.tick()
    assert conductor.holder("ball", POSE) == "world"
    z_before = engine.get_states(["ball"])[0][0, 2]
    assert z_before < 5.0 - 0.5 * G * 0.2 ** 2 + 0.01

    changes = conductor.transfer("ball", POSE, "hand", cause="grasp")
    assert [(c.attribute, c.from_model, c.to_model, c.cause) for c in changes] == [
        (POSE, "world", "hand", "grasp"), (TWIST, "world", "hand", "grasp")]
    assert not engine.get_lever(["ball"], Lever.DYNAMICS)[0]  # not integrated while held
    for _ in range(30):
        conductor.tick()
        held = carrier.value("ball", POSE)
        np.testing.assert_allclose(main.value("ball", POSE), held, rtol=0, atol=1e-12)
    # the carrier moved it from where the world had it, at its velocity
    np.testing.assert_allclose(held[:3] - [0, 0, z_before], np.multiply([0.5, 0, 1.0], 0.3),
                               atol=1e-9)

    release_pose, release_twist = carrier.value("ball", POSE), carrier.value("ball", TWIST)
    conductor.transfer("ball", POSE, "world", cause="release")
    assert engine.get_lever(["ball"], Lever.DYNAMICS)[0]
    for k in range(1, 31):
        conductor.tick()
        tau = 0.01 * k
        expected = release_pose[:3] + release_twist[:3] * tau + 0.5 * np.array([0, 0, -G]) * tau**2
        # MuJoCo's semi-implicit Euler lags the parabola by g*h*tau/2 (1.5 mm after 0.3 s);
        # losing the velocity would be off by |v|*tau (0.34 m)
        error = np.linalg.norm(main.value("ball", POSE)[:3] - expected)
        assert error <= 0.5 * G * H * tau + 1e-9, (tau, error)
    assert [c.cause for c in conductor.responsibilities.log[-2:]] == ["release", "release"]


def test_a_world_reads_its_states_once_a_step():
    """The values the conductor passes on, and any value or output asked for before the next
    step or change, come from one read of the simulator's states."""
    conductor, main, carrier = ensemble()
    reads = []
    get_states = main.sim.get_states
    main.sim.get_states = lambda names: reads.append(list(names)) or get_states(names)
    for _ in range(3):
        conductor.tick()
        pose, twist, output = main.value("ball", POSE), main.value("ball", TWIST), main.output()
        np.testing.assert_array_equal(output["poses"]["ball"], pose)
        np.testing.assert_array_equal(output["twists"]["ball"], twist)
        np.testing.assert_array_equal(carrier.value("ball", POSE), pose)  # what it followed
    assert reads == [["ball"]] * 3
    conductor.transfer("ball", POSE, "hand")  # a change through the model is read anew
    conductor.tick()
    np.testing.assert_allclose(main.value("ball", POSE), carrier.value("ball", POSE), atol=1e-12)


def test_a_world_following_many_bodies_sets_them_with_one_call_a_tick():
    """Eight boxes held by a carrier: the world sets all of them with one ``set_states`` per
    tick, each at the carrier's pose."""
    names = [f"box{i}" for i in range(8)]
    engine = MujocoEngine.from_string(world("many", GROUND, *(
        box_model(n, i, 0, 1.0, edge=0.2) for i, n in enumerate(names)), step=H))
    main = SimulatorModel("world", engine)
    hand = Carrier("hand", entities=tuple(names), velocity=(0, 0, 0.5))
    conductor = Conductor(step=0.01)
    conductor.register(main, main=True)
    conductor.register(hand)
    conductor.initialise(responsibilities={(n, POSE): "hand" for n in names})
    calls = []
    set_states = engine.set_states
    engine.set_states = lambda ns, *a, **k: calls.append(list(ns)) or set_states(ns, *a, **k)
    for _ in range(5):
        conductor.tick()
    assert calls == [names] * 5
    poses = engine.get_states(names)[0]
    np.testing.assert_allclose(poses, [hand.value(n, POSE) for n in names], rtol=0, atol=1e-12)
    np.testing.assert_allclose(poses[:, 2], 1.0 + 0.5 * 0.05, atol=1e-12)


class Watched(SimulatorModel):
    """A world that records how far the ball moves in each of its steps (before the follow)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.moved: list[float] = []

    def step(self, dt):
        start = self.sim.get_states(["ball"])[0][0, :3]
        super().step(dt)
        self.moved.append(float(np.linalg.norm(self.sim.get_states(["ball"])[0][0, :3] - start)))


@pytest.mark.parametrize("tick", [0.001, 0.005])
def test_a_held_body_under_load_moves_within_a_tick_by_the_stated_bound_only(tick):
    """A 1 kg box rests on a ball another model holds still. The world's ball (DYNAMICS lever
    off: damped, not welded) is back at the holder's pose after every tick; within a tick of n
    steps the box's weight F moves it by at most n h^2 F / (HOLD_FACTOR M) (docs/conductor.md)."""
    mass, box = 0.2, 1.0
    engine = MujocoEngine.from_string(world("w", GROUND, ball_model("ball", 0, 0, 1.0, mass=mass),
                                            box_model("box", 0, 0, 1.2, edge=0.3, mass=box),
                                            step=H))
    main = Watched("world", engine, entities="^ball$")
    hand = Carrier("hand", entities=("ball",), velocity=(0, 0, 0))
    conductor = Conductor(step=tick)
    conductor.register(main, main=True)
    conductor.register(hand)
    conductor.initialise(responsibilities={("ball", POSE): "hand"})
    ticks = int(round(0.6 / tick))
    for _ in range(ticks):  # the box lands and settles on the ball
        conductor.tick()
        np.testing.assert_array_equal(main.value("ball", POSE), hand.value("ball", POSE))
    moved = max(main.moved[-ticks // 6:])  # the last 0.1 s
    bound = round(tick / H) * H**2 * box * G / (HOLD_FACTOR * mass)
    assert 0.5 * bound < moved <= 1.01 * bound, (moved, bound)


def test_twist_estimated_from_followed_poses_when_the_holder_gives_no_twist():
    """A holder that computes only the pose: the world takes the pose back with the velocity
    it saw the pose move at."""
    conductor, main, carrier = ensemble(velocity=(0.0, 0.4, 0.0))
    conductor.responsibilities.twist_follows_pose = False
    conductor.transfer("ball", POSE, "hand", cause="grasp")
    assert conductor.holder("ball", TWIST) == "world"
    for _ in range(10):
        conductor.tick()
    np.testing.assert_allclose(main.value("ball", TWIST)[:3], [0, 0.4, 0], atol=1e-9)
    conductor.transfer("ball", POSE, "world", cause="release")
    np.testing.assert_allclose(main.sim.get_states(["ball"])[1][0, :3], [0, 0.4, 0], atol=1e-9)


def test_collision_held_elsewhere_turns_contacts_off_in_the_world():
    engine = MujocoEngine.from_string(world("fall", GROUND, BALL, step=H))
    main = SimulatorModel("world", engine)

    class Shape(Carrier):
        def represents(self):
            return {"ball": frozenset((POSE, TWIST, COLLISION))}

        def value(self, entity, attribute):
            return True if attribute == COLLISION else super().value(entity, attribute)

    conductor = Conductor(step=0.01)
    conductor.register(main, main=True)
    conductor.register(Shape("shape", entities=("ball",)))
    conductor.initialise(responsibilities={("ball", COLLISION): "shape"})
    assert not engine.get_lever(["ball"], Lever.COLLISION)[0]
    assert engine.get_lever(["ball"], Lever.DYNAMICS)[0]  # the world still integrates it
    conductor.transfer("ball", COLLISION, "world", cause="back")
    assert engine.get_lever(["ball"], Lever.COLLISION)[0]


def test_initial_allocation_from_config_and_scene_pose():
    engine = MujocoEngine.from_string(world("fall", GROUND, BALL, step=H))
    main = SimulatorModel("world", engine)
    carrier = Carrier("hand", entities=("ball",), velocity=(1.0, 0, 0))
    conductor = Conductor(step=0.01)
    conductor.register(main, main=True)
    conductor.register(carrier)
    start = np.array([1.0, 2.0, 3.0, 0, 0, 0, 1])
    conductor.initialise(scene={"ball": SceneObject("ball", start)},
                         responsibilities={("ball", POSE): "hand"})
    assert conductor.holder("ball", POSE) == conductor.holder("ball", TWIST) == "hand"
    np.testing.assert_allclose(main.value("ball", POSE), start, atol=1e-12)
    conductor.tick()
    np.testing.assert_allclose(main.value("ball", POSE)[:3], [1.01, 2.0, 3.0], atol=1e-12)
    assert [(c.from_model, c.cause) for c in conductor.responsibilities.log] == [
        ("", "config")] * 3  # pose, twist, collision of the ball


def test_transfer_to_a_model_that_does_not_represent_the_pair_is_refused():
    conductor, _, _ = ensemble()
    with pytest.raises(ResponsibilityError, match="'hand' cannot hold 'collision' of 'ball'"):
        conductor.transfer("ball", COLLISION, "hand")
    with pytest.raises(ResponsibilityError, match="no model represents entity 'cup'"):
        conductor.transfer("cup", POSE, "hand")


class Cooling(Model):
    """Newton cooling of a cup of coffee toward 20 degrees: holds ``temperature`` of the cup."""

    def __init__(self, name, rate=0.5):
        super().__init__(name)
        self.rate, self.t = rate, 90.0

    def represents(self):
        return {"cup": frozenset({"temperature"})}

    def step(self, dt):
        self.t = 20.0 + (self.t - 20.0) * np.exp(-self.rate * dt)

    def value(self, entity, attribute):
        return self.t

    def follow(self, entity, attribute, value):
        self.t = value

    def take(self, entity, attribute, value):
        self.t = value


class Thermos(Cooling):
    """Keeps the temperature it was given (rate 0)."""

    def __init__(self, name):
        super().__init__(name, rate=0.0)


def test_free_form_attribute_moves_between_non_physics_models():
    conductor = Conductor(step=0.1)
    main = SimulatorModel("world", MujocoEngine.from_string(world("w", GROUND, BALL, step=H)))
    conductor.register(main, main=True)
    cooling, thermos = Cooling("cooling"), Thermos("thermos")
    conductor.register(cooling)
    conductor.register(thermos)
    conductor.initialise()
    assert conductor.holder("cup", "temperature") == "cooling"  # the first that represents it
    for _ in range(10):
        conductor.tick()
    t1 = 20.0 + 70.0 * np.exp(-0.5)
    assert cooling.t == pytest.approx(t1) and thermos.t == cooling.t  # the follower follows
    conductor.transfer("cup", "temperature", "thermos", cause="poured into the thermos")
    for _ in range(10):
        conductor.tick()
    assert thermos.t == pytest.approx(t1) and cooling.t == thermos.t  # kept, and followed
    conductor.transfer("cup", "temperature", "cooling", cause="poured out")
    conductor.tick()
    assert cooling.t == pytest.approx(20.0 + (t1 - 20.0) * np.exp(-0.05))
