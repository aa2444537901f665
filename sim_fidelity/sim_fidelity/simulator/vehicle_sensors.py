"""A world's NavSat (GPS) and IMU sensors, sampled at their SDF rates in sim time.

The one computation ``sim_server`` (``ros/model_topics.py``) and the in-process
:class:`~sim_fidelity.ugv.vehicle.UgvSim` share. :class:`VehicleSensors` is a step hook: after
the step on which a sensor's next sample falls due (every ``1 / update_rate`` s of sim time) it
takes the sample from the engine's state:

* ``navsat``: the sensor origin's world position is a point of the local tangent plane (ENU) at
  the world's ``<spherical_coordinates>`` (Gazebo's default, latitude and longitude 0, without
  them); Gaussian noise from ``<navsat><position_sensing><horizontal|vertical><noise>`` is added
  in metres (east and north alike, then up), then the point is turned into latitude, longitude
  and altitude (:mod:`.geodesy`). Gazebo's NavSat adds its noise to the angles; metres keep the
  SDF's stddev meaningful.
* ``imu``: orientation of the sensor frame in the world (ENU) frame, angular velocity and linear
  acceleration (proper: at rest it reads +g upwards) in the sensor frame, each axis with the
  Gaussian noise of ``<imu><angular_velocity|linear_acceleration><x|y|z><noise>``.

Samples queue until :meth:`VehicleSensors.take` collects them (the server publishes each one,
stamped with its own sim time) and the latest of each sensor stays readable (:meth:`latest`).

An IMU's pitch is a settable sensor value, named ``<sensor>/pitch`` (e.g.
``ugv::base_link::imu/pitch``): :meth:`VehicleSensors.set_sensor_values` overrides it (NaN
releases), and while it holds, every sample read (:meth:`latest`, :meth:`take`) reports that
pitch with the roll and yaw the state gives. The reality-gap kernel manager uses it to have the
simulation return a kernel's pitch (paper 001: a kernel maps to "a new sensor state - position,
orientation and pitch"), which a flat design field cannot hold by its pose alone.

The noise comes from one seeded generator, so a seeded run repeats exactly; a reset keeps the
generator going unless it is given a seed.
"""
from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from collections import deque
from dataclasses import dataclass, replace
from types import SimpleNamespace
from typing import Sequence

import mujoco
import numpy as np

from . import geodesy, poses
from .errors import InvalidOperationError, SdfError, UnknownEntityError
from .sdf.records import LoadedWorld, SensorRecord

KINDS = ("navsat", "imu")
PITCH = "/pitch"  # suffix of an IMU's settable pitch value
QUEUE_LIMIT = 4096  # samples kept for take(); older ones go (a reader that never takes)


@dataclass(frozen=True)
class Noise:
    """Gaussian noise (SDF ``<noise type="gaussian">``); ``none`` for an absent element."""

    mean: float = 0.0
    stddev: float = 0.0

    @classmethod
    def read(cls, parent: ET.Element | None, path: str, sensor: str) -> "Noise":
        el = parent.find(path) if parent is not None else None
        if el is None:
            return cls()
        kind = el.get("type", "gaussian")
        if kind == "none":
            return cls()
        if kind not in ("gaussian", "gaussian_quantized"):
            raise SdfError(f"sensor '{sensor}': noise type '{kind}' is not supported "
                           "(gaussian or none)", element="noise")
        try:
            mean, std = float(el.findtext("mean", "0")), float(el.findtext("stddev", "0"))
        except ValueError:
            raise SdfError(f"sensor '{sensor}': noise <mean>/<stddev> must be numbers",
                           element="noise") from None
        if std < 0:
            raise SdfError(f"sensor '{sensor}': noise stddev must be >= 0, got {std}",
                           element="stddev")
        return cls(mean, std)


