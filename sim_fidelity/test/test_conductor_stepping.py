"""Registration, parameter resolution and the three stepping modes of the conductor."""
from __future__ import annotations

import threading
import time

import numpy as np
import pytest
from sdf_snippets import GROUND, box_model, world

from sim_fidelity.model_conductor.conductor import Conductor, SceneObject
from sim_fidelity.model_conductor.data_sources import LiveSource, joint_state
from sim_fidelity.model_conductor.demo_models import Carrier, Integrator
from sim_fidelity.model_conductor.errors import ConductorError, ModelError
from sim_fidelity.model_conductor.model import (
    POSE,
    Model,
    Observer,
    Requirement,
    RequirementKind,
    Stepping,
)
from sim_fidelity.model_conductor.simulation_model import SimulatorModel
from sim_fidelity.simulator.engine import MujocoEngine


class Needy(Model):
    """Needs one parameter of every kind."""

    def __init__(self, name="needy", **kwargs):
        super().__init__(name, **kwargs)
        self.got = None

    def requires(self):
        return {"start": Requirement(RequirementKind.POSE, "box"),
                "kind": Requirement(RequirementKind.TYPE, "box"),
                "world_id": Requirement(RequirementKind.MODEL_ID, "world"),
                "gain": Requirement(RequirementKind.VALUE, "gain"),
                "table": Requirement(RequirementKind.PATH, "table"),
                "maybe": Requirement(RequirementKind.VALUE, "maybe", optional=True)}

    def initialise(self, parameters):
        self.got = dict(parameters)

    def step(self, dt):
        pass


def box_world() -> SimulatorModel:
    return SimulatorModel("world", MujocoEngine.from_string(
        world("w", GROUND, box_model("box", 1.0, 2.0, 0.2), step=0.001)))


def test_registration_assigns_unique_ids_and_refuses_clashes():
    conductor = Conductor()
    models = [Integrator(f"m{i}") for i in range(4)]
    ids = [conductor.register(m, main=(i == 0)) for i, m in enumerate(models)]
    assert len(set(ids)) == 4 and [m.id for m in models] == ids
    with pytest.raises(ConductorError, match="'m1' is registered already"):
        conductor.register(Integrator("m1"))
    with pytest.raises(ConductorError, match="'m0' is"):
        conductor.register(Integrator("other"), main=True)
    with pytest.raises(ConductorError, match="stepped by the conductor"):
        Conductor().register(Integrator("c", stepping=Stepping.CLOCK), main=True)


def test_initialisation_resolves_every_kind_of_parameter(tmp_path):
    conductor = Conductor(base_dir=tmp_path)
    needy = Needy()
    conductor.register(needy)  # registered before the world whose pose it needs
    conductor.register(box_world(), main=True)
    conductor.member("needy").parameters.update(gain=2.5, table="t.csv")
    conductor.initialise(scene={"box": SceneObject(type="crate")})
    got = needy.got
    np.testing.assert_allclose(got["start"][:3], [1.0, 2.0, 0.2], atol=1e-9)  # from the world
    assert got["kind"] == "crate"
    assert got["world_id"] == conductor.model("world").id
    assert got["gain"] == 2.5 and got["table"] == str(tmp_path / "t.csv") and got["maybe"] is None
    # a scene pose wins over the world's
    c2, n2 = Conductor(), Needy()
    c2.register(box_world(), main=True)
    c2.register(n2, parameters={"gain": 1, "table": "x"})
    c2.initialise(scene={"box": SceneObject("crate", np.array([3.0, 0, 1, 0, 0, 0, 1]))})
    np.testing.assert_allclose(n2.got["start"][:3], [3.0, 0, 1])


