"""How a Table 2 replay drives the robot from a recorded JointState
(model_conductor/scenarios/drive.py): the arm by position targets, the fingers by the recorded
efforts as torques with the finger servos toward the recorded positions (``impedance``, the
default), by the efforts alone (``effort``) or by the positions alone (``position``)."""
from __future__ import annotations

import numpy as np
import pytest

from sim_fidelity.model_conductor.scenarios import DEFAULT_FINGER_DRIVE, FINGER_DRIVES
from sim_fidelity.model_conductor.scenarios.drive import ReplayWorld
from sim_fidelity.model_conductor.scenarios.recording import IK_SEED, open_fingers
from sim_fidelity.model_conductor.scenarios.replay import build_world, pose_robot
from sim_fidelity.simulator.engine import MujocoEngine
from sim_fidelity.simulator.protocol import Lever
from sim_fidelity.world_generators import conductor_scenarios as cs
from sim_fidelity.world_generators import ur5e_hand3 as arm

ARM = [f"arm::{j}" for j in arm.joint_names()[:6]]
FINGERS = [f"arm::{j}" for j in arm.finger_joints()]
START = np.r_[IK_SEED, open_fingers()]


def _world(drive: str) -> ReplayWorld:
    world = ReplayWorld("world", MujocoEngine.from_string(cs.scenario_world_sdf("drive", {})),
                        finger_drive=drive)
    pose_robot(world.sim, START)
    return world


def _message(positions: np.ndarray, efforts: np.ndarray) -> dict:
    names = arm.joint_names()
    return {"name": names[::-1], "position": positions[::-1], "effort": efforts[::-1]}


def _actuators(world: ReplayWorld, joints: list[str]) -> np.ndarray:
    e = world.sim
    by_joint = {c.joint: e.index.actuator_id[p] for p, c in e.controllers.items()}
    return np.array([by_joint[j] for j in joints])


def test_effort_drive_applies_the_recorded_finger_torques_and_ignores_their_positions():
    world = _world("effort")
    e = world.sim
    assert not e.get_lever(FINGERS, Lever.ACTUATION).any()
    assert e.get_lever(ARM, Lever.ACTUATION).all()
    target = START.copy()
    target[0] += 0.05  # the arm's first joint moves
    target[6:] = 1.2  # finger positions the effort drive must not follow
    efforts = np.r_[np.zeros(6), 0.3, 0.1, 0.3, 0.1, 5.0, -5.0]  # the last two beyond the limit
    world.input("/joint_states", _message(target, efforts))
    _, dofs = e.index.joint_addresses(e.model, FINGERS)
    np.testing.assert_allclose(e.data.qfrc_applied[dofs], [0.3, 0.1, 0.3, 0.1, 1.5, -1.5])
    np.testing.assert_allclose(e.data.ctrl[_actuators(world, ARM)], target[:6])
    e.run_for(0.2)
    q = e.joint_positions(ARM + FINGERS)
    assert q[0] == pytest.approx(target[0], abs=0.01)  # the arm servo followed its target
    proximal = q[6:][::2]
    assert (proximal[:2] > START[6:][::2][:2] + 0.2).all()  # pushed closed by 0.3 N m
    assert q[11] < START[11] - 0.2  # -1.5 N m on finger_b's distal joint opens it


def test_position_drive_servos_the_fingers_to_their_recorded_positions():
    world = _world("position")
    e = world.sim
    assert e.get_lever(FINGERS, Lever.ACTUATION).all()
    target = START.copy()
    target[6:] = np.tile([0.4, 0.5], 3)
    world.input("/joint_states", _message(target, np.full(12, 1.0)))
    np.testing.assert_allclose(e.data.ctrl[_actuators(world, FINGERS)], target[6:])
    _, dofs = e.index.joint_addresses(e.model, FINGERS)
    assert not e.data.qfrc_applied[dofs].any()
    e.run_for(0.5)
    np.testing.assert_allclose(e.joint_positions(FINGERS), target[6:], atol=0.03)


def test_impedance_drive_adds_the_recorded_torque_to_the_servo_toward_the_recorded_position():
    world = _world("impedance")
    e = world.sim
    assert e.get_lever(FINGERS, Lever.ACTUATION).all()
    torque = np.tile([0.3, 0.0], 3)
    world.input("/joint_states", _message(START, np.r_[np.zeros(6), torque]))
    np.testing.assert_allclose(e.data.ctrl[_actuators(world, FINGERS)], START[6:])
    _, dofs = e.index.joint_addresses(e.model, FINGERS)
    np.testing.assert_allclose(e.data.qfrc_applied[dofs], torque)
    e.run_for(0.5)
    # at rest the servo (p_gain 4 N m/rad) balances the torque: 0.3 / 4 rad past the target
    offset = torque[0] / arm.FINGER_GAINS[0]
    np.testing.assert_allclose(e.joint_positions(FINGERS)[::2], START[6::2] + offset, atol=0.015)
    np.testing.assert_allclose(e.joint_positions(FINGERS)[1::2], START[7::2], atol=0.03)


def test_every_method_gets_the_drive_asked_for_and_bad_drives_are_named():
    assert DEFAULT_FINGER_DRIVE == "impedance"
    assert set(FINGER_DRIVES) == {"impedance", "effort", "position"}
    scene = {"ball": {"type": "ball", "pose": [0.3, -0.4, 0.9, 0, 0, 0, 1]}}
    for method in ("ensemble", "baseline_1", "baseline_2", "baseline_3"):
        for drive in FINGER_DRIVES:
            world = build_world(method, scene, "ball", drive)
            assert world.finger_drive == drive
            assert world.sim.get_lever(FINGERS, Lever.ACTUATION).all() == (drive != "effort")
    with pytest.raises(ValueError, match="finger drive must be one of impedance, effort, "
                                         "position; got 'torque'"):
        build_world("baseline_1", scene, "ball", "torque")


def test_cli_takes_the_finger_drive(tmp_path):
    from sim_fidelity.cli import build_parser

    parser = build_parser()
    args = parser.parse_args(["example", "conductor", "--recordings", str(tmp_path)])
    assert args.finger_drive == "impedance"
    for drive in FINGER_DRIVES:
        args = parser.parse_args(["example", "conductor", "--finger-drive", drive])
        assert args.finger_drive == drive
    with pytest.raises(SystemExit):
        parser.parse_args(["example", "conductor", "--finger-drive", "torque"])
