"""The mission's performance monitor (paper 001, sections IV and V-A).

The requirement: the course done within ``TIME_LIMIT`` (39 s) and within ``GOAL_RADIUS`` (2 m)
of the final waypoint, judged on the GPS fixes. The rewards, the paper's scheme of section IV
read per mission: +10 for an on-time accurate arrival, 0 for every report before the deadline,
-10 once the deadline has passed without it (reported at the first report past the deadline).
A mission therefore totals +10 or -10; it continues after a missed deadline until arrival or
``GIVE_UP`` so that its track covers the course. The monitor reports reward and instrumentation
(sensor, control and reward signals) at ``REPORT_RATE`` (0.5 Hz, the paper's logging rate).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from .course import GOAL_RADIUS, TIME_LIMIT, WAYPOINTS

REPORT_RATE = 0.5  # Hz
GIVE_UP = 60.0  # s: a mission ends here even without arrival
ON_TIME, LATE = 10.0, -10.0
INSTRUMENTATION = ("t", "x", "y", "heading", "pitch", "speed", "steering", "waypoint", "reward")
"""The labels of the instrumentation array, in order."""


@dataclass
class Report:
    """One 0.5 Hz report: the reward of the period and the instrumentation row."""

    reward: float
    row: tuple[float, ...]  # in INSTRUMENTATION order


class PerformanceMonitor:
    """Judges one mission from its start time; :meth:`update` at every control tick."""

    def __init__(self, start: float, deadline: float = TIME_LIMIT,
                 goal_radius: float = GOAL_RADIUS, goal: tuple[float, float] = WAYPOINTS[-1]):
        self.start, self.deadline, self.goal_radius, self.goal = start, deadline, goal_radius, goal
        self.arrived_at: float | None = None
        self.total = 0.0
        self._pending = 0.0  # reward not yet reported
        self._judged = False
        self._elapsed = 0.0
        self._next_report = start + 1.0 / REPORT_RATE

    @property
    def done(self) -> bool:
        return self.arrived_at is not None or self._elapsed >= GIVE_UP

    @property
    def on_time(self) -> bool:
        return self.arrived_at is not None and self.arrived_at - self.start <= self.deadline

    def update(self, t: float, fix: tuple[float, float] | None, last_leg: bool) -> None:
        """At ``t``: the latest GPS fix (east, north) and whether the final waypoint is the
        mission's current one (earlier waypoints passed)."""
        self._elapsed = t - self.start
        if self.arrived_at is None and last_leg and fix is not None and \
                math.dist(fix, self.goal) <= self.goal_radius:
            self.arrived_at = t
            if self._elapsed <= self.deadline:
                self._reward(ON_TIME)
        if not self._judged and (self._elapsed > self.deadline or self.arrived_at is not None):
            if not self.on_time:
                self._reward(LATE)
            self._judged = True

    def _reward(self, value: float) -> None:
        self._pending += value
        self.total += value

    def report(self, t: float, row: tuple[float, ...]) -> Report | None:
        """The report due at ``t`` (every 2 s from the start), or None; ``row`` is the
        instrumentation without its reward column, which the monitor adds."""
        if t + 1e-9 < self._next_report and not self.done:
            return None
        self._next_report += 1.0 / REPORT_RATE
        reward, self._pending = self._pending, 0.0
        return Report(reward, (*row, reward))
