"""Where each SDF entity of a compiled world lives in the MuJoCo model, rebuilt on every compile.

:class:`EntityIndex` maps scoped names to body and actuator ids, entity kinds, the reference
body and frame offset that carry a model's or link's state, qpos/qvel addresses of free joints,
and caches the index arrays of repeated name lists (:class:`StateRefs`, joint addresses), so a
1000-entity ``get_states`` is a few fancy-indexing reads.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import mujoco
import numpy as np

from . import poses
from .errors import InvalidOperationError, UnknownEntityError
from .protocol import EntityInfo, EntityKind
from .sdf.records import FREE_JOINT_SUFFIX, LoadedWorld

XYZW_ORDER = np.array([0, 1, 2, 4, 5, 6, 3])  # a free joint's qpos [p, quat wxyz] as [p, quat xyzw]
CACHE_SIZE = 64  # name lists whose index arrays are kept
NO_BODIES = np.zeros(0, np.intp)


@dataclass(frozen=True)
class StateRefs:
    """Where the states of a list of entities live: reference bodies and entity-frame offsets."""

    bids: np.ndarray
    offsets: np.ndarray  # (n, 7) entity frame in the reference body frame
    free: np.ndarray  # rows whose reference body has a free joint (state read from qpos/qvel)
    other: np.ndarray  # the other rows (state from kinematics)
    qidx: np.ndarray  # (n_free, 7) qpos indices [p, quat wxyz] of those free joints
    qxyzw: np.ndarray  # the same as a pose [p, quat xyzw]
    didx: np.ndarray  # (n_free, 6) qvel indices [v world, w body]
    offset: bool  # any offset differs from identity
    simple: bool  # every entity is carried by exactly its free reference body (vectorised set)


# a body carrying an entity's pose, and its free link (None: static)
Root = tuple[int, "str | None"]


class EntityIndex:
    """Names -> indices of one compiled model of ``world``; immutable until the next compile."""

    def __init__(self, world: LoadedWorld, model: mujoco.MjModel):
        m, w = model, world
        self.world = world
        self.body_names = [m.body(i).name for i in range(m.nbody)]
        self.body_id = {n: i for i, n in enumerate(self.body_names)}
        self.actuator_names = [m.actuator(i).name for i in range(m.nu)]
        self.actuator_id = {n: i for i, n in enumerate(self.actuator_names)}
        self.collision_geom = np.zeros(m.ngeom, bool)  # per geom: an SDF <collision>, whatever
        # the levers did to its contype (scripts bind to their geoms after every compile)
        self.collision_geom[[m.geom(g).id for r in w.links.values() for g in r.collisions]] = True
        self.info: dict[str, EntityInfo] = {}
        self._build_info()
        self.kind = {n: i.kind for n, i in self.info.items()}  # checks of many names at once
        self.bodies = self._bodies_of_entities()
        self._one_body = {n: int(b[0]) for n, b in self.bodies.items() if len(b) == 1}
        self.ref_body, self.ref_offset = self._reference_frames(m)
        free_links = [n for n, r in w.links.items() if r.free]
        free_joints = [m.joint(n + FREE_JOINT_SUFFIX).id for n in free_links]
        self.body_free_qpos = {self.body_id[n]: int(m.jnt_qposadr[j])
                               for n, j in zip(free_links, free_joints)}
        self.body_free_dof = {self.body_id[n]: int(m.jnt_dofadr[j])
                              for n, j in zip(free_links, free_joints)}
        self.roots_of = self._roots(m)
        self._refs_cache: dict[tuple, StateRefs] = {}
        self._joint_cache: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}

    # ------------------------------------------------------------------ building
    def _build_info(self) -> None:
        w = self.world
        for name, rec in w.models.items():
            self.info[name] = EntityInfo(name, EntityKind.MODEL, rec.parent, rec.static)
        for name, rec in w.links.items():
            self.info[name] = EntityInfo(name, EntityKind.LINK, rec.model,
                                         w.models[rec.model].static)
        for name, rec in w.joints.items():
            self.info[name] = EntityInfo(name, EntityKind.JOINT, rec.model, type=rec.type)
        for name, rec in w.sensors.items():
            self.info[name] = EntityInfo(name, EntityKind.SENSOR, rec.parent, type=rec.type)
        for name, rec in w.plugins.items():
            self.info[name] = EntityInfo(name, EntityKind.PLUGIN, rec.parent, type=rec.filename)

    def _bodies_of_entities(self) -> dict[str, np.ndarray]:
        """Body ids of each link, and of each model with every model nested in it."""
        w = self.world
        model_bodies: dict[str, list[int]] = {}
        for name, rec in w.links.items():
            for model in self.enclosing_models(rec.model):
                model_bodies.setdefault(model, []).append(self.body_id[name])
        bodies = {n: np.array(sorted(b), int) for n, b in model_bodies.items()}
        bodies.update({n: np.array([self.body_id[n]]) for n in w.links})
        return bodies

    def _reference_frames(self, m: mujoco.MjModel) -> tuple[dict[str, int], dict[str, np.ndarray]]:
        """Each model/link -> the body carrying its state and the entity frame in that body."""
        w = self.world
        ref_body = {n: self.body_id[n] for n in w.links}
        ref_offset = {n: poses.IDENTITY for n in w.links}
        at_load = mujoco.MjData(m)  # offsets hold in the configuration the records describe
        mujoco.mj_kinematics(m, at_load)
        for name, rec in w.models.items():
            canonical = rec.canonical_link or (self._first_link(name) or "")
            if not canonical:
                continue
            bid = self.body_id[canonical]
            ref_body[name] = bid
            x_wl = np.concatenate([at_load.xpos[bid], poses.wxyz_to_xyzw(at_load.xquat[bid])])
            ref_offset[name] = poses.compose(poses.inverse(x_wl), rec.pose)
        return ref_body, ref_offset

    def _roots(self, m: mujoco.MjModel) -> dict[str, list[Root]]:
        """The bodies that carry each model's/link's pose: free root links, or static root
        bodies."""
        w = self.world
        roots_of: dict[str, list[Root]] = {}
        for name, rec in w.links.items():
            bid = self.body_id[name]
            if rec.free:
                root: Root = (bid, name)
            elif w.models[rec.model].static and m.body_parentid[bid] == 0:
                root = (bid, None)  # moved through the model's body_pos/body_quat
            else:
                continue
            roots_of.setdefault(name, []).append(root)
            for model in self.enclosing_models(rec.model):
                roots_of.setdefault(model, []).append(root)
        return roots_of

    def _first_link(self, model: str) -> str | None:
        rec = self.world.models[model]
        if rec.links:
            return rec.links[0]
        for child in rec.models:
            link = self._first_link(child)
            if link:
                return link
        return None

    # ------------------------------------------------------------------ look-ups
    def entity_info(self, name: str) -> EntityInfo:
        try:
            return self.info[name]
        except KeyError:
            raise UnknownEntityError(name, f"world '{self.world.name}'") from None

    def body_ids(self, names: Sequence[str]) -> tuple[np.ndarray, np.ndarray | None]:
        """Body ids of the named models and links (checked before), concatenated in order, and
        how many each name has; None when each has exactly one (one look-up per name: the
        fidelity manager's packets)."""
        try:
            return np.fromiter(map(self._one_body.__getitem__, names), np.intp, len(names)), None
        except KeyError:  # a model of several bodies, or of none, among them
            parts = [self.bodies.get(n, NO_BODIES) for n in names]
            sizes = np.fromiter(map(len, parts), np.intp, len(parts))
            return np.concatenate(parts or [NO_BODIES]), sizes

    def enclosing_models(self, model: str) -> list[str]:
        """``model`` and every model it is nested in, innermost first."""
        chain = []
        while model:
            chain.append(model)
            model = self.world.models[model].parent
        return chain

    def belongs(self, model: str, ancestor: str) -> bool:
        """True when ``model`` is ``ancestor`` or nested in it."""
        return ancestor in self.enclosing_models(model)

    def links_of(self, name: str) -> list[str]:
        """The link itself, or every link of a model and its nested models."""
        kind = self.entity_info(name).kind
        if kind == EntityKind.LINK:
            return [name]
        if kind == EntityKind.MODEL:
            return [n for n, r in self.world.links.items() if self.belongs(r.model, name)]
        raise InvalidOperationError(f"'{name}' is a {kind.value}: only models and links have "
                                    "links")

    def state_refs(self, names: Sequence[str]) -> StateRefs:
        """Index arrays addressing the states of ``names`` (cached for a repeated list)."""
        key = tuple(names)
        refs = self._refs_cache.get(key)
        if refs is None:
            refs = self._state_refs(key)
            if len(self._refs_cache) > CACHE_SIZE:
                self._refs_cache.clear()
            self._refs_cache[key] = refs
        return refs

    def _state_refs(self, names: tuple[str, ...]) -> StateRefs:
        missing = next((n for n in names if n not in self.ref_body), None)
        if missing is not None:
            kind = self.entity_info(missing).kind  # raises UnknownEntityError
            raise InvalidOperationError(f"'{missing}' is a {kind.value}: only models and links "
                                        "have a state")
        bids = np.fromiter((self.ref_body[n] for n in names), int, len(names))
        offsets = np.array([self.ref_offset[n] for n in names]).reshape(len(names), 7)
        qadr = np.array([self.body_free_qpos.get(b, -1) for b in bids], int)
        dadr = np.array([self.body_free_dof.get(b, -1) for b in bids], int)
        free = qadr >= 0
        simple = all(len(rs) == 1 and rs[0][0] == b and rs[0][1] is not None
                     for rs, b in zip((self.roots_of.get(n, ()) for n in names), bids))
        return StateRefs(bids, offsets, np.flatnonzero(free), np.flatnonzero(~free),
                         qadr[free, None] + np.arange(7), qadr[free, None] + XYZW_ORDER,
                         dadr[free, None] + np.arange(6),
                         not np.allclose(offsets, poses.IDENTITY, rtol=0.0, atol=1e-12), simple)

    def joint_addresses(self, model: mujoco.MjModel,
                        joints: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """qpos and qvel indices of one-DoF joints (cached per list of names)."""
        key = tuple(joints)
        found = self._joint_cache.get(key)
        if found is None:
            ids = np.empty(len(key), int)
            for i, name in enumerate(key):
                rec = self.world.joints.get(name)
                if rec is None:
                    raise UnknownEntityError(name, "not a joint")
                if len(rec.mj_joints) != 1 or rec.type == "ball":
                    raise InvalidOperationError(f"joint '{name}' ({rec.type}) has no single "
                                                "position")
                ids[i] = model.joint(rec.mj_joints[0]).id
            found = model.jnt_qposadr[ids], model.jnt_dofadr[ids]
            if len(self._joint_cache) > CACHE_SIZE:
                self._joint_cache.clear()
            self._joint_cache[key] = found
        return found
