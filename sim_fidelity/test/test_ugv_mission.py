"""The UGV's mission software and its monitor: the pure core, and missions flown in process on
the vehicle (``UgvSim``, real MuJoCo) on the design and deployment fields."""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from reality_gap_cases import pitch_everywhere
from rosbags.rosbag2 import Reader

from sim_fidelity.reality_gap.kernel_set import KernelRunner, KernelSet
from sim_fidelity.reality_gap.messages import typestore
from sim_fidelity.reality_gap.spec import load_spec
from sim_fidelity.simulator.poses import quat_to_rpy
from sim_fidelity.ugv.course import GOAL_RADIUS, IMU_TOPIC, TIME_LIMIT, WAYPOINTS
from sim_fidelity.ugv.fly import Start, fly
from sim_fidelity.ugv.mission import MissionParams, Navigator
from sim_fidelity.ugv.monitor import GIVE_UP, INSTRUMENTATION, PerformanceMonitor
from sim_fidelity.ugv.pipeline import SPEC
from sim_fidelity.ugv.vehicle import UgvSim

QUIET = dict(steering_noise=0.0, speed_noise=0.0)


def test_dead_reckoning_follows_the_bicycle_arc_between_fixes() -> None:
    nav = Navigator(MissionParams(**QUIET))
    nav.on_fix(0.0, 0.0, 0.0)
    nav.set_heading(0.0)
    nav.command = (1.0, 0.3)  # in force from t = 0
    nav.on_pitch(0.0)
    nav._advance(1.0)
    rate = math.tan(0.3) / nav.p.wheelbase  # rad/s
    radius = 1.0 / rate
    expected = radius * np.array([math.sin(rate), 1 - math.cos(rate)])
    np.testing.assert_allclose(nav.position, expected, atol=1e-9)
    assert nav.heading == pytest.approx(rate)


def test_heading_from_the_gps_chord_advanced_by_half_the_turn() -> None:
    nav = Navigator(MissionParams(**QUIET))
    nav.on_fix(0.0, 0.0, 0.0)
    nav.set_heading(0.0)
    nav.command = (0.0, 0.0)
    nav.on_fix(1.0, 1.0, 1.0)  # moved north-east while dead reckoning saw no turn
    assert nav.heading == pytest.approx(math.pi / 4)
    np.testing.assert_allclose(nav.position, [1.0, 1.0])


def test_spring_saturates_and_the_pitch_check_raises_it() -> None:
    for redesign, pitch, speed in ((False, 0.3, 1.0), (True, 0.0, 1.0), (True, -0.3, 2.0)):
        params = MissionParams(**QUIET, redesign=redesign)
        nav = Navigator(params)
        nav.on_fix(0.0, 0.0, 0.0)
        nav.set_heading(math.atan2(15, 5))  # facing the second waypoint, 15.8 m away
        nav.on_pitch(pitch)
        assert nav.tick(0.0) == pytest.approx((speed, 0.0), abs=1e-9), (redesign, pitch)
        assert nav.climbing == (redesign and abs(pitch) > params.pitch_threshold)
    near = Navigator(MissionParams(**QUIET))
    near.waypoint = 2
    near.on_fix(0.0, -5.0 + 1.2, 15.0)  # 1.2 m short of the final waypoint, facing it
    near.set_heading(math.pi)
    assert near.tick(0.0)[0] == pytest.approx(0.5 * 1.2)  # the spring, below saturation
    near.on_fix(1.0, -5.0 + 0.9, 15.0)
    assert near.finished and near.tick(1.0) == (0.0, 0.0)  # inside the stop radius


def test_monitor_rewards_on_time_arrival_once_and_reports_every_two_seconds() -> None:
    monitor = PerformanceMonitor(start=100.0)
    rewards = []
    for k in range(0, 400):
        t = 100.0 + 0.1 * k
        fix = (-5.0 + GOAL_RADIUS - 0.1, 15.0) if t >= 130.0 else (0.0, 0.0)
        monitor.update(t, fix, last_leg=True)
        report = monitor.report(t, (0.0,) * (len(INSTRUMENTATION) - 1))
        if report is not None:
            rewards.append((round(t - 100.0, 1), report.reward))
            assert len(report.row) == len(INSTRUMENTATION) and report.row[-1] == report.reward
        if monitor.done:
            break
    assert monitor.on_time and monitor.total == 10.0
    assert [t for t, _ in rewards] == [2.0 * i for i in range(1, 15)] + [30.0]
    assert sum(r for _, r in rewards) == 10.0


