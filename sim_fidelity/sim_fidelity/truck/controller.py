"""A scripted unloading strategy: repeatedly pick from the wall face or sweep the floor.

Each decision looks at the packets still in the truck (their poses through the Simulator protocol,
their sizes as perceived boxes) and chooses:

* **pick** when the nearest layer of the face has packets higher than the nose zone: approach the
  highest (announcing ``extend`` to the fidelity manager), extend the plungers into its face with
  suction on, lift, withdraw over the body conveyor, lower, release, retract (``retract``);
* **sweep** otherwise: raise the arm, lower the nose onto the floor, drive into the low packets
  while the sweepers close, let the belts convey, back off.

Before each decision the controller signals a *decision point* (``decide(settle)``: in process the
fidelity manager's :meth:`~sim_fidelity.fidelity_manager.FidelityManager.decision_point`, over ROS a
message its node sends) and waits ``settle`` seconds of sim time, holding its commands, so that the
manager's all-HIGH refresh (paper 000: at least one before every decision) has acted before it
looks. Nothing else flows between the two: the plungers' fidelity follows the ``plunger_extend``
command (the manager observes it); announcing ``extend``/``retract`` is optional.

Joint targets are ramped at per-joint speed limits; each move ends when the joints are there (or
on its timeout). Controller noise (target jitter, dwell times) comes from ``seed``, so repeats of
a run differ by seed while every fidelity mode sees the same seeds.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Protocol, Union

import numpy as np

from ..simulator.poses import box_aabbs
from ..world_generators import unloader as geo
from ..world_generators.truck import TRAILER_WIDTH

CONTROL_PERIOD = 0.02  # s
MAX_SPEED = {"drive": 0.5, "arm_lift": 1.0, "arm_reach": 1.2, "arm_shift": 0.8, "wrist_pitch": 1.0,
             "wrist_yaw": 1.0, "plunger_extend": 0.3, "nose_reach": 0.3, "nose_pitch": 0.6,
             "sweep_left": 2.0, "sweep_right": 2.0}
TOLERANCE = 0.02  # m or rad: a joint is "there"
# tool frame -> cup face
CUP_AHEAD = geo.PLATE_X + geo.TUBE_LENGTH + geo.CUP_OFFSET + geo.CUP_LENGTH / 2
NOSE_UP = -0.6  # nose_pitch raised
NOSE_TIP = geo.NOSE_HINGE[0] + geo.NOSE_LENGTH * np.cos(geo.nose_slope())  # model frame, nose down
NOSE_REACH_MAX = geo.NOSE_HINGE[0] + geo.NOSE_LENGTH + 0.05  # model frame: the tip at any pitch
TALL = 0.75  # m: packets whose top is above this are picked, the rest swept
LAYER = 0.35  # m: packets this close behind the frontmost one form the face
REACH_NOMINAL = 0.9  # m of arm_reach when the cups meet the face
EXTEND = 0.15  # m of plunger_extend into the face ...
PRESS = 0.03  # ... pressing this far past first contact
RELEASE_CLEARANCE = 0.06  # m between the lowest held packet and the belt at release
CLEARANCE = 0.10  # m: the tool rises this far above released packets before it moves on
CROSSING_BOTTOM = 0.80  # m: held packets pass over the raised nose above this
SWEEP_SPEED = 0.25  # m/s: driving the nose into packets
CORRIDOR = geo.NOSE_WIDTH / 2 + 0.07  # m: half width of the lane the nose and sweepers sweep
CORRIDOR_TOP = 0.70  # m: packets with their bottom below this are in the raised nose's way
PICKABLE = 0.42  # m: the lowest cup row (tool at its lowest) still seizes packets this tall
MAX_REACH = 1.6  # m of arm_reach (joint limit)
SWEEP_DEPTH = 1.0  # m: longest drive of one sweep
STALL = (20.0, 40.0)  # s without an unloaded packet: escalate to level 1, then level 2
DECISION_SETTLE = 0.1  # s of sim time between a decision point and the decision (bench, node)


class UnloaderIO(Protocol):
    """What the controller reads and commands: the in-process :class:`~.robot.Unloader` or the
    ROS adapter of :mod:`.controller_node`."""

    packets: list[str]  # packet model names; rows of the arrays below
    packet_half: np.ndarray  # (n, 3) half extents of each packet

    @property
    def time(self) -> float: ...
    @property
    def in_truck(self) -> np.ndarray: ...  # bool per packet: not unloaded yet
    @property
    def unloaded(self) -> int: ...
    def positions(self, joints: list[str]) -> np.ndarray: ...
    def command(self, targets: dict[str, float]) -> None: ...
    def suction_on(self, on: bool) -> None: ...
    def suction_hold(self) -> None: ...  # cups holding nothing seize nothing more
    def held_packets(self) -> np.ndarray: ...  # rows of the packets gripped now
    def packet_poses(self, rows: np.ndarray) -> np.ndarray: ...  # (n, 7) x y z qx qy qz qw
    def model_x(self) -> float: ...  # x of the robot's model frame in the world


Targets = Union[dict[str, float], Callable[[], dict[str, float]]]


@dataclass
class Move:
    """Joint targets to reach, within ``timeout`` seconds, then ``dwell`` seconds of waiting.
    ``targets`` may be a function, evaluated when the move starts (e.g. from what is held then)."""

    phase: str
    targets: Targets
    timeout: float = 8.0
    dwell: float = 0.0
    on_start: Callable[[], None] | None = None
    stop_when: Callable[[], bool] | None = None
    speeds: dict[str, float] = field(default_factory=dict)  # per-joint speed limits for this move


@dataclass(frozen=True)
class PickOption:
    """A pick the controller may do: ``packet`` (row of the robot's packets), its AABB, and the
    approach pose: the base's model-frame x, the arm's reach, and the face centre's y and z that
    the tool aims at (the pick adds its seeded jitter to y and z)."""

    packet: int
    lo: np.ndarray
    hi: np.ndarray
    model_x: float
    reach: float
    y: float
    z: float


@dataclass(frozen=True)
class SweepOption:
    """A sweep: the nose goes down just before ``block`` (x of the nearest packet in the lane,
    or of the nearest packet ahead) and its tip drives in towards ``stop``."""

    block: float
    stop: float


@dataclass(frozen=True)
class Options:
    """What the controller sees ahead and may do (:meth:`UnloadingController.options`)."""

    rows: np.ndarray  # rows of the in-truck packets ahead of the base, inside the trailer
    lo: np.ndarray  # their AABBs
    hi: np.ndarray
    block: float  # x of the nearest packet in the nose's lane (inf: none)
    wall: float  # x of the nearest standing tall packet (inf: none)
    picks: list[PickOption]  # the reachable pick candidates, best first
    sweep: SweepOption | None  # None: nothing ahead


@dataclass
class ControllerStats:
    picks: int = 0
    sweeps: int = 0
    gripped: int = 0
    phases: list[tuple[float, str]] = field(default_factory=list)  # (sim time, phase) at each start


class UnloadingController:
    """Drives an :class:`Unloader`; call :meth:`tick` every :data:`CONTROL_PERIOD` of sim time."""

    def __init__(self, robot: UnloaderIO, announce: Callable[[str], None] | None = None,
                 seed: int = 0, decide: Callable[[float], object] | None = None,
                 settle: float = 0.0):
        self.robot = robot
        self.announce = announce or (lambda action: None)
        self.decide = decide or (lambda settle: None)
        self.settle = settle
        self._decide_at: float | None = None  # sim time of the pending decision
        self.rng = np.random.default_rng(seed)
        self.joints = list(MAX_SPEED)
        # model x = offset + drive
        self.drive_offset = robot.model_x() - robot.positions(["drive"])[0]
        self.cmd = dict(zip(self.joints, robot.positions(self.joints)))
        self.cmd["nose_pitch"] = NOSE_UP
        self.target = dict(self.cmd)
        self.queue: list[Move] = []
        self.move: Move | None = None
        self.move_started = 0.0
        self.reached_at: float | None = None
        self.failed = np.zeros(len(robot.packets), int)
        self.stats = ControllerStats()
        self._unloaded_seen, self._progress_at = 0, robot.time
        self._aggressive = False  # alternates the level-2 strategies
        self._last_tick: float | None = None
        self._clear_lift = 1.0  # arm_lift at which the tool clears the packets just released

    # --- the loop --------------------------------------------------------------------------------
    def tick(self) -> None:
        t = self.robot.time
        if self.robot.unloaded != self._unloaded_seen:
            self._unloaded_seen, self._progress_at = self.robot.unloaded, t
        if (self.move is None or self._move_done(t)) and (self.queue or self._settled(t)):
            if not self.queue:
                self.queue = self._plan()
            self.move = self.queue.pop(0)
            self.move_started, self.reached_at = t, None
            if callable(self.move.targets):
                self.move.targets = self.move.targets()
            self.target.update(self.move.targets)
            self.stats.phases.append((t, self.move.phase))
            if self.move.on_start:
                self.move.on_start()
        elapsed = CONTROL_PERIOD if self._last_tick is None else max(t - self._last_tick, 0.0)
        self._last_tick = t
        speeds = self.move.speeds if self.move is not None else {}
        for j in self.joints:  # ramp every command towards its target
            step = speeds.get(j, MAX_SPEED[j]) * elapsed
            self.cmd[j] += float(np.clip(self.target[j] - self.cmd[j], -step, step))
        self.robot.command(self.cmd)

    def _settled(self, t: float) -> bool:
        """At a decision point: signal it once, then True after ``settle`` seconds of sim time."""
        if self._decide_at is None:
            self._decide_at = t + self.settle
            self.decide(self.settle)
        if t < self._decide_at - 1e-9:
            return False
        self._decide_at = None
        return True

    def _move_done(self, t: float) -> bool:
        m = self.move
        if m.stop_when is not None and m.stop_when():
            return True
        if self.reached_at is None:
            at = all(abs(self.cmd[j] - v) < 1e-9 for j, v in m.targets.items())
            if at:
                err = np.abs(self.robot.positions(list(m.targets))
                             - np.array(list(m.targets.values())))
                at = bool((err < TOLERANCE * 3).all())
            if at or t - self.move_started > m.timeout:
                self.reached_at = t
        return self.reached_at is not None and t - self.reached_at >= m.dwell

    # --- perception ------------------------------------------------------------------------------
    def _model_x(self) -> float:
        """x of the robot's model frame, from the drive joint (no simulator query)."""
        return self.drive_offset + self.robot.positions(["drive"])[0]

    def _face(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Indices, AABB lows and highs of the in-truck packets ahead of the base; packets that
        fell beside the robot outside the trailer's side walls are out of reach and ignored (one
        in the lane's edge would otherwise hold the base back for good)."""
        idx = np.flatnonzero(self.robot.in_truck)
        lo, hi = box_aabbs(self.robot.packet_poses(idx), self.robot.packet_half[idx])
        ahead = ((lo[:, 0] > self._model_x() + geo.BASE_FRONT + 0.05)
                 & (np.abs(lo[:, 1] + hi[:, 1]) < TRAILER_WIDTH))
        return idx[ahead], lo[ahead], hi[ahead]

    # --- planning --------------------------------------------------------------------------------
    def stall_level(self) -> int:
        """0 while unloading goes on; 1 and 2 after :data:`STALL` seconds without an unload."""
        idle = self.robot.time - self._progress_at
        return int(idle > STALL[0]) + int(idle > STALL[1])

    def options(self, level: int | None = None) -> Options:
        """The actions open now, as the next plan would see them at stall ``level`` (default: the
        current one): the packets ahead, the lane block, the standing wall, the reachable pick
        candidates ranked (highest, then most central) with their approach poses, and the
        sweep's geometry. The plan takes the first pick, or the sweep (see :meth:`_plan`)."""
        level = self.stall_level() if level is None else level
        idx, lo, hi = self._face()
        if not idx.size:
            return Options(idx, lo, hi, np.inf, np.inf, [], None)
        tip = self._model_x() + NOSE_TIP + self.cmd["nose_reach"]
        centre_x = 0.5 * (lo[:, 0] + hi[:, 0])
        # packets in the lane of the nose and base (not those already riding on the nose)
        lane = ((lo[:, 1] < CORRIDOR) & (hi[:, 1] > -CORRIDOR) & (lo[:, 2] < CORRIDOR_TOP)
                & (centre_x > tip - 0.1))
        block = float(lo[lane, 0].min()) if lane.any() else np.inf
        # the standing wall: tall packets resting square (their height is one of their edges),
        # not leaning or toppled ones, which are swept like the floor
        height = hi[:, 2] - lo[:, 2]
        square = (np.abs(2.0 * self.robot.packet_half[idx] - height[:, None]) < 0.03).any(axis=1)
        standing = (hi[:, 2] > TALL) & square
        wall = float(lo[standing, 0].min()) if standing.any() else np.inf
        # pick candidates: the face layer of the standing wall (low packets too once stalled)
        cand = standing & (lo[:, 0] < wall + LAYER)
        if level >= 1 or not cand.any():  # low packets are picked only when sweeping stalls
            face = lo[lane, 0].min() if lane.any() else lo[:, 0].min()
            cand |= (hi[:, 2] > PICKABLE) & (lo[:, 0] < face + LAYER)
        cand &= self.failed[idx] < 2
        base_limit = block - NOSE_REACH_MAX - 0.05  # raised nose stays clear of the lane
        need = lo[:, 0] - CUP_AHEAD - geo.TOOL_HOME[0] - EXTEND + PRESS - base_limit
        c = np.flatnonzero(cand & (need <= MAX_REACH - 0.05))
        ranked = c[np.lexsort((np.abs(lo[c, 1] + hi[c, 1]), -hi[c, 2]))]
        picks = [self._pick_option(int(idx[i]), lo[i], hi[i], block) for i in ranked]
        # nothing in the lane: drive towards the nearest packets; the tip stops short of a
        # standing wall, unless stalled for long (then it digs in)
        sweep_block = block if np.isfinite(block) else float(lo[:, 0].min())
        sweep = SweepOption(sweep_block, wall - 0.1 if level < 2 else wall + 0.3)
        return Options(idx, lo, hi, block, wall, picks, sweep)

    def _pick_option(self, packet: int, lo: np.ndarray, hi: np.ndarray,
                     block: float) -> PickOption:
        """Where the robot picks ``packet`` from: the base as close as the nose allows (at most
        :data:`REACH_NOMINAL` of reach), the arm's reach, shift and lift at the packet's face
        centre (before the pick's jitter)."""
        face = lo[0]
        model_x = min(face - CUP_AHEAD - geo.TOOL_HOME[0] - REACH_NOMINAL - EXTEND + PRESS,
                      block - NOSE_REACH_MAX - 0.05)
        reach = float(np.clip(face - CUP_AHEAD - geo.TOOL_HOME[0] - model_x - EXTEND + PRESS,
                              -1.3, 1.6))
        centre = 0.5 * (lo + hi)
        return PickOption(packet, lo, hi, float(model_x), reach, float(centre[1]),
                          float(centre[2]))

    def _plan(self) -> list[Move]:
        level = self.stall_level()
        opts = self.options(level)
        if opts.sweep is None:
            return [Move("idle", {}, timeout=0.0, dwell=1.0)]
        if level >= 2:
            self._aggressive = not self._aggressive
        if opts.picks and not (level >= 2 and self._aggressive):
            return self._pick(opts.picks[0])
        self.failed[:] = 0
        return self._sweep(opts.sweep)

    def _pick(self, option: PickOption) -> list[Move]:
        self.stats.picks += 1
        packet = option.packet
        jitter = self.rng.uniform(-0.03, 0.03, 2)
        z = float(np.clip(option.z + jitter[1], 0.55, 2.45))
        y = float(np.clip(option.y + jitter[0], -0.7, 0.7))
        reach = option.reach
        drive = option.model_x - self.drive_offset

        def start_extend() -> None:
            self.announce("extend")
            self.robot.suction_on(True)

        def count_grip() -> None:
            self.robot.suction_hold()
            held = self.robot.held_packets()
            self.stats.gripped += len(held)
            if not len(held):
                self.failed[packet] += 1

        def release() -> None:
            self.robot.suction_on(False)

        def retract() -> None:
            self.announce("retract")

        lift = z - geo.TOOL_HOME[2]
        return [
            # reach out without lowering the tool (packets released onto the belt are still under
            # it), then lower it to the target
            Move("approach", lambda: {"drive": drive,
                                      "arm_lift": max(lift + 0.02, self.cmd["arm_lift"]),
                                      "arm_shift": y, "arm_reach": reach, "wrist_pitch": 0.0,
                                      "wrist_yaw": 0.0, "plunger_extend": 0.0,
                                      "nose_pitch": NOSE_UP, "nose_reach": 0.0,
                                      "sweep_left": 0.0, "sweep_right": 0.0},
                 timeout=10.0),
            Move("approach", {"arm_lift": lift + 0.02}, timeout=3.0),
            Move("extend", {"arm_lift": lift, "plunger_extend": EXTEND}, timeout=2.0,
                 dwell=0.3 * self.rng.uniform(0.8, 1.2), on_start=start_extend),
            Move("lift", {"arm_lift": lift + 0.05}, timeout=1.0, dwell=0.1, on_start=count_grip),
            Move("withdraw", lambda: {"arm_lift": self._crossing_lift(lift + 0.05),
                                      "plunger_extend": 0.05}, timeout=3.0),
            Move("withdraw", {"arm_reach": -1.0, "arm_shift": 0.0}, timeout=5.0),
            Move("lower", lambda: {"arm_lift": self._release_lift()}, timeout=3.0,
                 stop_when=self._lift_blocked),
            Move("release", {}, timeout=0.0, dwell=0.3 * self.rng.uniform(0.8, 1.2),
                 on_start=release),
            Move("retract", lambda: {"plunger_extend": 0.0, "arm_lift": self._clear_lift},
                 timeout=2.0, on_start=retract),
        ]

    def _held_below_tool(self) -> tuple[float, float]:
        """How far the lowest held packet's bottom is below the tool frame, and the height of the
        held stack (0, 0 when nothing is held)."""
        held = self.robot.held_packets()
        if not held.size:
            return 0.0, 0.0
        lo, hi = box_aabbs(self.robot.packet_poses(held), self.robot.packet_half[held])
        tool_z = geo.TOOL_HOME[2] + self.robot.positions(["arm_lift"])[0]
        return float(max(0.0, tool_z - lo[:, 2].min())), float(hi[:, 2].max() - lo[:, 2].min())

    def _crossing_lift(self, lift: float) -> float:
        need = CROSSING_BOTTOM + self._held_below_tool()[0] - geo.TOOL_HOME[2]
        return float(np.clip(max(lift, need), -0.45, 1.45))

    def _release_lift(self) -> float:
        """Lift that sets the held packets just above the belt; remembers the lift at which the
        tool clears their top afterwards (the belt carries them back under the tool)."""
        below, stack = self._held_below_tool()
        need = geo.BELT_TOP + RELEASE_CLEARANCE + below - geo.TOOL_HOME[2]
        self._clear_lift = float(np.clip(need - below + stack + CLEARANCE, -0.45, 1.45))
        return float(np.clip(need, -0.45, 1.45))

    def _sweep(self, option: SweepOption) -> list[Move]:
        """Nose down just before the option's ``block`` (the nearest packet in the lane), drive
        in until the tip reaches its ``stop`` (or the base is blocked, or :data:`SWEEP_DEPTH`),
        close the sweepers, convey, back off."""
        self.stats.sweeps += 1
        block, stop = option.block, option.stop
        tip0 = block - 0.25 + self.rng.uniform(-0.03, 0.03)  # raised tip clear of the block
        start = tip0 - (geo.NOSE_HINGE[0] + geo.NOSE_LENGTH) - self.drive_offset
        reach = 0.3
        depth = float(np.clip(stop - (start + self.drive_offset + NOSE_TIP + reach), 0.15 - reach,
                              SWEEP_DEPTH))
        arm_up = {"arm_lift": 1.2, "arm_reach": -0.8, "plunger_extend": 0.0, "arm_shift": 0.0,
                  "wrist_pitch": 0.0, "wrist_yaw": 0.0}
        return [
            Move("to_sweep", {**arm_up, "drive": start, "nose_pitch": NOSE_UP, "nose_reach": 0.0,
                              "sweep_left": 0.0, "sweep_right": 0.0}, timeout=8.0),
            Move("nose_down", {"nose_pitch": 0.0}, timeout=2.0),
            Move("sweep", {"drive": start + max(depth, 0.0), "nose_reach": reach + min(depth, 0.0)},
                 timeout=2.0 + (abs(depth) + reach) / SWEEP_SPEED, stop_when=self._blocked,
                 speeds={"drive": SWEEP_SPEED, "nose_reach": SWEEP_SPEED}),
            Move("sweep", {"sweep_left": -1.1, "sweep_right": 1.1}, timeout=1.5),
            Move("convey", {"sweep_left": 0.0, "sweep_right": 0.0}, timeout=1.5, dwell=1.5),
            Move("back_off", {"drive": start - 0.2, "nose_reach": 0.0, "nose_pitch": NOSE_UP},
                 timeout=5.0),
        ]

    def _lift_blocked(self) -> bool:
        """The tool lags its lowering command by 5 cm: what it holds rests on something."""
        return self.robot.positions(["arm_lift"])[0] - self.cmd["arm_lift"] > 0.05

    def _blocked(self) -> bool:
        """The base lags its command by more than 0.15 m: it is pushing against the load."""
        return self.cmd["drive"] - self.robot.positions(["drive"])[0] > 0.15


def run(controller: UnloadingController, sim, duration: float,
        every_tick: Callable[[], None] | None = None) -> None:
    """Tick the controller and step the engine ``sim`` for ``duration`` seconds of sim time."""
    steps = max(1, int(round(CONTROL_PERIOD / sim.step_size)))
    end = sim.time + duration
    while sim.time < end - 1e-9:
        controller.tick()
        sim.step(steps)
        if every_tick is not None:
            every_tick()
