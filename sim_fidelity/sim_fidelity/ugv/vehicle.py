"""The UGV on a field in process, without ROS: fast missions for the pipeline.

:class:`UgvSim` holds a :class:`~sim_fidelity.simulator.engine.MujocoEngine` on one of the
course's worlds, drives the vehicle through its Ackermann plugin (the same mapping ``sim_server``
uses for ``/model/ugv/cmd_ackermann``) and reads its NavSat and IMU through the same
:class:`~sim_fidelity.simulator.vehicle_sensors.VehicleSensors`, so a mission sees here what it
sees over ROS. ``engine`` is the Simulator (protocol) a kernel manager acts on (pose, pitch).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..simulator import poses
from ..simulator.actuators import AckermannDrive, ackermann_drives
from ..simulator.engine import MujocoEngine
from ..simulator.errors import UnknownEntityError
from ..simulator.vehicle_sensors import GpsSample, ImuSample, VehicleSensors
from .course import MODEL, world_path


class UgvSim:
    """One vehicle (model ``model``) in an engine; time moves only by :meth:`step`."""

    def __init__(self, engine: MujocoEngine, model: str = MODEL, seed: int | None = None):
        if model not in engine.world.models:
            raise UnknownEntityError(model, f"no such model in world '{engine.world.name}'")
        drives = [d for d in ackermann_drives(engine.world).values() if d.model == model]
        if len(drives) != 1:
            raise UnknownEntityError(model, f"needs exactly one Ackermann steering plugin, has "
                                     f"{len(drives)}")
        self.engine, self.model = engine, model
        self.drive: AckermannDrive = drives[0]
        self.sensors = VehicleSensors(engine, seed=seed)
        own = [s for s in self.sensors.specs if s.link.split("::")[0] == model]
        self.gps_sensor = next((s.name for s in own if s.kind == "navsat"), None)
        self.imu_sensor = next((s.name for s in own if s.kind == "imu"), None)
        if self.gps_sensor is None or self.imu_sensor is None:
            raise UnknownEntityError(model, "needs a navsat and an imu sensor")
        self.sensors.attach()
        self._command = (0.0, 0.0)

    @classmethod
    def from_world(cls, world: str | Path = "design", seed: int | None = None,
                   model: str = MODEL, **engine_options) -> "UgvSim":
        """``world``: ``"design"``, ``"deploy"`` or an SDF file; ``seed`` seeds sensor noise."""
        return cls(MujocoEngine.from_file(world_path(world), **engine_options), model, seed)

    @property
    def origin(self):
        """The geodetic origin of the world frame (``latitude``, ``longitude``, ``altitude``)."""
        return self.sensors.origin

    @property
    def time(self) -> float:
        return self.engine.time

    def command(self, speed: float, steering_angle: float) -> None:
        """Hold a bicycle-model command (m/s at the rear axle, rad) until the next one."""
        self.engine.set_joint_commands(*self.drive.targets(float(speed), float(steering_angle)))
        self._command = (float(speed), float(steering_angle))

    @property
    def last_command(self) -> tuple[float, float]:
        return self._command

    def step(self, seconds: float) -> None:
        """Advance sim time by ``seconds`` (rounded to whole physics steps)."""
        if seconds < 0:
            raise ValueError(f"cannot step back in time ({seconds} s)")
        self.engine.step(int(round(seconds / self.engine.step_size)))

    def reset(self, seed: int | None = None) -> None:
        """The world back to its start, the command to zero, the sensors' schedule restarted;
        ``seed`` restarts their noise from it (else the noise goes on: a new run, new noise)."""
        self.engine.reset()
        self.sensors.reset(seed)
        self._command = (0.0, 0.0)

    def gps(self) -> GpsSample | None:
        """The newest GPS fix (latitude, longitude, altitude with the SDF's noise, at its rate);
        None before the first."""
        return self.sensors.latest(self.gps_sensor)

    def imu(self) -> ImuSample | None:
        """The newest IMU sample (orientation, ``.rpy`` for pitch); None before the first."""
        return self.sensors.latest(self.imu_sensor)

    def pose(self) -> np.ndarray:
        """True pose of the vehicle ``[x y z qx qy qz qw]`` in the world (ENU) frame."""
        return self.engine.get_states([self.model])[0][0]

    def twist(self) -> np.ndarray:
        """True twist ``[vx vy vz wx wy wz]`` in the world frame."""
        return self.engine.get_states([self.model])[1][0]

    def rpy(self) -> np.ndarray:
        """True roll, pitch, yaw of the vehicle (rad)."""
        return poses.quat_to_rpy(self.pose()[3:])