@dataclass(frozen=True)
class SensorSpec:
    """One NavSat or IMU sensor: where it is, how often it samples, its noise per axis."""

    name: str  # scoped: model::link::sensor
    kind: str  # navsat | imu
    link: str
    pose: np.ndarray  # (7,) in the link frame, xyzw
    rate: float  # Hz
    topic: str
    frame_id: str
    noise: tuple[Noise, ...]  # navsat: (horizontal, vertical); imu: (wx, wy, wz, ax, ay, az)

    @property
    def period(self) -> float:
        return 1.0 / self.rate

    def stddev(self) -> np.ndarray:
        return np.array([n.stddev for n in self.noise])


@dataclass(frozen=True)
class GpsSample:
    time: float
    latitude: float  # degrees
    longitude: float  # degrees
    altitude: float  # m above the WGS-84 ellipsoid
    covariance: np.ndarray  # (3,) variances east, north, up (m^2)


@dataclass(frozen=True)
class ImuSample:
    time: float
    orientation: np.ndarray  # (4,) xyzw, sensor frame in ENU
    angular_velocity: np.ndarray  # (3,) rad/s, sensor frame
    linear_acceleration: np.ndarray  # (3,) m/s^2, sensor frame
    angular_velocity_variance: np.ndarray  # (3,)
    linear_acceleration_variance: np.ndarray  # (3,)

    @property
    def rpy(self) -> np.ndarray:
        """Roll, pitch, yaw (rad) of the orientation (REP 103: pitch > 0 is nose down)."""
        return poses.quat_to_rpy(self.orientation)


Sample = GpsSample | ImuSample


def world_origin(world: LoadedWorld) -> SimpleNamespace:
    """The geodetic origin of the world frame from ``<spherical_coordinates>`` of the world's
    file (latitude, longitude 0 and elevation 0 without it, as in Gazebo)."""
    origin = SimpleNamespace(latitude=0.0, longitude=0.0, altitude=0.0)
    if world.source == "<string>":
        return origin
    try:
        root = ET.parse(world.source).getroot()
    except (OSError, ET.ParseError):
        return origin
    sc = root.find("world/spherical_coordinates")
    if sc is None:
        return origin
    orientation = (sc.findtext("world_frame_orientation") or "ENU").strip()
    heading = float(sc.findtext("heading_deg") or 0.0)
    if orientation != "ENU" or heading != 0.0:
        raise SdfError("<spherical_coordinates>: only an ENU world frame with heading 0 is "
                       f"supported, got {orientation} heading {heading}", file=world.source,
                       element="spherical_coordinates")
    try:
        return SimpleNamespace(latitude=float(sc.findtext("latitude_deg") or 0.0),
                               longitude=float(sc.findtext("longitude_deg") or 0.0),
                               altitude=float(sc.findtext("elevation") or 0.0))
    except ValueError:
        raise SdfError("<spherical_coordinates>: latitude_deg, longitude_deg and elevation "
                       "must be numbers", file=world.source,
                       element="spherical_coordinates") from None


def sensor_specs(world: LoadedWorld) -> list[SensorSpec]:
    """The world's NavSat and IMU sensors (a bad rate or noise raises SdfError)."""
    return [_spec(name, rec) for name, rec in world.sensors.items() if rec.type in KINDS]


def _spec(name: str, rec: SensorRecord) -> SensorSpec:
    root = ET.fromstring(rec.xml)
    if rec.update_rate <= 0:
        raise SdfError(f"sensor '{name}': a {rec.type} sensor needs a positive <update_rate>",
                       element="update_rate")
    frame = (root.findtext("gz_frame_id") or root.findtext("frame_id") or "").strip()
    if rec.type == "navsat":
        pos = root.find("navsat/position_sensing")
        noise = (Noise.read(pos, "horizontal/noise", name), Noise.read(pos, "vertical/noise", name))
    else:
        imu = root.find("imu")
        noise = tuple(Noise.read(imu, f"{quantity}/{axis}/noise", name)
                      for quantity in ("angular_velocity", "linear_acceleration")
                      for axis in "xyz")
    return SensorSpec(name, rec.type, rec.parent, np.asarray(rec.pose, float), rec.update_rate,
                      rec.topic or "/" + name.replace("::", "/"),
                      frame or rec.parent.split("::")[-1], noise)