def test_unresolvable_parameters_name_model_and_parameter():
    c = Conductor()
    c.register(box_world(), main=True)
    c.register(Needy(), parameters={"table": "x"})
    with pytest.raises(ModelError, match="model 'needy': parameter 'gain' needs the config value"):
        c.initialise(scene={"box": SceneObject("crate")})

    class Lost(Needy):
        def requires(self):
            return {"p": Requirement(RequirementKind.POSE, "nowhere")}

    c = Conductor()
    c.register(box_world(), main=True)
    c.register(Lost("lost"))
    with pytest.raises(ModelError, match="'lost': parameter 'p' needs the pose of 'nowhere'"):
        c.initialise()


@pytest.mark.parametrize("parallel", [True, False])
def test_service_models_stay_in_lock_step_with_their_periods(parallel):
    conductor = Conductor(step=0.01, parallel=parallel)
    main, fast, slow = (Integrator("main"), Integrator("fast", cost=0.002),
                        Integrator("slow", cost=0.002, period=0.02))
    conductor.register(main, main=True)
    conductor.register(fast)
    conductor.register(slow)
    report = conductor.run(duration=0.1)
    assert report.ticks == 10
    assert main.integrated == pytest.approx(0.1) and fast.integrated == pytest.approx(0.1)
    assert slow.integrated == pytest.approx(0.1)
    steps = {m.name: (m.steps, m.skips, m.lag) for m in report.models}
    assert steps["fast"] == (10, 0, pytest.approx(0.0)) and steps["slow"][:2] == (5, 0)


def test_a_slow_clock_model_skips_ticks_and_falls_behind():
    conductor = Conductor(step=0.01)
    conductor.register(Integrator("main"), main=True)
    slow = Integrator("slow", stepping=Stepping.CLOCK, cost=0.02)
    conductor.register(slow)
    for _ in range(50):  # the main model ticks much faster than 20 ms a step
        conductor.tick()
    conductor.stop()
    report = {m.name: m for m in conductor.report().models}["slow"]
    assert report.skips > 0
    assert report.steps + report.skips == 50  # every tick stepped or skipped
    assert report.lag == pytest.approx(conductor.time - slow.integrated)
    assert report.lag >= report.skips * 0.01 - 1e-9


def test_a_free_model_runs_at_its_own_pace_without_time():
    conductor = Conductor(step=0.01, realtime=True)
    conductor.register(Integrator("main"), main=True)
    free = Integrator("free", stepping=Stepping.FREE)
    conductor.register(free)
    conductor.run(duration=0.2)
    report = {m.name: m for m in conductor.report().models}["free"]
    assert report.steps > 0 and free.integrated == 0.0 and report.lag == 0.0


def test_a_clock_model_holding_a_pose_is_followed_through_its_published_values():
    engine = MujocoEngine.from_string(world("w", GROUND, box_model("box", 0, 0, 2.0), step=0.001))
    main = SimulatorModel("world", engine)
    hand = Carrier("hand", stepping=Stepping.CLOCK, entities=("box",), velocity=(1.0, 0, 0))
    conductor = Conductor(step=0.01, realtime=True)  # paced: the clock thread gets its turns
    conductor.register(main, main=True)
    conductor.register(hand)
    conductor.initialise(responsibilities={("box", POSE): "hand"})
    conductor.run(duration=0.2)
    x = main.value("box", POSE)[0]
    assert 0.0 < x <= 0.2 + 1e-9  # moved by the carrier; never ahead of the main clock
    np.testing.assert_allclose(main.value("box", POSE)[2], 2.0, atol=1e-9)  # not falling


def test_engines_stepped_concurrently_match_engines_stepped_alone():
    """Two worlds SERVICE-stepped in the thread pool end exactly where each ends alone."""
    def drop(name: str, z: float) -> MujocoEngine:  # entity names differ: no shared entity
        return MujocoEngine.from_string(world("d", GROUND, box_model(f"{name}_box", 0, 0, z),
                                              box_model(f"{name}_top", 0.05, 0, z + 0.5)))
    conductor = Conductor(step=0.01)
    conductor.register(SimulatorModel("a", drop("a", 1.0)), main=True)
    conductor.register(SimulatorModel("b", drop("b", 2.0)))
    conductor.run(duration=0.8)  # boxes land and the top ones tip over
    for name, z in (("a", 1.0), ("b", 2.0)):
        alone = drop(name, z)
        alone.step(800)
        names = [f"{name}_box", f"{name}_top"]
        got = conductor.model(name).sim.get_states(names)[0]
        np.testing.assert_array_equal(got, alone.get_states(names)[0])


