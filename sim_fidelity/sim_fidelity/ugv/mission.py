"""The UGV's mission software (paper 001, section V-A), as a pure core the ROS node and the
in-process pipeline both drive.

Every control period (10 Hz) :meth:`Navigator.tick` turns the latest position estimate into a
command: a *saturated spring* generates the desired velocity towards the current waypoint,
v = K (w - p) with |v| <= v_sat, and a *bicycle pursuit* model turns it into a steering angle
and a speed. The position comes from the 1 Hz GPS fixes; between fixes it is interpolated by the
Ackermann (bicycle) kinematics of the commands sent. The heading comes from the GPS velocity:
the chord between two consecutive fixes, advanced by half the heading change dead-reckoned over
that interval (the chord's direction is the heading at its middle). A small uniform noise on
steering and speed stands for the bumpy grass (the paper adds it in simulation).

The *redesign* (section VI) is one conditional: above a pitch threshold the spring constant and
the saturation are raised. Constants the paper does not give are chosen here and listed in
``docs/ackermann.md`` beside the paper's words.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from .course import WAYPOINTS

CONTROL_RATE = 10.0  # Hz (paper: "running at 10 Hz")


@dataclass(frozen=True)
class MissionParams:
    """The mission software's constants (defaults: the original software of section V)."""

    waypoints: tuple[tuple[float, float], ...] = WAYPOINTS
    spring: float = 0.5  # 1/s, K of the saturated spring
    saturation: float = 1.0  # m/s, v_sat
    capture_radius: float = 1.5  # m: an intermediate waypoint counts as passed
    stop_radius: float = 1.0  # m: at the final waypoint the vehicle stops
    wheelbase: float = 0.324  # m, the Stampede 4x4's
    max_steering: float = 0.45  # rad, the steering command's limit
    lookahead: tuple[float, float] = (1.0, 2.0)  # m, the pursuit's look-ahead distance range
    turn_speed: float = 0.3  # share of the spring's speed kept while the waypoint is abeam/behind
    steering_noise: float = 0.03  # rad, half-width of the uniform noise
    speed_noise: float = 0.05  # m/s, half-width of the uniform noise
    min_chord: float = 0.2  # m: shorter GPS chords leave the heading to dead reckoning
    redesign: bool = False  # the section VI pitch check
    pitch_threshold: float = 0.1  # rad (5.7 deg)
    climb_spring: float = 1.0  # 1/s, K above the threshold
    climb_saturation: float = 2.0  # m/s, v_sat above the threshold

    def redesigned(self) -> "MissionParams":
        """The same software with the pitch check switched on (paper section VI)."""
        return replace(self, redesign=True)


def wrap(angle: float) -> float:
    """``angle`` in [-pi, pi)."""
    return (angle + math.pi) % (2 * math.pi) - math.pi