class VehicleSensors:
    """The NavSat and IMU sensors of one engine, sampled after the steps they fall due on.

    ``engine`` is the in-process :class:`~.engine.MujocoEngine` (``world``, ``model``, ``data``,
    ``get_states``, ``time``, ``hooks``). Call :meth:`attach` to sample as the engine steps.
    """

    def __init__(self, engine, seed: int | None = None):
        self.engine = engine
        self.specs = sensor_specs(engine.world)
        self.by_name = {s.name: s for s in self.specs}
        self.origin = world_origin(engine.world) if self.specs else None
        self.rng = np.random.default_rng(seed)
        self._links = [s.link for s in self.specs]
        self._poses = np.array([s.pose for s in self.specs], float).reshape(-1, 7)
        self._due = np.zeros(len(self.specs))  # sim time of each sensor's next sample
        self._next = np.inf  # the earliest of them
        self._last = engine.time
        self._schedule(engine.time)
        self._latest: dict[str, Sample] = {}
        self._queue: deque[tuple[SensorSpec, Sample]] = deque(maxlen=QUEUE_LIMIT)
        self.settable = [s.name + PITCH for s in self.specs if s.kind == "imu"]
        self.pitch = {s.name: math.nan for s in self.specs if s.kind == "imu"}  # NaN: computed

    def __len__(self) -> int:
        return len(self.specs)

    def attach(self) -> None:
        if self.specs:
            self.engine.hooks.add(self)

    def detach(self) -> None:
        self.engine.hooks.remove(self)

    def __call__(self, engine) -> None:
        """Step hook: take every sample that is due."""
        t = engine.time
        if t < self._last:  # the engine went back in time (a reset): start again
            self.reset()
        self._last = t
        if t + 1e-9 < self._next:
            return
        due = np.flatnonzero(self._due <= t + 1e-9)
        for i, sample in zip(due, self.sample(due)):
            spec = self.specs[i]
            self._latest[spec.name] = sample
            self._queue.append((spec, sample))
        self._schedule(t, due)

    def _schedule(self, t: float, which: np.ndarray | None = None) -> None:
        """The next sample of each sensor in ``which`` (all by default) after time ``t``: the
        next multiple of its period, so samples fall on the period's grid (t = 1, 2, ... s)."""
        which = np.arange(len(self.specs)) if which is None else which
        period = np.array([self.specs[i].period for i in which])
        self._due[which] = (np.floor(t / period + 1e-6) + 1) * period
        self._next = float(self._due.min(initial=np.inf))

    def reset(self, seed: int | None = None) -> None:
        """Forget the samples and restart the schedule (after an engine reset); ``seed``
        restarts the noise from that seed, else it goes on (a new run, new noise)."""
        self._last = self.engine.time
        self._schedule(self._last)
        self._latest.clear()
        self._queue.clear()
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def take(self) -> list[tuple[SensorSpec, Sample]]:
        """The samples taken since the last call (the newest ``QUEUE_LIMIT``), oldest first,
        with the pitch overrides in force now."""
        out = [(spec, self._overridden(spec.name, sample)) for spec, sample in self._queue]
        self._queue.clear()
        return out

    def latest(self, name: str) -> Sample | None:
        """The newest sample of a sensor (None before its first), with its pitch override."""
        if name not in self.by_name:
            raise KeyError(f"'{name}' is not a NavSat or IMU sensor; sensors: "
                           f"{sorted(self.by_name)}")
        sample = self._latest.get(name)
        return None if sample is None else self._overridden(name, sample)

    def set_sensor_values(self, names: Sequence[str], values: Sequence[float]) -> None:
        """Override the pitch of the IMUs named ``<sensor>/pitch`` (radians, REP 103: positive
        nose down); NaN releases. An unknown name or a count mismatch changes nothing."""
        names, values = list(names), np.asarray(values, float).reshape(-1)
        if len(names) != len(values):
            raise InvalidOperationError(f"{len(names)} names but {len(values)} values")
        unknown = [n for n in names if n not in self.settable]
        if unknown:
            raise UnknownEntityError(unknown[0], f"not a settable IMU value (settable: "
                                     f"{self.settable})")
        for name, value in zip(names, values):
            self.pitch[name.removesuffix(PITCH)] = float(value)

    def _overridden(self, name: str, sample: Sample) -> Sample:
        """``sample`` of sensor ``name`` with its pitch override, if one holds."""
        pitch = self.pitch.get(name, math.nan)
        if math.isnan(pitch):
            return sample
        roll, _, yaw = sample.rpy
        return replace(sample, orientation=poses.rpy_to_quat(roll, pitch, yaw))

    def sample(self, which: np.ndarray | None = None) -> list[Sample]:
        """Samples of the sensors at indices ``which`` (all by default) from the state now."""
        which = np.arange(len(self.specs)) if which is None else np.asarray(which, int)
        if not which.size:
            return []
        e = self.engine
        link_pose, link_twist = e.get_states([self._links[i] for i in which])
        frame = poses.compose(link_pose, self._poses[which])
        kinds = [self.specs[i].kind for i in which]
        out: list[Sample] = []
        gps = [k for k, kind in enumerate(kinds) if kind == "navsat"]
        imu = [k for k, kind in enumerate(kinds) if kind == "imu"]
        gps_out = self._gps(which[gps], frame[gps]) if gps else []
        imu_out = self._imu(which[imu], frame[imu], link_pose[imu], link_twist[imu]) if imu else []
        gi, ii = iter(gps_out), iter(imu_out)
        for kind in kinds:
            out.append(next(gi) if kind == "navsat" else next(ii))
        return out

    def _gps(self, idx: np.ndarray, frame: np.ndarray) -> list[GpsSample]:
        h, v = zip(*(self.specs[i].noise for i in idx))
        mean = np.array([[a.mean, a.mean, b.mean] for a, b in zip(h, v)])
        std = np.array([[a.stddev, a.stddev, b.stddev] for a, b in zip(h, v)])
        enu = frame[:, :3] + mean + std * self.rng.standard_normal((len(idx), 3))
        lat, lon, alt = geodesy.enu_to_geodetic(enu[:, 0], enu[:, 1], enu[:, 2], self.origin)
        t = self.engine.time
        return [GpsSample(t, float(a), float(o), float(h), std[k] ** 2)
                for k, (a, o, h) in enumerate(zip(np.atleast_1d(lat), np.atleast_1d(lon),
                                                  np.atleast_1d(alt)))]

    def _imu(self, idx: np.ndarray, frame: np.ndarray, link_pose: np.ndarray,
             link_twist: np.ndarray) -> list[ImuSample]:
        m, d = self.engine.model, self.engine.data
        mujoco.mj_rnePostConstraint(m, d)  # body accelerations (cacc) of the last step
        acc = np.empty((len(idx), 3))
        res = np.zeros(6)
        for k, i in enumerate(idx):
            body = m.body(self._links[i]).id  # by name: ids change when the model recompiles
            mujoco.mj_objectAcceleration(m, d, mujoco.mjtObj.mjOBJ_BODY, body, res, 0)
            acc[k] = res[3:]  # world frame, at the link origin; MuJoCo includes -g (proper)
        q_inv = poses.quat_conj(frame[:, 3:])
        omega = poses.quat_rotate(q_inv, link_twist[:, 3:])
        accel = poses.quat_rotate(q_inv, acc)
        noise = np.array([[(n.mean, n.stddev) for n in self.specs[i].noise] for i in idx])
        values = np.concatenate([omega, accel], axis=1)
        values += noise[..., 0] + noise[..., 1] * self.rng.standard_normal(values.shape)
        variance = noise[..., 1] ** 2
        t = self.engine.time
        return [ImuSample(t, frame[k, 3:].copy(), values[k, :3], values[k, 3:],
                          variance[k, :3], variance[k, 3:]) for k in range(len(idx))]