def test_an_observer_may_not_represent_physical_attributes():
    class Judge(Observer):
        def represents(self):
            return {"box": frozenset({POSE}), "cup": frozenset({"verdict"})}

        def step(self, dt):
            pass

    conductor = Conductor()
    conductor.register(box_world(), main=True)
    conductor.register(Judge("judge"))
    with pytest.raises(ModelError, match="'judge': an observer holds no physical attribute; "
                                         "it represents pose of box"):
        conductor.initialise()


def test_a_live_source_feeds_the_run_until_closed():
    live = LiveSource()
    conductor = Conductor(step=0.01, realtime=True)
    main = Integrator("main")
    conductor.register(main, main=True)

    def robot():
        for k in range(3):
            live.push(joint_state(0.01 * k, ["j"], [k]))
            time.sleep(0.02)
        live.close()

    feeder = threading.Thread(target=robot)
    feeder.start()
    report = conductor.run(duration=5.0, source=live)  # ends when the source closes
    feeder.join()
    assert report.messages == 3 and report.time < 5.0
    assert main.stamps[-1] == pytest.approx(0.02)


def test_a_failing_clock_model_stops_the_run_with_its_name():
    class Broken(Integrator):
        def step(self, dt):
            raise RuntimeError("solver exploded")

    conductor = Conductor(step=0.01, realtime=True)
    conductor.register(Integrator("main"), main=True)
    conductor.register(Broken("broken", stepping=Stepping.CLOCK))
    with pytest.raises(ModelError, match="model 'broken': RuntimeError: solver exploded"):
        conductor.run(duration=0.1)


def test_service_models_step_in_their_own_persistent_threads():
    """The main model steps in the caller's thread, every other SERVICE model in one worker thread
    of its own that lives for the whole run (no thread per tick), and none is left after it."""
    threads: dict[str, set[int]] = {}

    class Seen(Integrator):
        def step(self, dt):
            threads.setdefault(self.name, set()).add(threading.get_ident())
            super().step(dt)

    conductor = Conductor(step=0.01)
    for name in ("main", "a", "b"):
        conductor.register(Seen(name), main=(name == "main"))
    conductor.run(duration=0.1)
    assert threads["main"] == {threading.get_ident()}
    assert len(threads["a"]) == len(threads["b"]) == 1 and threads["a"] != threads["b"]
    assert threading.get_ident() not in threads["a"] | threads["b"]
    assert not [t for t in threading.enumerate() if t.name.startswith("conductor-service")]


@pytest.mark.parametrize("parallel", [True, False])
@pytest.mark.parametrize("main_fails", [False, True])
def test_a_failing_service_model_stops_the_run_with_its_name_and_time(parallel, main_fails):
    class Broken(Integrator):
        def step(self, dt):
            if self.integrated >= 0.03 - 1e-9:
                raise RuntimeError("solver exploded")
            super().step(dt)

    conductor = Conductor(step=0.01, parallel=parallel)
    slow = Integrator("slow", cost=0.005)  # still stepping when the broken one fails
    conductor.register(Broken("broken") if main_fails else Integrator("main"), main=True)
    if not main_fails:
        conductor.register(Broken("broken"))
    conductor.register(slow)
    with pytest.raises(ModelError, match=r"model 'broken': step failed at t = 0\.0300 s: "
                                         "RuntimeError: solver exploded"):
        conductor.run(duration=0.1)
    # in parallel the workers' steps of the failing tick were under way and are waited for; one
    # after the other (the main model last, the others in the order registered) the tick ends at
    # the failure
    assert slow.integrated == pytest.approx(0.04 if parallel or main_fails else 0.03)
    assert not [t for t in threading.enumerate() if t.name.startswith("conductor-service")]
