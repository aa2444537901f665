"""The packet signaler of paper 000, Sec. 4.3: packets against the robot's inflated bounding box.

Rules, per tick and vectorised over all packets (one packet = one tree):

1. A packet whose bounding box overlaps the robot's inflated box (partly inside) goes HIGH at once.
2. A HIGH packet is lowered only when it is entirely outside the box *and* its linear and angular
   speeds stayed below the thresholds for ``still_steps`` (2) consecutive physics steps
   (``still_clock: steps``, the paper's rule: a step hook of :mod:`.stillness` counts them for the
   candidates, the HIGH packets outside the box at the last tick) or consecutive ticks
   (``still_clock: ticks``, speeds sampled at ticks only). Where the simulator's steps cannot be
   seen (over ROS) ``steps`` falls back to ``ticks``; :attr:`PacketSignaler.still_clock` says which
   runs and :attr:`PacketSignaler.fallback` why. A lowered packet goes MEDIUM (not dynamic, still
   colliding). Packets already below HIGH and outside stay below HIGH.
3. When every HIGH packet lies entirely inside the box (so nothing dynamic inside can touch anything
   outside), all MEDIUM packets go LOW (not dynamic, not colliding). Otherwise, with ``medium: all``
   (the paper's rule, the default) every below-HIGH packet is MEDIUM, so a HIGH packet reaching
   out of the box still meets its neighbours; with ``medium: near`` only the below-HIGH packets
   that such a packet can reach before the next tick are MEDIUM, the rest LOW: those whose AABB
   overlaps the AABB of a HIGH packet reaching out of the box grown by ``near_margin`` plus twice
   the distance a point of that packet travels in one tick (the time since the last update) at
   its present speeds, ``|v| + |w| x half-diagonal`` (a packet spinning in place sweeps its
   half-diagonal), or the robot's inflated box grown by ``near_margin`` (the robot is dynamic
   too). Both give the same levels when no HIGH packet reaches out. "HIGH" counts packets that
   are HIGH now (including ones held HIGH by the user, or lowered in this very tick) as well as
   those going HIGH: a batch being lowered passes through MEDIUM (or LOW, far from anything
   dynamic) for one tick.
4. Every ``refresh_interval`` seconds of sim time all packets go HIGH for ``settle_period``
   seconds, so no physically unstable structure persists (0 disables); and before every decision
   of the application (:meth:`PacketSignaler.refresh`, through the manager's
   :meth:`~..manager.FidelityManager.decision_point`) for the settle period the application waits.

The robot's box is the union of the AABBs of the robot entities (boxes of ``robot_half_extents``
about each entity's pose, one size for all or per entity regex), inflated by ``inflation``
metres on every side. The presets of the paper are :data:`ADFI_INFLATION`; "HiFi" is the manager
switched off.
"""
from __future__ import annotations

import re
from typing import Any, Sequence

import numpy as np

from ...simulator.protocol import Simulator
from ..errors import ParamError
from ..levels import LEVEL_DTYPE, Level
from ..trees import Tree
from .base import Param, Signaler, match_entities
from .packet_kernels import box_rules, near_levels, refresh_boxes
from .stillness import StepStillness, step_hook_unavailable

ADFI_INFLATION = {"adfi-1": 1.00, "adfi-2": 0.50, "adfi-3": 0.01}
HIGH, MEDIUM, LOW = int(Level.HIGH), int(Level.MEDIUM), int(Level.LOW)
MAX_PAIRWISE = 128  # rule 3, medium: near: above this many packets reaching out, their union box
# (conservative) instead of each one's reach


def _half_extents(spec: np.ndarray | dict[str, np.ndarray], names: Sequence[str], key: str,
                  what: str) -> np.ndarray:
    """Half extents for each name: one vec3 for all, or the first matching ``{regex: vec3}``
    entry."""
    if isinstance(spec, np.ndarray):
        return np.tile(spec, (len(names), 1))
    half = np.full((len(names), 3), np.nan)
    for pattern, value in reversed(list(spec.items())):  # the first matching pattern wins
        regex = re.compile(pattern)
        half[[bool(regex.fullmatch(n)) for n in names]] = value
    missing = [n for n, h in zip(names, half[:, 0]) if np.isnan(h)]
    if missing:
        raise ParamError(key, f"no entry matches {what}(s) " + ", ".join(missing[:3]))
    return half


