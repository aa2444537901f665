"""The ``sim_fidelity_conveyor`` script: belts emulated by velocities, and unload counting.

A belt is a collision of a robot link (``<belt><link><collision><speed><direction>``, direction in
the link frame). Each physics step, every packet in contact with a belt is brought towards the
belt's surface velocity along the belt (plus the velocity of the robot's root link along its slide
joints, i.e. its drive), with a pull towards the belt's centre line across it, keeping its
velocity normal to the belt; the change per step is bounded by :data:`BELT_ACCELERATION`, like
friction (a packet jammed against something is not forced along, which would push the robot
through the jam). A
packet gripped by a weld is left to its weld. Every :data:`CHECK_PERIOD` seconds, packets behind
the model's ``unload_x`` (model frame) count as unloaded: they are moved to a storage yard beside
the dock, at rest, and their DYNAMICS and COLLISION levers are switched off, so they cost next to
nothing for the rest of the run.

Packets are the other free-moving models (:func:`~sim_fidelity.simulator.scripts.movable_models`),
in name order, including ones spawned later. A packet that is, for now, static or without collision
geometry (the static copy by which a client without lever services lowers it) is neither carried
nor counted until it moves freely and collides again. Over ROS (``sim_server``) the count is
published on ``/model/<model>/unloaded`` (std_msgs/UInt32).
"""
from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass

import mujoco
import numpy as np

from ..simulator.engine import MujocoEngine
from ..simulator.errors import SdfError
from ..simulator.protocol import Lever
from ..simulator.scripts import Publication, movable_models

CONVEYOR_FILENAME = "sim_fidelity_conveyor"
CENTERING_GAIN = 2.0  # 1/s: lateral velocity per metre off the belt's centre line
BELT_ACCELERATION = 40.0  # m/s^2: most a belt changes a packet's velocity per second; beats the
# contact friction (mu g, about 8 m/s^2) that holds a packet to the belt, bounds the push of a jam
ANGULAR_DAMPING = 0.5  # angular velocity kept per step on a belt
STORAGE_ORIGIN = np.array([-30.0, -10.0])  # m: storage yard (x, y), 1 m grid, 20 per row
CHECK_PERIOD = 0.05  # s between unload checks


@dataclass
class Belt:
    geom: int
    body: int
    speed: float
    direction: np.ndarray  # unit, link frame


