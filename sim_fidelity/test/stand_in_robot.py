"""A stand-in for the truck unloader (``UnloaderIO``) for the controller's decision tests: it
holds its joints exactly where commanded, its packets stay where they are put and nothing is ever
gripped, so the controller's decisions are a function of the packets' poses, the joints and the
time since the last unload. With the packet sizes and the scene of a low packet in the lane before
a standing wall packet, and the targets of a controller's planned move."""
from __future__ import annotations

import numpy as np

from sim_fidelity.truck.controller import MAX_SPEED, UnloadingController


class StandInRobot:
    """UnloaderIO with perfect joints, static packets and no grip (see this module's docstring)."""

    def __init__(self, centres, sizes, drive: float = 0.0):
        self.packets = [f"packet_{i}" for i in range(len(centres))]
        self.packet_half = np.asarray(sizes, float) / 2
        self.poses = np.zeros((len(centres), 7))
        self.poses[:, :3], self.poses[:, 6] = centres, 1.0
        self.in_truck = np.ones(len(centres), bool)
        self.joints = dict.fromkeys(MAX_SPEED, 0.0)
        self.joints["drive"] = drive
        self.time, self.unloaded, self.suction = 0.0, 0, False

    def positions(self, joints):
        return np.array([self.joints[j] for j in joints])

    def command(self, targets):
        self.joints.update(targets)

    def suction_on(self, on):
        self.suction = on

    def suction_hold(self):
        pass

    def held_packets(self):
        return np.zeros(0, int)

    def packet_poses(self, rows):
        return self.poses[rows]

    def model_x(self):
        return self.joints["drive"]  # model frame at the drive joint's position


LOW = [0.5, 0.5, 0.5]  # a low packet: below the wall height, tall enough to be picked
TALL = [0.4, 0.4, 0.9]  # a standing wall packet


def scene(block: float, wall: float, drive: float = 0.0) -> StandInRobot:
    """A low packet in the lane with its near face at ``block``, a tall standing packet at
    y = 0.5 with its near face at ``wall``."""
    return StandInRobot([[block + 0.25, 0.0, 0.25], [wall + 0.2, 0.5, 0.45]], [LOW, TALL], drive)


def moves(controller: UnloadingController):
    return [controller.move, *controller.queue]


def targets(controller: UnloadingController, phase: str) -> dict:
    move = next(m for m in moves(controller) if m.phase == phase)
    return move.targets() if callable(move.targets) else move.targets
