"""The ``sim_fidelity_suction`` script: one suction cup per plunger, as an engine step hook.

Every suction plugin of a model (on a cup link, naming its proximity ``<sensor>``) is one row of
this vectorised script (run by :mod:`~sim_fidelity.simulator.scripts`). At the sensor's update
rate it casts each enabled sensor's ray along the cup axis and, while suction is commanded on,
grips every packet (a link of another free-moving model) that a cup touches and sees within
``grip_distance``. A sealed cup holds its packet rigidly to the plunger plate: the grip is a weld
constraint from the plate to the packet (one per gripped packet, from the first cup that seals on
it), allocated inactive per plunger before the world is compiled (:meth:`Suction.prepare`) and
retargeted at run time. Welding to the plate rather than to the 0.1 kg cup at the end of four
compliant joints keeps heavy packets (up to 30 kg, several at once) stable at a 2 ms step.
Switching suction off releases every grip at once. Each cup has its own valve: switching suction
on opens them all, :meth:`Suction.hold` closes those of the cups that hold nothing, so a packet that
falls against an idle cup while the tool carries its load is not seized (a new weld with the stack
in contact is what made MuJoCo diverge). A plunger whose script (SCRIPT lever) or sensor (SENSOR
lever) is off neither senses nor grips, and drops what it held.

A welded packet is *carried* (``MujocoEngine.set_carried``): the cups (conaffinity 0) stop touching
it, so no compliant cup presses on a load the weld already holds rigidly; it still collides with
everything else, other carried packets included. A released packet stays carried until no cup
reaches into it (the cups sprang forward into it while it was carried).

Over ROS (``sim_server``): ``/model/<model>/suction/cmd`` (std_msgs/Bool) switches suction,
``/model/<model>/suction/hold`` (std_msgs/Empty) closes the idle cups' valves, and
``/model/<model>/suction/state`` (sim_fidelity_interfaces/SuctionState) tells what is held.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET

import mujoco
import numpy as np

from ..simulator.engine import MujocoEngine
from ..simulator.scripts import Publication, Subscription, movable_models, top_model
from ..simulator.sdf.records import LoadedWorld

SUCTION_FILENAME = "sim_fidelity_suction"
RAY_GROUP = 3  # cups are moved to this geom group so their own rays skip them
RAY_BACKOFF = 0.02  # m: rays start this far behind the sensor, so a cup pressed a little into a
# face (soft contact) still sees it; a reading is the distance past the sensor, 0 at the least
WELD_SUFFIX = "::weld"
CLEARANCE = 0.005  # m between a released packet and every cup before the cups touch it again


class Suction:
    """The suction plugins of one model; call :meth:`command` to switch suction on or off."""

    @staticmethod
    def prepare(world: LoadedWorld, plugins: list[str]) -> None:
        """Allocate one inactive weld per suction plugin (cup -> world) in ``world.spec``; the
        cups' conaffinity goes to 0 so carried packets do not collide with them."""
        for name in plugins:
            for geom in world.links[world.plugins[name].parent].collisions:
                world.spec.geom(geom).conaffinity = 0
            world.spec.add_equality(name=name + WELD_SUFFIX, type=mujoco.mjtEq.mjEQ_WELD,
                                    objtype=mujoco.mjtObj.mjOBJ_BODY,
                                    name1=world.plugins[name].parent, name2="world", active=False)

    def __init__(self, engine: MujocoEngine, model: str, plugins: list[str]):
        w = engine.world
        self.model, self.plugins = model, list(plugins)
        n = len(self.plugins)
        self.sensors, rates, self.grip_distance = [], [], np.empty(n)
        for i, name in enumerate(self.plugins):
            rec = w.plugins[name]
            root = ET.fromstring(rec.xml)
            sensor = f"{rec.parent}::{root.findtext('sensor', 'proximity').strip()}"
            self.sensors.append(sensor)
            rates.append(w.sensors[sensor].update_rate or 1.0 / engine.step_size)
            self.grip_distance[i] = float(root.findtext("grip_distance", "0.01"))
        sensor_xml = [ET.fromstring(w.sensors[s].xml) for s in self.sensors]
        self.range = np.array([float(x.findtext("ray/range/max", "0.1")) for x in sensor_xml])
        self.sensor_offset = np.array([w.sensors[s].pose[:3] for s in self.sensors]).reshape(n, 3)
        self.period = max(1, int(round(1.0 / (min(rates) * engine.step_size))))
        self.geom_group_mask = np.array([1, 0, 0, 0, 0, 0], np.uint8)
        self._geomid = np.zeros(1, np.int32)
        self.carried = np.zeros(0, int)  # body ids this suction has marked carried
        self.reset(engine)
        self._bind(engine)

    def _bind(self, engine: MujocoEngine) -> None:
        """Model indices of cups, welds, plates and grippable bodies (after every compile)."""
        m, w = engine.model, engine.world
        self.cup_body = np.array([m.body(w.plugins[p].parent).id for p in self.plugins], int)
        collision = engine.index.collision_geom
        self.cup_geom = np.array([np.flatnonzero((m.geom_bodyid == b) & collision)[0]
                                  for b in self.cup_body], int)
        m.geom_group[self.cup_geom] = RAY_GROUP
        self.eq = np.array([m.equality(p + WELD_SUFFIX).id for p in self.plugins], int)
        plate = self.cup_body.copy()
        for _ in range(4):  # cup -> gimbal_b -> gimbal_a -> tube -> plate
            plate = m.body_parentid[plate]
        self.plate_body = plate
        others = set(movable_models(w, self.model))
        self.grippable = np.zeros(m.nbody, bool)
        self.grippable[[m.body(n).id for n, r in w.links.items()
                        if top_model(r.model) in others]] = True

    def reset(self, engine: MujocoEngine) -> None:
        """Suction off, nothing held or carried (the engine reset deactivated the welds)."""
        engine.set_carried(self.carried, False)
        self.carried = np.zeros(0, int)
        n = len(self.plugins)
        self.on = False
        self.held = np.full(n, -1, int)  # body id held by each cup, -1 when none
        self._weld_on = np.zeros(n, bool)  # the row's weld is the active one of its packet
        self.valve_open = np.ones(n, bool)
        self.readings = np.full(n, np.inf)  # metres to the nearest geom along each cup axis
        self.active = np.ones(n, bool)
        self._steps = 0

    def recompiled(self, engine: MujocoEngine, body_map: np.ndarray) -> None:
        """Rebind, then weld again what is still held (the recompile reset the weld targets)."""
        self._bind(engine)
        self.carried = body_map[self.carried]
        self.carried = self.carried[self.carried >= 0]
        self.held[self.held >= 0] = body_map[self.held[self.held >= 0]]
        rows = np.flatnonzero(self._weld_on & (self.held >= 0))
        engine.data.eq_active[self.eq] = 0
        self._weld_on[:] = False
        self._weld(engine, rows, self.held[rows])

    def __len__(self) -> int:
        return len(self.plugins)

    def command(self, engine: MujocoEngine, on: bool) -> None:
        """Suction on (grip what the cups touch from the next update) or off (release all now)."""
        if on and not self.on:
            self.valve_open[:] = True
        self.on = bool(on)
        if not on:
            self._release(engine, np.flatnonzero(self.held >= 0))

    def hold(self) -> None:
        """Close the valves of the cups that hold nothing: keep the load, seize nothing more."""
        self.valve_open &= self.held >= 0

    def __call__(self, engine: MujocoEngine) -> None:
        self._steps += 1
        if self._steps % self.period:
            return
        self.active = np.array([engine.script_enabled(p) and engine.sensor_enabled(s)
                                for p, s in zip(self.plugins, self.sensors)], bool)
        self._release(engine, np.flatnonzero(~self.active & (self.held >= 0)))
        self._drop_clear(engine)
        self._sense(engine)
        if self.on:
            self._grip(engine)

    def _sense(self, engine: MujocoEngine) -> None:
        m, d = engine.model, engine.data
        self.readings[:] = np.inf
        idx = np.flatnonzero(self.active)
        if not idx.size:
            return
        mats = d.xmat[self.cup_body[idx]].reshape(-1, 3, 3)
        axes = np.ascontiguousarray(mats[:, :, 0])
        origins = (d.xpos[self.cup_body[idx]]
                   + np.einsum("nij,nj->ni", mats, self.sensor_offset[idx])
                   - RAY_BACKOFF * axes)
        for k, i in enumerate(idx):
            dist = mujoco.mj_ray(m, d, origins[k], axes[k], self.geom_group_mask, 1, -1,
                                 self._geomid)
            if 0 <= dist <= self.range[i] + RAY_BACKOFF:
                self.readings[i] = max(dist - RAY_BACKOFF, 0.0)

    def _grip(self, engine: MujocoEngine) -> None:
        m, d = engine.model, engine.data
        ncon = d.ncon
        if not ncon:
            return
        geoms = d.contact.geom[:ncon]
        bodies = m.geom_bodyid[geoms]
        cup_row = np.full(m.ngeom, -1, int)
        cup_row[self.cup_geom] = np.arange(len(self))
        rows, other = [], []
        for a, b in ((0, 1), (1, 0)):
            r = cup_row[geoms[:, a]]
            hit = (r >= 0) & self.grippable[bodies[:, b]]
            rows.append(r[hit]), other.append(bodies[hit, b])
        rows_a, other_a = np.concatenate(rows), np.concatenate(other)
        ok = ((self.held[rows_a] < 0) & self.active[rows_a] & self.valve_open[rows_a]
              & (self.readings[rows_a] <= self.grip_distance[rows_a]))
        rows_a, other_a = rows_a[ok], other_a[ok]
        rows_a, first = np.unique(rows_a, return_index=True)
        other_a = other_a[first]
        if not rows_a.size:
            return
        self.held[rows_a] = other_a
        new = ~np.isin(other_a, self._welded())  # one weld per packet
        rows_a, other_a = rows_a[new], other_a[new]
        other_a, first = np.unique(other_a, return_index=True)
        rows_a = rows_a[first]
        self._weld(engine, rows_a, other_a)

    def _welded(self) -> np.ndarray:
        return self.held[self._weld_on]

    def _weld(self, engine: MujocoEngine, rows_a: np.ndarray, other_a: np.ndarray) -> None:
        m, d = engine.model, engine.data
        if not rows_a.size:
            return
        cups = self.plate_body[rows_a]
        r1 = d.xmat[cups].reshape(-1, 3, 3)
        relpos = np.einsum("nji,nj->ni", r1, d.xpos[other_a] - d.xpos[cups])
        relquat = np.empty((len(cups), 4))
        inv = np.empty(4)
        for k, (c, o) in enumerate(zip(cups, other_a)):
            mujoco.mju_negQuat(inv, d.xquat[c])
            mujoco.mju_mulQuat(relquat[k], inv, d.xquat[o])
        eq = self.eq[rows_a]
        m.eq_obj1id[eq] = cups
        m.eq_obj2id[eq] = other_a
        m.eq_data[eq, 0:3] = 0.0
        m.eq_data[eq, 3:6] = relpos
        m.eq_data[eq, 6:10] = relquat
        d.eq_active[eq] = 1
        self._weld_on[rows_a] = True
        fresh = np.setdiff1d(other_a, self.carried)
        engine.set_carried(fresh, True)
        self.carried = np.concatenate([self.carried, fresh])

    def _drop_clear(self, engine: MujocoEngine) -> None:
        """Stop carrying released packets that no cup reaches into any more."""
        loose = np.setdiff1d(self.carried, self.held)
        if not loose.size:
            return
        m, d = engine.model, engine.data
        clear = np.ones(loose.size, bool)
        for k, body in enumerate(loose):
            geoms = np.flatnonzero((m.geom_bodyid == body) & engine.index.collision_geom)
            for g in geoms:
                reach = m.geom_rbound[g] + m.geom_rbound[self.cup_geom] + CLEARANCE
                near = self.cup_geom[np.linalg.norm(d.geom_xpos[self.cup_geom] - d.geom_xpos[g],
                                                    axis=1) < reach]
                if any(mujoco.mj_geomDistance(m, d, g, c, CLEARANCE, None) < CLEARANCE
                       for c in near):
                    clear[k] = False
                    break
        engine.set_carried(loose[clear], False)
        self.carried = np.setdiff1d(self.carried, loose[clear])

    def _release(self, engine: MujocoEngine, rows: np.ndarray) -> None:
        """Unseal ``rows``; a packet still held by another cup is re-welded through that cup."""
        if not rows.size:
            return
        off = rows[self._weld_on[rows]]
        engine.data.eq_active[self.eq[off]] = 0
        engine.model.eq_obj2id[self.eq[off]] = 0
        self._weld_on[off] = False
        self.held[rows] = -1
        orphans = np.setdiff1d(self.held[self.held >= 0], self._welded())
        if orphans.size:
            first = np.array([np.flatnonzero(self.held == b)[0] for b in orphans], int)
            self._weld(engine, first, orphans)

    def held_bodies(self) -> np.ndarray:
        """Distinct body ids held by any cup now."""
        return np.unique(self.held[self.held >= 0])

    def held_models(self, engine: MujocoEngine) -> list[str]:
        """Names of the models held now."""
        return sorted({top_model(engine.model.body(b).name) for b in self.held_bodies()})

    def ros_endpoints(self) -> list[Subscription | Publication]:
        topic = f"/model/{self.model}/suction"
        return [Subscription(f"{topic}/cmd", "std_msgs/msg/Bool",
                             lambda engine, msg: self.command(engine, msg.data)),
                Subscription(f"{topic}/hold", "std_msgs/msg/Empty",
                             lambda engine, msg: self.hold()),
                Publication(f"{topic}/state", "sim_fidelity_interfaces/msg/SuctionState",
                            lambda engine: {"on": self.on, "held": self.held_models(engine)})]