def test_monitor_late_arrival_and_giving_up_cost_ten_once() -> None:
    late = PerformanceMonitor(start=0.0)
    for k in range(0, 450):
        late.update(0.1 * k, (-5.0, 15.0) if k >= 440 else (0.0, 0.0), last_leg=True)
    assert late.arrived_at == pytest.approx(44.0) and not late.on_time and late.total == -10.0
    gone = PerformanceMonitor(start=0.0)
    far = PerformanceMonitor(start=0.0)
    for k in range(0, int(GIVE_UP * 10) + 1):
        gone.update(0.1 * k, (0.0, 0.0), last_leg=True)
        far.update(0.1 * k, (-5.0, 15.0), last_leg=False)  # at the goal, a waypoint skipped
    assert gone.done and gone.total == -10.0 and gone.arrived_at is None
    assert far.done and far.total == -10.0 and far.arrived_at is None
    assert TIME_LIMIT < GIVE_UP


def test_mission_reaches_the_three_waypoints_on_the_design_field() -> None:
    sim = UgvSim.from_world("design", seed=3)
    flight = fly(sim, MissionParams(), Start(0.2, -0.3, math.pi / 2 + 0.1, seed=5))
    assert flight.total == 10.0 and flight.arrived_at <= TIME_LIMIT
    gaps = [np.hypot(*(flight.track - np.array(w)).T).min() for w in WAYPOINTS]
    assert gaps[1] < MissionParams().capture_radius + 0.5  # passed by the second waypoint
    assert np.hypot(*(flight.track[-1] - np.array(WAYPOINTS[-1]))) < GOAL_RADIUS


def _drive(world: str, params: MissionParams, start: Start, heading: float | None = None,
           seconds: float = 30.0) -> np.ndarray:
    """The mission flown on ``world`` from ``start``: rows of t, x, y, |pitch|, waypoint index
    (``heading``: the mission told where it faces, as if it had a chord already)."""
    from sim_fidelity.simulator.geodesy import geodetic_to_enu
    from sim_fidelity.ugv.fly import place
    from sim_fidelity.ugv.mission import Mission

    sim = UgvSim.from_world(world, seed=2)
    place(sim, start)
    mission = Mission(0.0, params, seed=start.seed)
    if heading is not None:
        mission.navigator.set_heading(heading)
    rows, fix_time = [], None
    while sim.time < seconds and not mission.done:
        fix, imu = sim.gps(), sim.imu()
        if fix is not None and fix.time != fix_time:
            fix_time = fix.time
            east, north, _ = geodetic_to_enu(fix.latitude, fix.longitude, fix.altitude,
                                             sim.origin)
            mission.on_fix(sim.time, float(east), float(north))
        if imu is not None:
            mission.on_pitch(float(imu.rpy[1]))
        speed, steering, _ = mission.tick(sim.time)
        pose = sim.pose()
        rows.append((sim.time, pose[0], pose[1], abs(sim.rpy()[1]), mission.navigator.waypoint))
        sim.command(speed, steering)
        sim.step(0.1)
    return np.array(rows)


def _last_leg(world: str, params: MissionParams) -> np.ndarray:
    """From (3.5, 15) facing west towards the final waypoint."""
    return _drive(world, params, Start(3.5, 15.0, math.pi, seed=4), heading=math.pi)


def _past(rows: np.ndarray, x: float) -> float:
    """The first time the vehicle is west of ``x`` (inf if never)."""
    west = rows[rows[:, 1] < x, 0]
    return float(west[0]) if len(west) else math.inf


def test_the_deployment_mission_reaches_the_second_waypoint_and_meets_the_ramp_after_it() -> None:
    """On the deployment field (coarse throttle table, steering trim, grass) the mission still
    turns towards (5, 15), passes it, and meets the ramp on the leg to (-5, 15), as the paper's
    deployed vehicle did: the first pitch above 0.1 rad comes on the last leg, on the ramp."""
    rows = _drive("deploy", MissionParams(), Start(0.2, -0.3, math.pi / 2 + 0.1, seed=5),
                  seconds=60.0)
    gap = np.hypot(rows[:, 1] - WAYPOINTS[1][0], rows[:, 2] - WAYPOINTS[1][1]).min()
    assert gap < MissionParams().capture_radius + 0.5
    pitched = rows[rows[:, 3] > 0.1]
    assert len(pitched), "never pitched: the ramp was not met"
    first = pitched[0]
    assert first[4] == len(WAYPOINTS) - 1  # on the last leg
    assert abs(first[1]) < 1.5 and 13.0 < first[2] < 17.0  # on the ramp's slope