class PacketSignaler(Signaler):
    """Inflated-robot-box signaler with stillness, MEDIUM-to-LOW and periodic-refresh rules."""

    PARAMS = {
        "robot": Param("patterns", help="regex(es) of the robot's model/link entities"),
        "robot_half_extents": Param("vec3_or_map", help="half extents [m] of the box about each "
                                    "robot entity: [x, y, z] or {entity regex: [x, y, z]}"),
        "half_extents": Param("vec3_or_map", help="packet half extents [m]: [x, y, z] or "
                                                  "{tree-name regex: [x, y, z]}"),
        "inflation": Param("nonneg", 0.5,
                           "inflation of the robot box [m] (AdFi-1/2/3: 1.0/0.5/0.01)"),
        "linear_threshold": Param("nonneg", 0.01, "speed [m/s] below which a packet is still"),
        "angular_threshold": Param("nonneg", 0.05, "angular speed [rad/s] below which it is still"),
        "still_steps": Param("count", 2, "consecutive still steps (or ticks) before a packet is "
                             "lowered"),
        "still_clock": Param("clock", "steps", "what still_steps counts: physics steps (the "
                             "paper's rule; in process only) or manager ticks"),
        "medium": Param("medium", "all", "which below-HIGH packets stay MEDIUM while a HIGH "
                        "packet reaches out of the box: all (the paper's rule) or those near it"),
        "near_margin": Param("nonneg", 0.05, "with medium: near, the distance [m] (beyond a "
                             "tick's travel) within which a packet stays MEDIUM"),
        "refresh_interval": Param("nonneg", 0.0, "period [s] of the all-HIGH refresh (0: never)"),
        "settle_period": Param("nonneg", 0.1, "duration [s] of each all-HIGH refresh"),
    }

    def __init__(self, trees: Sequence[Tree], params: dict[str, Any], sim: Simulator):
        super().__init__(trees, params, sim)
        self.robot = match_entities(sim, params["robot"], "robot")
        self.anchors = self._anchors()
        self.half = np.vstack([
            _half_extents(params["robot_half_extents"], self.robot, "robot_half_extents", "entity"),
            _half_extents(params["half_extents"], self.tree_names, "half_extents", "tree")])
        self._reach = np.sqrt((self.half ** 2).sum(axis=1))  # half-diagonal: a spin's sweep radius
        n = len(self.trees)
        self.still = np.zeros(n, np.int64)
        # AABB of every box at the pose it last had: only boxes that moved are turned again (held
        # packets do not move); the robot's inflated box
        m = len(self.half)
        self._seen, self._lo, self._hi = np.full((m, 7), np.nan), np.empty((m, 3)), np.empty((m, 3))
        self._box = np.empty((2, 3))
        self._touching, self._high, self._reaching, self._watch = (np.zeros(n, bool)
                                                                   for _ in range(4))
        self._never = np.zeros(n, bool)  # still_now where stillness is counted in steps
        self._load_kernels()
        self.last_update = np.nan  # sim time of the previous update (the tick period)
        self.next_refresh = params["refresh_interval"] or np.inf
        self.refresh_until = -np.inf
        self.refresh_due = False  # a decision point asked for a refresh at the next update
        self.fallback = (step_hook_unavailable(sim, self.anchors)
                         if params["still_clock"] == "steps" else "")
        self.steps = (StepStillness(sim, self.anchors, params["linear_threshold"],
                                    params["angular_threshold"])
                      if params["still_clock"] == "steps" and not self.fallback else None)

    def _load_kernels(self) -> None:
        """Load the compiled loops now (from Numba's cache: about a second once a process), not
        in the first tick: each called once on no packet."""
        none = slice(0, 0)
        box_lo, box_hi, lo, hi = self.boxes(self._seen[none])
        box_rules(lo[none], hi[none], box_lo, box_hi, np.zeros(0, LEVEL_DTYPE), self.still[none],
                  self._never[none], True, 0, self._touching[none], self._high[none],
                  self._reaching[none], self._watch[none])
        near_levels(lo[none], hi[none], np.zeros((0, 6)), self._reach[none],
                    np.zeros(0, np.intp), 0.0, 0.0, box_lo, box_hi, 0, np.zeros(0, LEVEL_DTYPE))

    @property
    def still_clock(self) -> str:
        """What stillness is counted in here: ``steps`` or ``ticks`` (``steps`` asked for but not
        available falls back to ``ticks``)."""
        return "ticks" if self.steps is None else "steps"

    def state_entities(self) -> list[str]:
        return self.robot + self.anchors

    def boxes(self, poses: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Corners of the inflated robot box (lo, hi) and of the packet AABBs (lo, hi), as of
        ``poses`` (views the next call overwrites)."""
        nr = len(self.robot)
        refresh_boxes(poses, self._seen, self.half, self._lo, self._hi, nr,
                      self.params["inflation"], self._box)
        return self._box[0], self._box[1], self._lo[nr:], self._hi[nr:]

    def update(self, t: float, poses: np.ndarray, twists: np.ndarray,
               current: np.ndarray) -> np.ndarray:
        p = self.params
        box_lo, box_hi, lo, hi = self.boxes(poses)
        ticks = self.steps is None
        if not ticks:
            self.still = self.steps.counts()
        reaching = box_rules(lo, hi, box_lo, box_hi, current, self.still,
                             self._still_now(twists) if ticks else self._never, ticks,
                             p["still_steps"], self._touching, self._high, self._reaching,
                             self._watch)
        if t >= self.next_refresh:
            self.refresh_until = t + p["settle_period"]
            self.next_refresh += p["refresh_interval"] * (1 + (t - self.next_refresh)
                                                          // p["refresh_interval"])
        # the candidates of the next tick: HIGH and outside the box, signalled HIGH or HIGH now
        # (held by the user: its release takes the signalled level)
        if t < self.refresh_until or self.refresh_due:
            levels = np.full(len(lo), HIGH, LEVEL_DTYPE)
            self.refresh_due = False
            self.last_update = t
            watch = ~self._touching
        else:
            levels = self._below_high(t, reaching, twists, lo, hi, (box_lo, box_hi))
            levels[self._high] = HIGH
            watch = self._watch
        if self.steps is not None:
            self.steps.watch(watch)
        return levels

    def _below_high(self, t: float, reaching: int, twists: np.ndarray, lo: np.ndarray,
                    hi: np.ndarray, box: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        """Rule 3: the level of each packet if not HIGH, given how many dynamic packets are
        ``reaching`` out of the robot ``box`` (:attr:`_reaching` says which): LOW when none
        does; else MEDIUM for all (``medium: all``) or for those near one of them or the box
        (``near``)."""
        p = self.params
        tick = t - self.last_update if t > self.last_update else 0.0
        self.last_update = t
        if not reaching:
            return np.full(len(lo), LOW, LEVEL_DTYPE)
        if p["medium"] == "all":
            return np.full(len(lo), MEDIUM, LEVEL_DTYPE)
        nr = len(self.robot)
        levels = np.empty(len(lo), LEVEL_DTYPE)
        near_levels(lo, hi, twists[nr:], self._reach[nr:], np.flatnonzero(self._reaching),
                    2.0 * tick, p["near_margin"], box[0], box[1], MAX_PAIRWISE, levels)
        return levels

    def _still_now(self, twists: np.ndarray) -> np.ndarray:
        """Packets below both speed thresholds in the twists read at this tick."""
        p = self.params
        sq = twists[len(self.robot):] ** 2  # speeds compared, not squares (any threshold fits)
        return ((np.sqrt(sq[:, :3].sum(axis=1)) < p["linear_threshold"])
                & (np.sqrt(sq[:, 3:].sum(axis=1)) < p["angular_threshold"]))

    def refresh(self, t: float, settle: float) -> None:
        """All packets HIGH from the next update until sim time ``t + settle`` (at least for that
        update, when ``settle`` is 0)."""
        self.refresh_until = max(self.refresh_until, t + settle)
        self.refresh_due = True

    def close(self) -> None:
        if self.steps is not None:
            self.steps.close()
