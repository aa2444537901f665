"""Issue 20, point 4 for the other managers: what the model conductor's simulator models switch
off in a simulator is switched back on when its run stops."""
from __future__ import annotations

from ros_processes import REPO

from sim_fidelity.model_conductor.model import COLLISION, POSE
from sim_fidelity.model_conductor.particles import ParticleSimulation
from sim_fidelity.model_conductor.simulation_model import SimulatorModel
from sim_fidelity.simulator import Lever
from sim_fidelity.simulator.engine import MujocoEngine

WORLD = REPO / "worlds" / "stack_test.sdf"


def test_simulation_model_stop_switches_back_what_release_switched_off():
    engine = MujocoEngine.from_file(WORLD)
    model = SimulatorModel("world", engine, entities=r"box_0_0_[01]")
    model.release("box_0_0_0", POSE)
    model.release("box_0_0_0", COLLISION)
    model.release("box_0_0_1", POSE)
    model.take("box_0_0_1", POSE, engine.get_states(["box_0_0_1"])[0][0])  # taken back: on
    assert not engine.get_lever(["box_0_0_0"], Lever.DYNAMICS)[0]
    assert not engine.get_lever(["box_0_0_0"], Lever.COLLISION)[0]
    model.stop()
    for lever in (Lever.DYNAMICS, Lever.COLLISION):
        assert engine.get_lever(["box_0_0_0", "box_0_0_1"], lever).all()


def test_particle_simulation_stop_gives_a_followed_container_its_gravity_back():
    engine = MujocoEngine.from_file(REPO / "worlds" / "conductor_particles_50.sdf")
    model = ParticleSimulation("particles", engine, containers=("cup",))
    model.release("cup", POSE)  # followed: dynamic, without gravity
    assert not engine.get_lever(["cup"], Lever.GRAVITY)[0]
    assert engine.get_lever(["cup"], Lever.DYNAMICS)[0]
    model.stop()
    assert engine.get_lever(["cup"], Lever.GRAVITY)[0] and engine.get_lever(["cup"],
                                                                            Lever.DYNAMICS)[0]