def test_the_ramp_slows_the_original_software_and_the_redesign_climbs_it() -> None:
    """The leg from (5, 15) to (-5, 15): on the design field the original software arrives in
    seconds; on the deployment field its command (at most 1 m/s: the throttle table's second
    step) climbs the ramp slowly, while the redesign (larger spring and saturation above the
    pitch threshold: the top step) drives over it (its top at x in [-0.3, 0.3]) seconds
    sooner."""
    last = (WAYPOINTS[-1],)
    original = MissionParams(waypoints=last)
    design = _last_leg("design", original)
    assert design[-1, 1] < -2.0 and design[:, 3].max() < 0.05  # flat, arrived
    slow = _last_leg("deploy", original)
    climbed = _last_leg("deploy", original.redesigned())
    assert slow[:, 3].max() > 0.1 and climbed[:, 3].max() > 0.1  # both met the slope
    assert _past(design, -1.0) + 3.0 < _past(slow, -1.0)  # the ramp holds the original back
    assert _past(climbed, -1.0) + 3.0 < _past(slow, -1.0)  # the redesign is over it sooner
    on_slope = (slow[:, 3] > 0.1).sum(), (climbed[:, 3] > 0.1).sum()
    assert on_slope[1] < on_slope[0]


def test_a_kernel_holds_the_imu_pitch_for_its_period_and_the_next_look_reads_the_simulation(
        tmp_path) -> None:
    """With the shipped spec (pose and the IMU's pitch value), a kernel active everywhere whose
    f_k keeps the state and sets pitch 0.2: the IMU the mission reads (logged to the bag)
    reports 0.2 from each look with a correction up to the next look, which reads the
    simulation's own IMU (the flat field's pitch); after the flight nothing is held."""
    spec = load_spec(SPEC)
    sim = UgvSim.from_world("design", seed=2)
    runner = KernelRunner(sim.engine, KernelSet([pitch_everywhere(spec)], spec),
                          sensors=sim.sensors)
    flight = fly(sim, MissionParams(), Start(0.0, 0.0, math.pi / 2, seed=2), bag=tmp_path / "bag",
                 runner=runner)
    assert flight.kernel_hits > 5
    store, rows = typestore(), []
    with Reader(tmp_path / "bag") as reader:
        for conn, stamp, raw in reader.messages([c for c in reader.connections
                                                 if c.topic == IMU_TOPIC]):
            q = store.deserialize_cdr(raw, conn.msgtype).orientation
            rows.append((stamp * 1e-9, quat_to_rpy(np.array([q.x, q.y, q.z, q.w]))[1]))
    t, read = np.array(rows).T
    period = 1.0 / spec.rate_hz
    at_look = np.isclose(t / period, np.round(t / period), atol=1e-6)
    # the first look (t = 0) has no fix yet, the second takes (s, a), the third corrects
    held = (t > 2 * period + 1e-6) & ~at_look
    assert held.sum() > 50 and at_look.sum() > 5
    np.testing.assert_allclose(read[held], 0.2, atol=1e-9)
    assert np.abs(read[at_look]).max() < 0.05  # the simulation's own: flat
    assert np.abs(read[t <= 2 * period + 1e-6]).max() < 0.05  # before any correction
    assert math.isnan(sim.sensors.pitch[sim.imu_sensor])  # released after the flight


def test_expire_ends_only_the_overrides_held_for_a_period() -> None:
    """``KernelRunner.expire`` releases the ``hold: period`` values (the shipped spec's IMU pitch)
    and leaves ``while_active`` ones to :meth:`release`."""
    spec = load_spec(SPEC)
    assert [t.hold for t in spec.apply if t.component == "value"] == ["period"]
    while_active = dataclasses.replace(spec, apply=tuple(
        dataclasses.replace(t, hold="while_active") for t in spec.apply))
    sim = UgvSim.from_world("design", seed=2)
    sim.step(0.5)
    state, action = np.array([0.0, 0.0, math.pi / 2, 0.0]), np.zeros(2)
    for held, expires in ((spec, True), (while_active, False)):
        runner = KernelRunner(sim.engine, KernelSet([pitch_everywhere(held)], held),
                              sensors=sim.sensors)
        assert runner.apply(state, action) is not None
        assert sim.imu().rpy[1] == pytest.approx(0.2)
        runner.expire()
        assert bool(abs(sim.imu().rpy[1]) < 1e-2) is expires
        runner.release()
        assert abs(sim.imu().rpy[1]) < 1e-2