class Navigator:
    """Position and heading estimate, waypoint sequencing and the control law."""

    def __init__(self, params: MissionParams = MissionParams(), seed: int | None = None):
        self.p = params
        self.rng = np.random.default_rng(seed)
        self.position: np.ndarray | None = None  # (2,) m, east/north in the course plane
        self.heading: float | None = None  # rad from east, counter-clockwise
        self.pitch = 0.0
        self.waypoint = 0  # index of the current waypoint
        self.command = (0.0, 0.0)  # (speed, steering) in force
        self.climbing = False  # the redesign's pitch check is on
        self._time: float | None = None  # of the estimate
        self._fix: tuple[np.ndarray, float] | None = None  # last fix and the DR heading then

    @property
    def finished(self) -> bool:
        """Within the stop radius of the final waypoint."""
        return self.waypoint == len(self.p.waypoints) - 1 and self.position is not None and \
            self._distance() < self.p.stop_radius

    def on_fix(self, t: float, east: float, north: float) -> None:
        """A GPS fix at ``t`` (s) in the course's plane."""
        self._advance(t)
        fix = np.array([east, north], dtype=float)
        if self._fix is not None:
            chord = fix - self._fix[0]
            if np.hypot(*chord) >= self.p.min_chord and self.heading is not None:
                turned = wrap(self.heading - self._fix[1])  # dead-reckoned since the last fix
                self.heading = wrap(math.atan2(chord[1], chord[0]) + turned / 2)
            elif self.heading is None and np.hypot(*chord) >= self.p.min_chord:
                self.heading = math.atan2(chord[1], chord[0])
        self.position = fix
        self._fix = (fix, self.heading if self.heading is not None else 0.0)

    def on_pitch(self, pitch: float) -> None:
        """The IMU's pitch (rad)."""
        self.pitch = float(pitch)

    def set_heading(self, heading: float) -> None:
        """An initial heading before the GPS has shown one (the vehicle's placement)."""
        self.heading = float(heading)
        if self._fix is not None:
            self._fix = (self._fix[0], self.heading)

    def tick(self, t: float) -> tuple[float, float]:
        """The command (speed m/s, steering rad) for the control period starting at ``t``."""
        self._advance(t)
        if self.position is None:
            self.command = (0.0, 0.0)
            return self.command
        last = len(self.p.waypoints) - 1
        while self.waypoint < last and self._distance() < self.p.capture_radius:
            self.waypoint += 1
        if self.finished:
            self.command = (0.0, 0.0)
            return self.command
        self.climbing = self.p.redesign and abs(self.pitch) > self.p.pitch_threshold
        spring = self.p.climb_spring if self.climbing else self.p.spring
        v_sat = self.p.climb_saturation if self.climbing else self.p.saturation
        delta = np.asarray(self.p.waypoints[self.waypoint], float) - self.position
        desired = spring * delta
        norm = float(np.hypot(*desired))
        if norm > v_sat:
            desired *= v_sat / norm
            norm = v_sat
        if self.heading is None:  # drive straight on until two fixes show the heading
            self.command = (norm, 0.0)
            return self.command
        # bicycle pursuit towards the desired velocity's direction
        alpha = wrap(math.atan2(desired[1], desired[0]) - self.heading)
        lookahead = float(np.clip(np.hypot(*delta), *self.p.lookahead))
        steering = math.atan2(2 * self.p.wheelbase * math.sin(alpha), lookahead)
        speed = norm * max(math.cos(alpha), self.p.turn_speed)
        steering += self.rng.uniform(-self.p.steering_noise, self.p.steering_noise)
        speed += self.rng.uniform(-self.p.speed_noise, self.p.speed_noise)
        self.command = (max(speed, 0.0),
                        float(np.clip(steering, -self.p.max_steering, self.p.max_steering)))
        return self.command

    def _distance(self) -> float:
        return float(np.hypot(*(np.asarray(self.p.waypoints[self.waypoint]) - self.position)))

    def _advance(self, t: float) -> None:
        """Ackermann (bicycle) kinematics of the command in force, from the estimate's time."""
        if self._time is not None and self.position is not None and self.heading is not None:
            dt = max(t - self._time, 0.0)
            speed, steering = self.command
            rate = speed * math.tan(steering) / self.p.wheelbase
            if abs(rate) < 1e-9:
                step = speed * dt * np.array([math.cos(self.heading), math.sin(self.heading)])
            else:  # along the arc
                h2 = self.heading + rate * dt
                radius = speed / rate
                step = radius * np.array([math.sin(h2) - math.sin(self.heading),
                                          math.cos(self.heading) - math.cos(h2)])
                self.heading = wrap(h2)
            self.position = self.position + step
        self._time = t


class Mission:
    """One run of the course: the navigator and its performance monitor, fed the same sensor
    readings; what the ROS node and the in-process pipeline both drive."""

    def __init__(self, start: float, params: MissionParams = MissionParams(),
                 seed: int | None = None):
        from .monitor import PerformanceMonitor

        self.navigator = Navigator(params, seed)
        self.monitor = PerformanceMonitor(start, goal=params.waypoints[-1])
        self.fix: tuple[float, float] | None = None  # the latest GPS fix, east/north

    def on_fix(self, t: float, east: float, north: float) -> None:
        self.fix = (float(east), float(north))
        self.navigator.on_fix(t, east, north)

    def on_pitch(self, pitch: float) -> None:
        self.navigator.on_pitch(pitch)

    @property
    def done(self) -> bool:
        return self.monitor.done

    def tick(self, t: float):
        """Control tick at ``t``: (speed, steering, report or None). After the monitor says
        done, the command is a stop."""
        nav = self.navigator
        speed, steering = (0.0, 0.0) if self.monitor.done else nav.tick(t)
        self.monitor.update(t, self.fix, nav.waypoint == len(nav.p.waypoints) - 1)
        x, y = nav.position if nav.position is not None else (math.nan, math.nan)
        report = self.monitor.report(t, (t - self.monitor.start, x, y,
                                         math.nan if nav.heading is None else nav.heading,
                                         nav.pitch, speed, steering, float(nav.waypoint)))
        return speed, steering, report