class Conveyor:
    """Belts and unload counting of one robot (the model holding its one conveyor plugin)."""

    step_order = 1  # after the scripts that grip, so this step's welds are seen

    def __init__(self, engine: MujocoEngine, model: str, plugins: list[str]):
        if len(plugins) != 1:
            raise SdfError(f"model '{model}' has {len(plugins)} {CONVEYOR_FILENAME} plugins; "
                           "one conveyor plugin per model", element="plugin")
        self.plugin, self.model = plugins[0], model
        rec = engine.world.plugins[self.plugin]
        self.robot = rec.parent  # scoped name of the model holding the plugin
        root = ET.fromstring(rec.xml)
        self._belt_xml = [(f"{self.robot}::{b.findtext('link').strip()}",
                           b.findtext("collision").strip(), float(b.findtext("speed")),
                           np.array([float(v) for v in b.findtext("direction").split()]))
                          for b in root.findall("belt")]
        self.unload_x = float(root.findtext("unload_x"))
        self.check_every = max(1, int(round(CHECK_PERIOD / engine.step_size)))
        self.packets: list[str] = []
        self.in_truck = np.ones(0, bool)
        self.delivered = np.zeros(0, bool)  # per packet: moved to the storage yard
        self.reset(engine)
        self._bind(engine)

    def _bind(self, engine: MujocoEngine) -> None:
        """Model indices of belts, packets and the drive (after every compile); new packets are
        appended; a deleted one is out of the truck, uncounted, until spawned again under its
        name (as a static copy is)."""
        m, w = engine.model, engine.world
        self.belts = [Belt(m.geom(f"{link}::{collision}").id, m.body(link).id, speed,
                           direction / np.linalg.norm(direction))
                      for link, collision, speed, direction in self._belt_xml]
        known, movable = set(self.packets), movable_models(w, self.model)
        new = [p for p in movable if p not in known]
        self.packets += new
        self.delivered = np.concatenate([self.delivered, np.zeros(len(new), bool)])
        self.in_truck = np.array([p in w.models for p in self.packets], bool) & ~self.delivered
        colliding = np.zeros(m.nbody, bool)
        colliding[m.geom_bodyid[engine.index.collision_geom]] = True
        movable = set(movable)
        body = np.array([m.body(w.models[p].canonical_link).id if p in movable else 0
                         for p in self.packets], int)
        live = colliding[body] & (body > 0)  # bound: moves freely and has a collision geometry
        self.live = live
        self.packet_body = np.where(live, body, 0)
        self.packet_dof = m.jnt_dofadr[m.body_jntadr[self.packet_body]]
        self.packet_qpos = m.jnt_qposadr[m.body_jntadr[self.packet_body]]
        self.belt_of_geom = np.full(m.ngeom, -1, int)
        self.belt_of_geom[[b.geom for b in self.belts]] = np.arange(len(self.belts))
        row_of_body = np.full(m.nbody, -1, int)
        row_of_body[self.packet_body[live]] = np.flatnonzero(live)
        self.packet_of_geom = row_of_body[m.geom_bodyid]
        self.packet_of_geom[~engine.index.collision_geom] = -1  # visuals
        self.packet_half_height = np.array(
            [m.geom_size[np.flatnonzero((m.geom_bodyid == b) & engine.index.collision_geom)[0], 2]
             if ok else 0.0 for b, ok in zip(self.packet_body, live)])
        self._speed = np.array([b.speed for b in self.belts])
        self._dir_local = np.array([b.direction for b in self.belts])
        self._belt_body = np.array([b.body for b in self.belts], int)
        self._belt_geom = np.array([b.geom for b in self.belts], int)
        self._welds = np.flatnonzero(m.eq_type == mujoco.mjtEq.mjEQ_WELD)
        self._bind_drive(engine)

    def _bind_drive(self, engine: MujocoEngine) -> None:
        """DoFs and world axes of the slide joints that carry the robot's root link."""
        m, d = engine.model, engine.data
        root = m.body(engine.world.models[self.robot].canonical_link).id
        joints = [j for j in range(m.body_jntadr[root], m.body_jntadr[root] + m.body_jntnum[root])
                  if m.jnt_type[j] == mujoco.mjtJoint.mjJNT_SLIDE]
        self._drive_dof = m.jnt_dofadr[joints].astype(int)
        self._drive_axis = (m.jnt_axis[joints] @ d.xmat[root].reshape(3, 3).T).reshape(-1, 3)

    def recompiled(self, engine: MujocoEngine, body_map: np.ndarray) -> None:
        self._bind(engine)

    def reset(self, engine: MujocoEngine) -> None:
        """Every packet back in the truck (the engine reset their poses) and simulated again."""
        gone = [p for p, done in zip(self.packets, self.delivered)
                if done and p in engine.world.models]
        engine.set_lever(gone, Lever.DYNAMICS, True)
        engine.set_lever(gone, Lever.COLLISION, True)
        self.in_truck = np.array([p in engine.world.models for p in self.packets], bool)
        self.delivered[:] = False
        self.unload_times: list[float] = []
        self._steps = 0

    @property
    def unloaded(self) -> int:
        return len(self.unload_times)

    def __call__(self, engine: MujocoEngine) -> None:
        if engine.script_enabled(self.plugin):
            self._drive_belts(engine)
        self._steps += 1
        if self._steps % self.check_every == 0:
            self._count_unloaded(engine)

    def _drive_belts(self, engine: MujocoEngine) -> None:
        d = engine.data
        ncon = d.ncon
        if not ncon:
            return
        geoms = d.contact.geom[:ncon]
        belt = self.belt_of_geom[geoms]
        pk = self.packet_of_geom[geoms]
        on0 = (belt[:, 0] >= 0) & (pk[:, 1] >= 0)
        on1 = (belt[:, 1] >= 0) & (pk[:, 0] >= 0)
        if not (on0.any() or on1.any()):
            return
        rows = np.concatenate([pk[on0, 1], pk[on1, 0]])
        belts = np.concatenate([belt[on0, 0], belt[on1, 1]])
        rows, first = np.unique(rows, return_index=True)
        belts = belts[first]
        welded = engine.model.eq_obj2id[self._welds[d.eq_active[self._welds] == 1]]
        if welded.size:  # a gripped packet follows its weld, not the belt
            free = ~np.isin(self.packet_body[rows], welded)
            rows, belts = rows[free], belts[free]
            if not rows.size:
                return
        mats = d.xmat[self._belt_body[belts]].reshape(-1, 3, 3)
        along = np.einsum("nij,nj->ni", mats, self._dir_local[belts])
        across = mats[:, :, 1]
        normal = np.cross(along, across)
        dof = self.packet_dof[rows]
        lin = d.qvel[dof[:, None] + np.arange(3)]
        offset = np.einsum("ni,ni->n",
                           d.xpos[self.packet_body[rows]] - d.geom_xpos[self._belt_geom[belts]],
                           across)
        base_v = d.qvel[self._drive_dof] @ self._drive_axis
        target = (self._speed[belts, None] * along + base_v
                  + np.einsum("ni,ni->n", lin, normal)[:, None] * normal
                  - CENTERING_GAIN * offset[:, None] * across)
        change = target - lin  # the belt's friction bounds how fast it brings a packet along
        limit = BELT_ACCELERATION * engine.step_size
        norm = np.linalg.norm(change, axis=1, keepdims=True)
        scale = np.minimum(1.0, limit / np.maximum(norm, 1e-12))
        d.qvel[dof[:, None] + np.arange(3)] = lin + change * scale
        d.qvel[dof[:, None] + np.arange(3, 6)] *= ANGULAR_DAMPING

    def _count_unloaded(self, engine: MujocoEngine) -> None:
        d = engine.data
        model_pose = engine.get_states([self.robot])[0][0]
        rows = np.flatnonzero(self.in_truck & self.live)
        gone = rows[d.xpos[self.packet_body[rows], 0] < model_pose[0] + self.unload_x]
        if not gone.size:
            return
        k = self.unloaded + np.arange(gone.size)
        qa = self.packet_qpos[gone][:, None]
        d.qpos[qa + np.arange(3)] = np.stack(
            [STORAGE_ORIGIN[0] - k // 20, STORAGE_ORIGIN[1] + k % 20,
             self.packet_half_height[gone] + 0.001], axis=1)
        d.qpos[qa + np.arange(3, 7)] = [1.0, 0.0, 0.0, 0.0]
        d.qvel[self.packet_dof[gone][:, None] + np.arange(6)] = 0.0
        names = [self.packets[i] for i in gone]
        engine.set_lever(names, Lever.DYNAMICS, False)
        engine.set_lever(names, Lever.COLLISION, False)
        self.in_truck[gone] = False
        self.delivered[gone] = True
        self.unload_times += [engine.time] * gone.size

    def ros_endpoints(self) -> list[Publication]:
        return [Publication(f"/model/{self.model}/unloaded", "std_msgs/msg/UInt32",
                            lambda engine: {"data": self.unloaded})]
