"""Pass 3 of the SDF loader: MuJoCo bodies, joints, inertials, sensors and plugins emitted into
the spec by walking each top model's kinematic tree from its root links, and the records
(:mod:`.records`) the engine reads. Everything added to the spec is remembered for ``rollback``.
"""
from __future__ import annotations

import math

import numpy as np

from ..poses import IDENTITY, compose, inverse, quat_rotate, xyzw_to_wxyz
from .elements import (
    bool_of,
    check_children,
    float_of,
    name_of,
    numbers,
    parse_pose,
    pose_text,
    required,
)
from .frames import FrameGraph
from .geometry import add_geom
from .records import (
    FREE_JOINT_SUFFIX,
    JointRecord,
    LinkRecord,
    LoadedWorld,
    ModelRecord,
    PluginRecord,
    SensorRecord,
)
from .tree import DEFAULT_VERSION, Joint, Link, Model
from .xmltree import Node, to_xml

UNLIMITED = 1e15  # SDF's default limits are +-1e16: anything beyond this is "no limit"


class Emitter:
    """Emits the models of ``frames`` into ``world.spec`` and fills ``world``'s records."""

    def __init__(self, world: LoadedWorld, frames: FrameGraph, resource_paths: tuple = ()):
        self.world = world
        self.spec = world.spec
        self.frames = frames
        self.resource_paths = tuple(resource_paths)
        self.created_bodies: list = []
        self.created_assets: list = []

    def emit_top(self, top: Model) -> None:
        import mujoco

        models = list(top.tree())
        links = [l for m in models for l in m.links.values()]
        joints = [j for m in models for j in m.joints.values()]
        parent_joint: dict[int, Joint] = {}
        for j in joints:
            j.parent_link = (None if j.parent == "world"
                             else self.frames.link_of(j.model, j.parent, j.node))
            j.child_link = self.frames.link_of(j.model, j.child, j.node)
            if j.child_link is None:
                raise j.node.error(f"joint '{j.name}': child '{j.child}' has no link")
            if j.parent != "world" and j.parent_link is None:
                raise j.node.error(f"joint '{j.name}': parent '{j.parent}' has no link")
            if j.child_link is j.parent_link:
                raise j.node.error(
                    f"joint '{j.name}' connects link '{j.child_link.name}' to itself")
            prev = parent_joint.get(id(j.child_link))
            if prev is not None:
                raise j.node.error(
                    f"kinematic loop: link '{j.child_link.scoped}' is the child of joints "
                    f"'{prev.scoped}' and '{j.scoped}' (loops are not supported)")
            parent_joint[id(j.child_link)] = j
        for l in links:  # a chain of parents must end at a root
            seen, cur = set(), l
            while id(cur) in parent_joint and parent_joint[id(cur)].parent_link is not None:
                if id(cur) in seen:
                    j = parent_joint[id(l)]
                    raise j.node.error(f"kinematic loop through link '{l.scoped}'")
                seen.add(id(cur))
                cur = parent_joint[id(cur)].parent_link
        children: dict[int, list] = {}
        for j in joints:
            if j.parent_link is not None:
                children.setdefault(id(j.parent_link), []).append(j)
        self._link_world = {id(l): self.frames.world_pose(l.model, l.name, l.node) for l in links}

        def fixed_to_world(l: Link) -> bool:
            j = parent_joint.get(id(l))
            if j is None:
                return l.static
            if not (l.static or j.type == "fixed"):
                return False
            return j.parent_link is None or fixed_to_world(j.parent_link)

        self._fixed_to_world = fixed_to_world
        self._mj = mujoco
        for l in links:
            j = parent_joint.get(id(l))
            if j is None or j.parent_link is None:
                self._emit_body(l, self.spec.worldbody, IDENTITY, j, children, top)
        self._self_collide(top, links)

    def _emit_body(self, l: Link, parent_body, parent_world, joint, children, top) -> None:
        w = self._link_world[id(l)]
        rel = compose(inverse(parent_world), w)
        body = parent_body.add_body(name=l.scoped, pos=rel[:3], quat=xyzw_to_wxyz(rel[3:]))
        if parent_body is self.spec.worldbody:
            self.created_bodies.append(body)
        if not bool_of(l.node, "gravity", True):
            body.gravcomp = 1.0
        self._inertial(l, body)
        free = False
        mj_joints: list[str] = []
        if joint is None:
            if not l.static:
                body.add_freejoint(name=l.scoped + FREE_JOINT_SUFFIX)
                free = True
        elif not l.static:
            mj_joints = self._emit_joint(joint, body, w)
        if joint is not None:
            self.world.joints[joint.scoped] = self._joint_record(joint, mj_joints)
        rec = LinkRecord(l.scoped, l.model.scoped, free)
        self.world.links[l.scoped] = rec
        for c in l.node.children:
            if c.tag in ("collision", "visual"):
                g = add_geom(self.spec, body, l, c, c.tag == "visual",
                             pose_in_link=lambda p: self.frames.pose_in_link(l, p),
                             fixed_to_world=self._fixed_to_world(l),
                             resource_paths=self.resource_paths, created_assets=self.created_assets)
                if g is not None and c.tag == "collision":
                    rec.collisions.append(g)
            elif c.tag == "sensor":
                self._sensor(c, l.scoped, lambda p: self.frames.pose_in_link(l, p))
        for j in children.get(id(l), []):
            self._emit_body(j.child_link, body, w, j, children, top)

    def _inertial(self, l: Link, body) -> None:
        node = l.node.find("inertial")
        mass, inertia, pose = 1.0, np.eye(3), IDENTITY
        if node is not None:
            check_children(node)
            if node.get("auto", "false").strip().lower() in ("true", "1"):
                raise node.error("automatic inertia (auto=\"true\") is not supported")
            mass = float_of(node, "mass", 1.0)
            inode = node.find("inertia")
            if inode is not None:
                v = {k: float_of(inode, k, 1.0 if k in ("ixx", "iyy", "izz") else 0.0)
                     for k in ("ixx", "iyy", "izz", "ixy", "ixz", "iyz")}
                inertia = np.array([[v["ixx"], v["ixy"], v["ixz"]],
                                    [v["ixy"], v["iyy"], v["iyz"]],
                                    [v["ixz"], v["iyz"], v["izz"]]])
            pose = self.frames.pose_in_link(l, parse_pose(node.find("pose")))
        where = (node.find("mass") if node is not None and node.find("mass") is not None
                 else (node or l.node))
        if mass <= 0 and not l.static:
            raise where.error(
                f"link '{l.scoped}' has mass {mass}: a moving link needs a positive mass")
        if mass <= 0:
            mass = 1.0
        # express the tensor in the link frame so MuJoCo gets one matrix and no rotation
        r = _rotmat(pose[3:])
        full = r @ inertia @ r.T
        ev = np.linalg.eigvalsh(full)
        tol = 1e-9 * max(1.0, ev.max())
        if not l.static and (ev.min() <= 0 or ev[0] + ev[1] < ev[2] - tol):
            inode = node.find("inertia") if node is not None else None
            raise (inode or where).error(
                f"inertia of link '{l.scoped}' is not physical (principal moments {ev.round(9)} "
                "must be positive and satisfy the triangle inequality)")
        if l.static and ev.min() <= 0:
            full = np.eye(3)
        body.explicitinertial = True
        body.mass = mass
        body.ipos = pose[:3]
        body.iquat = [1.0, 0, 0, 0]
        body.fullinertia = [full[0, 0], full[1, 1], full[2, 2], full[0, 1], full[0, 2], full[1, 2]]

    def _emit_joint(self, j: Joint, body, child_world) -> list[str]:
        mj = self._mj
        jw = self.frames.world_pose(j.model, j.name, j.node)
        in_child = compose(inverse(child_world), jw)
        if j.type == "fixed":
            return []
        if j.type == "ball":
            body.add_joint(name=j.scoped, type=mj.mjtJoint.mjJNT_BALL, pos=in_child[:3])
            return [j.scoped]
        axes = [("axis", j.scoped if j.type != "universal" else j.scoped + "::axis")]
        if j.type == "universal":
            axes.append(("axis2", j.scoped + "::axis2"))
        names = []
        for tag, mj_name in axes:
            anode = required(j.node, tag)
            check_children(anode, "axis")
            xyz_node = required(anode, "xyz")
            xyz = np.array(numbers(xyz_node, 3))
            if np.linalg.norm(xyz) < 1e-12:
                raise xyz_node.error(f"joint '{j.name}' has a zero axis")
            xyz = xyz / np.linalg.norm(xyz)
            frame_w = self._axis_frame(j, anode, xyz_node, jw)
            axis = quat_rotate(inverse(child_world)[3:], quat_rotate(frame_w[3:], xyz))
            kw = dict(name=mj_name, pos=in_child[:3], axis=axis,
                      type=(mj.mjtJoint.mjJNT_SLIDE if j.type == "prismatic"
                            else mj.mjtJoint.mjJNT_HINGE))
            lim = anode.find("limit")
            limited = False
            if lim is not None and j.type != "continuous":
                lo, hi = float_of(lim, "lower", -1e16), float_of(lim, "upper", 1e16)
                if lo > -UNLIMITED and hi < UNLIMITED:
                    if lo > hi:
                        raise lim.error(f"joint '{j.name}': lower limit {lo} > upper limit {hi}")
                    if lo == hi:  # a locked joint: MuJoCo needs a non-empty range
                        lo, hi = lo - 1e-6, hi + 1e-6
                    kw["range"] = [lo, hi]
                    limited = True
                elif lo > -UNLIMITED or hi < UNLIMITED:
                    raise lim.error(f"joint '{j.name}': a one-sided limit is not supported")
            kw["limited"] = (mj.mjtLimited.mjLIMITED_TRUE if limited
                             else mj.mjtLimited.mjLIMITED_FALSE)
            if lim is not None:
                effort = float_of(lim, "effort", -1.0)
                if effort > 0:
                    kw["actfrcrange"] = [-effort, effort]
                    kw["actfrclimited"] = mj.mjtLimited.mjLIMITED_TRUE
            dyn = anode.find("dynamics")
            if dyn is not None:
                kw["damping"] = float_of(dyn, "damping", 0.0)
                kw["frictionloss"] = float_of(dyn, "friction", 0.0)
                kw["springref"] = float_of(dyn, "spring_reference", 0.0)
                kw["stiffness"] = [float_of(dyn, "spring_stiffness", 0.0), 0.0, 0.0]
                for k in ("damping", "frictionloss"):
                    if kw[k] < 0:
                        raise dyn.error(f"joint '{j.name}': negative {k}")
            body.add_joint(**kw)
            names.append(mj_name)
        return names

    def _axis_frame(self, j: Joint, anode: Node, xyz_node: Node, jw: np.ndarray) -> np.ndarray:
        if j.model.version < (1, 7):
            if bool_of(anode, "use_parent_model_frame", False):
                return self.frames.world_pose(j.model)
            return jw
        expressed = xyz_node.get("expressed_in")
        if not expressed:
            return jw
        return self.frames.world_pose(j.model, expressed, xyz_node)

    def _joint_record(self, j: Joint, mj_joints: list[str]) -> JointRecord:
        rec = JointRecord(j.scoped, j.model.scoped, j.type,
                          "world" if j.parent_link is None else j.parent_link.scoped,
                          j.child_link.scoped, mj_joints)
        axis = j.node.find("axis")
        lim = axis.find("limit") if axis is not None else None
        if lim is not None:
            e, v = float_of(lim, "effort", -1.0), float_of(lim, "velocity", -1.0)
            rec.effort = e if e >= 0 else math.inf
            rec.velocity = v if v >= 0 else math.inf
        for c in j.node.findall("sensor"):
            self._sensor(c, j.scoped, lambda p: p.value if not p.relative_to else compose(
                inverse(self.frames.frame(j.model, j.name, j.node)),
                compose(self.frames.frame(j.model, p.relative_to, p.node), p.value)))
        return rec

    # ---- sensors, plugins, collisions between a model's links ----
    def _sensor(self, node: Node, parent: str, to_parent_frame) -> None:
        name = f"{parent}::{name_of(node)}"
        stype = node.get("type")
        if not stype:
            raise node.error(f"sensor '{node.get('name')}' needs a type attribute")
        if name in self.world.sensors:
            raise node.error(f"duplicate sensor '{name}'")
        pose = to_parent_frame(parse_pose(node.find("pose")))
        self.world.sensors[name] = SensorRecord(
            name, stype, parent, np.asarray(pose, float), float_of(node, "update_rate", 0.0),
            bool_of(node, "always_on", False), node.child_text("topic", "") or "", to_xml(node))
        for p in node.findall("plugin"):
            self.plugin(p, name)

    def plugin(self, node: Node, parent: str) -> None:
        filename = node.get("filename")
        if not filename:
            raise node.error("<plugin> needs a filename attribute")
        pname = node.get("name") or filename
        name = f"{parent}::{pname}" if parent else pname
        base, k = name, 2
        while name in self.world.plugins:
            name, k = f"{base}#{k}", k + 1
        self.world.plugins[name] = PluginRecord(name, filename, parent, to_xml(node))

    def _self_collide(self, top: Model, links: list[Link]) -> None:
        """Gazebo's default: links of one model do not collide unless both say self_collide.

        Pairs of links that are both fixed to the world are skipped (MuJoCo never collides them).
        """
        cand = []
        for l in links:
            if self.world.links[l.scoped].collisions:
                sc = bool_of(l.node, "self_collide", l.model.self_collide)
                cand.append((l.scoped, sc, self._fixed_to_world(l)))
        for i in range(len(cand)):
            for k in range(i + 1, len(cand)):
                (a, sa, fa), (b, sb, fb) = cand[i], cand[k]
                if (fa and fb) or (sa and sb):
                    continue
                self.created_assets.append(self.spec.add_exclude(bodyname1=a, bodyname2=b))

    # ---- records ----
    def records(self, top: Model) -> list[str]:
        names = []
        for m in top.tree():
            canon = self.frames.canonical_link(m, m.node)
            pose = np.asarray(self.frames.world_pose(m), float)
            rec = ModelRecord(m.scoped, m.parent.scoped if m.parent else "", m.static, pose,
                              canon.scoped if canon else "",
                              [l.scoped for l in m.links.values()],
                              [j.scoped for j in m.joints.values()],
                              [s.scoped for s in m.models.values()])
            rec.sdf = self._standalone(m, pose)
            self.world.models[m.scoped] = rec
            names.append(m.scoped)
            for c in m.node.children:
                if c.tag == "plugin":
                    self.plugin(c, m.scoped)
            for l in m.links.values():
                for c in l.node.findall("plugin"):
                    self.plugin(c, l.scoped)
        return names

    def _standalone(self, m: Model, pose: np.ndarray) -> str:
        pose_node = Node("pose")
        pose_node.text = pose_text(pose)
        root = Node("model", {k: v for k, v in m.node.attrib.items() if k != "placement_frame"})
        root.text = m.node.text
        kids = [pose_node]
        if m.static and not bool_of(m.node, "static", False):
            s = Node("static")
            s.text = "true"
            kids.append(s)
        kids += [c for c in m.node.children if c.tag != "pose"]
        root.children = kids
        version = m.node.version or DEFAULT_VERSION
        return (f'<?xml version="1.0"?>\n<sdf version="{version}">\n'
                f"{to_xml(root, '  ')}\n</sdf>\n")

    def rollback(self) -> None:
        for obj in reversed(self.created_assets + self.created_bodies):
            try:
                self.spec.delete(obj)
            except Exception:  # noqa: BLE001 - best effort, already failing
                pass


def _rotmat(q: np.ndarray) -> np.ndarray:
    return np.stack([quat_rotate(q, e) for e in np.eye(3)], axis=1)
