"""SDFormat (1.6 - 1.11) to ``mujoco.MjSpec``: the builder (element reading is in ``elements``, the
intermediate tree in ``tree``, ASCII STL in ``meshes``).

Three passes:

1. parse (line-tracking) and expand ``<include>`` into plain ``<model>`` nodes;
2. build an intermediate tree of models, links, joints and frames, resolve every pose through
   the frame graph (``relative_to``, ``attached_to``, ``placement_frame``, nested scopes);
3. emit MuJoCo bodies by walking the kinematic tree from the root links, and fill the records.

Everything the loader refuses raises :class:`SdfError` with file, line and element.
"""
from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np

from ..errors import SdfError
from ..poses import IDENTITY, compose, inverse, quat_rotate, xyzw_to_wxyz
from . import resolve
from .elements import (JOINT_TYPES, REJECTED, REJECTED_SHAPES, SHAPES, ParsedPose, bool_of,
                       check_children, float_of, name_of, numbers, parse_pose, pose_text, required)
from .meshes import ascii_stl
from .records import (COLLISION_GROUP, FREE_JOINT_SUFFIX, VISUAL_GROUP, JointRecord, LinkRecord,
                      LoadedWorld, ModelRecord, PluginRecord, SensorRecord)
from .tree import DEFAULT_VERSION, Frame, Joint, Link, Model
from .xmltree import Node, parse, to_xml, version_tuple

UNLIMITED = 1e15  # SDF's default limits are +-1e16: anything beyond this is "no limit"


# --- the builder ----------------------------------------------------------------------------------
class _Builder:
    def __init__(self, world: LoadedWorld, resource_paths=()):
        self.world = world
        self.spec = world.spec
        self.resource_paths = tuple(resource_paths)
        self._cache: dict = {}
        self._active: set = set()
        self.tops: list[Model] = []
        self.world_frames: dict[str, Frame] = {}
        self._top_pose: dict[int, np.ndarray] = {}
        self.created_bodies: list = []
        self.created_assets: list = []

    # ---- pass 1: includes ----
    def expand_includes(self, node: Node, stack: tuple[str, ...]) -> None:
        kids = []
        for c in node.children:
            if c.tag == "include":
                c = self._load_include(c, stack)
                if c is None:  # an included light (e.g. model://sun): cosmetic
                    continue
            elif c.tag == "model":
                self.expand_includes(c, stack)
            kids.append(c)
        node.children = kids

    def _load_include(self, inc: Node, stack: tuple[str, ...]) -> Node | None:
        uri_node = required(inc, "uri")
        if inc.get("merge", "false").strip().lower() in ("true", "1"):
            raise inc.error("<include merge=\"true\"> is not supported")
        path = resolve.resolve_uri(uri_node.text, inc.base_dir, self.resource_paths)
        if path is None:
            dirs = ", ".join(str(d) for d in resolve.search_dirs(self.resource_paths))
            raise uri_node.error(f"cannot resolve include uri '{uri_node.text}' "
                                 f"(model:// searched in: {dirs})")
        f, why = resolve.model_file(path)
        if f is None:
            raise uri_node.error(f"include uri '{uri_node.text}': {why}")
        f = str(f)
        if f in stack:
            raise inc.error(f"include cycle: {' -> '.join(stack + (f,))}")
        root = parse(Path(f).read_text(), f)
        if root.tag != "sdf":
            raise root.error("the root element of an included file must be <sdf>")
        models = root.findall("model")
        if not models and root.findall("light"):
            return None
        if len(models) != 1:
            raise root.error(f"an included file must hold exactly one <model>, found {len(models)}")
        model = models[0]
        for c in inc.children:  # overrides
            if c.tag == "name":
                if not c.text:
                    raise c.error("empty <name>")
                model.attrib["name"] = c.text
            elif c.tag in ("pose", "static"):
                model.children = [k for k in model.children if k.tag != c.tag]
                model.children.insert(0, c)
            elif c.tag == "placement_frame":
                model.attrib["placement_frame"] = c.text
            elif c.tag == "plugin":
                model.children.append(c)
            elif c.tag == "uri" or ":" in c.tag:
                continue
            else:
                raise c.error(f"unknown or unsupported element <{c.tag}> in <include>")
        self.expand_includes(model, stack + (f,))
        return model

    # ---- pass 2: the intermediate tree ----
    def build_model(self, node: Node, parent: Model | None) -> Model:
        check_children(node)
        name = name_of(node)
        static = bool_of(node, "static", False) or (parent is not None and parent.static)
        placement = node.get("placement_frame") or None
        canonical = node.get("canonical_link") or node.child_text("canonical_link", "") or ""
        m = Model(node, name, parent, static, parse_pose(node.find("pose")), placement,
                   bool_of(node, "self_collide", parent.self_collide if parent else False))
        m.canonical = canonical
        strict = m.version >= (1, 7)

        def add(d: dict, ent, n: Node):
            clash = (m.entity(ent.name) if strict else None) or d.get(ent.name)
            if clash is not None:
                raise n.error(f"duplicate name '{ent.name}' in model '{m.scoped}'")
            d[ent.name] = ent

        for c in node.children:
            if c.tag == "link":
                check_children(c)
                if bool_of(c, "kinematic", False):
                    raise c.find("kinematic").error(
                        "kinematic links are not supported (use a static model or a joint)")
                vd = c.find("velocity_decay")
                if vd is not None and (float_of(vd, "linear", 0.0) or float_of(vd, "angular", 0.0)):
                    raise vd.error("non-zero <velocity_decay> is not supported")
                add(m.links, Link(c, name_of(c), m, parse_pose(c.find("pose")), static), c)
            elif c.tag == "joint":
                add(m.joints, self._build_joint(c, m), c)
            elif c.tag == "frame":
                check_children(c)
                add(m.frames, Frame(c, name_of(c), c.get("attached_to", "") or "",
                                     parse_pose(c.find("pose"))), c)
            elif c.tag == "model":
                add(m.models, self.build_model(c, m), c)
        if m.canonical and self._link_of(m, m.canonical, node, quiet=True) is None:
            raise node.error(f"canonical_link '{m.canonical}' is not a link of model '{m.scoped}'")
        return m

    def _build_joint(self, c: Node, m: Model) -> Joint:
        check_children(c)
        name = name_of(c)
        jtype = c.get("type")
        if not jtype:
            raise c.error(f"joint '{name}' needs a type attribute")
        if jtype not in JOINT_TYPES:
            raise c.error(f"joint type '{jtype}' of joint '{name}' is not supported "
                          f"(supported: {', '.join(sorted(JOINT_TYPES))})")
        parent = required(c, "parent").text
        child = required(c, "child").text
        if not parent or not child:
            raise c.error(f"joint '{name}' has an empty <parent> or <child>")
        return Joint(c, name, m, jtype, parent, child, parse_pose(c.find("pose")))

    # ---- frame graph ----
    def frame(self, m: Model, name: str, where: Node) -> np.ndarray:
        """Pose of frame ``name`` (in the scope of model ``m``) in ``m``'s model frame."""
        if name == "__model__":
            return IDENTITY
        key = (id(m), name)
        if key in self._cache:
            return self._cache[key]
        if "::" in name:
            head, rest = name.split("::", 1)
            sub = m.models.get(head)
            if sub is None:
                raise where.error(f"unknown frame '{name}' in model '{m.scoped}'")
            out = compose(self.frame(m, head, where), self.frame(sub, rest, where))
            self._cache[key] = out
            return out
        ent = m.entity(name)
        if ent is None:
            raise where.error(f"unknown frame '{name}' in model '{m.scoped}'")
        if key in self._active:
            raise where.error(f"the pose graph has a cycle through '{name}' in model '{m.scoped}'")
        self._active.add(key)
        try:
            pnode = ent.pose.node or ent.node
            if ent.kind == "joint":
                rel = ent.pose.relative_to or ent.child
                if rel == "world":
                    raise ent.node.error(f"joint '{ent.name}' cannot have 'world' as its child")
            elif ent.kind == "frame":
                rel = ent.pose.relative_to or ent.attached_to or "__model__"
            else:
                rel = ent.pose.relative_to or "__model__"
            if rel == name:
                raise pnode.error(f"'{name}' is posed relative to itself")
            out = compose(self.frame(m, rel, pnode), ent.pose.value)
            if ent.kind == "model" and ent.placement:
                out = compose(out, inverse(self.frame(ent, ent.placement, ent.node)))
        finally:
            self._active.discard(key)
        self._cache[key] = out
        return out

    def model_in_top(self, m: Model) -> np.ndarray:
        if m.parent is None:
            return IDENTITY
        return compose(self.model_in_top(m.parent), self.frame(m.parent, m.name, m.node))

    def top_of(self, m: Model) -> Model:
        while m.parent is not None:
            m = m.parent
        return m

    def world_pose(self, m: Model, name: str = "__model__", where: Node | None = None) -> np.ndarray:
        top = self.top_of(m)
        base = compose(self.top_world(top), self.model_in_top(m))
        return compose(base, self.frame(m, name, where or m.node))

    def world_scope_frame(self, name: str, where: Node) -> np.ndarray:
        if name == "world":
            return IDENTITY
        head, _, rest = name.partition("::")
        for top in self.tops:
            if top.name == head:
                return self.world_pose(top, rest or "__model__", where)
        if not rest and name in self.world_frames:
            key = ("world", name)
            if key in self._cache:
                return self._cache[key]
            if key in self._active:
                raise where.error(f"the pose graph has a cycle through world frame '{name}'")
            self._active.add(key)
            try:
                fr = self.world_frames[name]
                rel = fr.pose.relative_to or fr.attached_to or "world"
                out = compose(self.world_scope_frame(rel, fr.pose.node or fr.node), fr.pose.value)
            finally:
                self._active.discard(key)
            self._cache[key] = out
            return out
        rec = self.world.models.get(head)
        if rec is not None and not rest:
            return np.asarray(rec.pose, float)
        raise where.error(f"unknown frame '{name}' in the world")

    def top_world(self, top: Model) -> np.ndarray:
        key = id(top)
        if key in self._top_pose:
            return self._top_pose[key]
        if ("top", key) in self._active:
            raise top.node.error(f"the pose graph has a cycle through model '{top.name}'")
        self._active.add(("top", key))
        try:
            rel = top.pose.relative_to or "world"
            out = compose(self.world_scope_frame(rel, top.pose.node or top.node), top.pose.value)
            if top.placement:
                out = compose(out, inverse(self.frame(top, top.placement, top.node)))
        finally:
            self._active.discard(("top", key))
        self._top_pose[key] = out
        return out

    def _link_of(self, m: Model, name: str, where: Node, quiet: bool = False,
                 depth: int = 0) -> Link | None:
        """The link a frame name is attached to (joint parent/child, canonical link)."""
        if depth > 64:
            raise where.error(f"frame '{name}' is attached in a cycle")
        if name == "__model__":
            return self.canonical_link(m, where)
        if "::" in name:
            head, rest = name.split("::", 1)
            sub = m.models.get(head)
            if sub is None:
                if quiet:
                    return None
                raise where.error(f"unknown link or frame '{name}' in model '{m.scoped}'")
            return self._link_of(sub, rest, where, quiet, depth + 1)
        ent = m.entity(name)
        if ent is None:
            if quiet:
                return None
            raise where.error(f"unknown link or frame '{name}' in model '{m.scoped}'")
        if ent.kind == "link":
            return ent
        if ent.kind == "model":
            return self.canonical_link(ent, where)
        if ent.kind == "joint":
            return self._link_of(m, ent.child, where, quiet, depth + 1)
        return self._link_of(m, ent.attached_to or "__model__", where, quiet, depth + 1)

    def canonical_link(self, m: Model, where: Node) -> Link | None:
        if m.canonical:
            return self._link_of(m, m.canonical, where)
        if m.links:
            return next(iter(m.links.values()))
        for sub in m.models.values():
            link = self.canonical_link(sub, where)
            if link is not None:
                return link
        return None

    # ---- pass 3: emit ----
    def emit_top(self, top: Model) -> None:
        import mujoco

        models = list(top.tree())
        links = [l for m in models for l in m.links.values()]
        joints = [j for m in models for j in m.joints.values()]
        parent_joint: dict[int, Joint] = {}
        for j in joints:
            j.parent_link = None if j.parent == "world" else self._link_of(j.model, j.parent, j.node)
            j.child_link = self._link_of(j.model, j.child, j.node)
            if j.child_link is None:
                raise j.node.error(f"joint '{j.name}': child '{j.child}' has no link")
            if j.parent != "world" and j.parent_link is None:
                raise j.node.error(f"joint '{j.name}': parent '{j.parent}' has no link")
            if j.child_link is j.parent_link:
                raise j.node.error(f"joint '{j.name}' connects link '{j.child_link.name}' to itself")
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
        self._link_world = {id(l): self.world_pose(l.model, l.name, l.node) for l in links}

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
            if c.tag == "collision":
                g = self._geom(l, body, c, visual=False)
                if g is not None:
                    rec.collisions.append(g)
            elif c.tag == "visual":
                self._geom(l, body, c, visual=True)
            elif c.tag == "sensor":
                self._sensor(c, l.scoped, lambda p: self._pose_in_link(l, p))
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
            pose = self._pose_in_link(l, parse_pose(node.find("pose")))
        where = node.find("mass") if node is not None and node.find("mass") is not None else (node or l.node)
        if mass <= 0 and not l.static:
            raise where.error(f"link '{l.scoped}' has mass {mass}: a moving link needs a positive mass")
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

    def _pose_in_link(self, l: Link, p: ParsedPose) -> np.ndarray:
        if not p.relative_to or p.relative_to == l.name:
            return p.value
        base = compose(inverse(self.frame(l.model, l.name, l.node)),
                       self.frame(l.model, p.relative_to, p.node))
        return compose(base, p.value)

    def _emit_joint(self, j: Joint, body, child_world) -> list[str]:
        mj = self._mj
        jw = self.world_pose(j.model, j.name, j.node)
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
                      type=mj.mjtJoint.mjJNT_SLIDE if j.type == "prismatic" else mj.mjtJoint.mjJNT_HINGE)
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
            kw["limited"] = mj.mjtLimited.mjLIMITED_TRUE if limited else mj.mjtLimited.mjLIMITED_FALSE
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
                return self.world_pose(j.model)
            return jw
        expressed = xyz_node.get("expressed_in")
        if not expressed:
            return jw
        return self.world_pose(j.model, expressed, xyz_node)

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
                inverse(self.frame(j.model, j.name, j.node)),
                compose(self.frame(j.model, p.relative_to, p.node), p.value)))
        return rec

    # ---- geometry ----
    def _geom(self, l: Link, body, node: Node, visual: bool) -> str | None:
        mj = self._mj
        if not visual:
            check_children(node)
        gname = f"{l.scoped}::{name_of(node)}" + ("::visual" if visual else "")
        if self.spec.geom(gname) is not None:
            raise node.error(f"duplicate {node.tag} name '{node.get('name')}' in link '{l.scoped}'")
        geo = required(node, "geometry")
        shapes = [c for c in geo.children if ":" not in c.tag]
        if len(shapes) != 1:
            raise geo.error(f"<geometry> must hold exactly one shape, found {len(shapes)}")
        shape = shapes[0]
        pose = self._pose_in_link(l, parse_pose(node.find("pose")))
        kw: dict = {}
        try:
            kw = self._shape(shape, gname, l)
        except _Skip:
            return None
        except SdfError:
            if visual:
                return None  # visuals are cosmetic: drop what we cannot show
            raise
        if kw is None:
            return None
        if "quat_extra" in kw:
            pose = compose(pose, np.concatenate([[0, 0, 0], kw.pop("quat_extra")]))
        kw.update(name=gname, pos=pose[:3], quat=xyzw_to_wxyz(pose[3:]))
        if visual:
            kw.update(contype=0, conaffinity=0, group=VISUAL_GROUP, density=0.0)
        else:
            mu = 1.0
            fr = node.find("surface")
            fr = fr.find("friction") if fr is not None else None
            ode = fr.find("ode") if fr is not None else None
            if ode is not None:
                mu = float_of(ode, "mu", 1.0)
                if mu < 0:
                    raise ode.find("mu").error("friction coefficient mu must be >= 0")
            kw.update(group=COLLISION_GROUP, friction=[mu, 0.005, 0.0001])
        if kw["type"] == mj.mjtGeom.mjGEOM_PLANE and not self._fixed_to_world(l):
            if visual:
                return None
            raise shape.error(f"a plane in link '{l.scoped}', which can move: MuJoCo planes must "
                              "be in static models or links fixed to the world")
        body.add_geom(**kw)
        return gname

    def _shape(self, shape: Node, gname: str, l: Link) -> dict | None:
        mj = self._mj
        t = shape.tag
        G = mj.mjtGeom
        if t in REJECTED_SHAPES:
            raise shape.error(f"geometry <{t}> is not supported")
        if t not in SHAPES:
            raise shape.error(f"unknown geometry <{t}>")
        if t == "empty":
            raise _Skip()

        def pos(tag, default=None):
            v = float_of(shape, tag, default) if default is not None else numbers(required(shape, tag), 1)[0]
            if v <= 0:
                raise shape.find(tag).error(f"<{tag}> must be positive, got {v}")
            return v

        if t == "box":
            size_node = required(shape, "size")
            s = np.array(numbers(size_node, 3))
            if np.any(s <= 0):
                raise size_node.error("box sizes must be positive")
            return dict(type=G.mjGEOM_BOX, size=s / 2)
        if t == "sphere":
            return dict(type=G.mjGEOM_SPHERE, size=[pos("radius", 1.0), 0, 0])
        if t == "cylinder":
            return dict(type=G.mjGEOM_CYLINDER, size=[pos("radius", 1.0), pos("length", 1.0) / 2, 0])
        if t == "capsule":
            return dict(type=G.mjGEOM_CAPSULE, size=[pos("radius", 0.5), pos("length", 1.0) / 2, 0])
        if t == "ellipsoid":
            r_node = shape.find("radii")
            r = np.array(numbers(r_node, 3)) if r_node is not None else np.ones(3)
            if np.any(r <= 0):
                raise (r_node or shape).error("ellipsoid radii must be positive")
            return dict(type=G.mjGEOM_ELLIPSOID, size=r)
        if t == "plane":
            n_node = shape.find("normal")
            n = np.array(numbers(n_node, 3)) if n_node is not None else np.array([0, 0, 1.0])
            if np.linalg.norm(n) < 1e-12:
                raise n_node.error("plane normal has zero length")
            n = n / np.linalg.norm(n)
            s_node = shape.find("size")
            s = np.array(numbers(s_node, 2)) if s_node is not None else np.array([1.0, 1.0])
            return dict(type=G.mjGEOM_PLANE, size=[max(s[0] / 2, 0.0), max(s[1] / 2, 0.0), 1.0],
                        quat_extra=_quat_z_to(n))
        # mesh
        if shape.find("submesh") is not None:
            raise shape.find("submesh").error("<submesh> is not supported")
        uri_node = required(shape, "uri")
        path = resolve.resolve_uri(uri_node.text, uri_node.base_dir, self.resource_paths)
        if path is None or not path.is_file():
            raise uri_node.error(f"cannot find mesh '{uri_node.text}'")
        if path.suffix.lower() not in (".stl", ".obj"):
            raise uri_node.error(f"mesh format '{path.suffix}' is not supported (STL and OBJ are)")
        uri_node.text = str(path)  # so the model's SDF text stands on its own
        scale = np.array(numbers(shape.find("scale"), 3)) if shape.find("scale") is not None else np.ones(3)
        if np.any(scale == 0):
            raise shape.find("scale").error("mesh scale must not be zero")
        verts = ascii_stl(path, uri_node) if path.suffix.lower() == ".stl" else None
        if verts is None:
            mesh = self.spec.add_mesh(name=gname, file=str(path), scale=scale)
        else:  # MuJoCo reads binary STL only: hand it the vertices of an ASCII one
            mesh = self.spec.add_mesh(name=gname, scale=scale, uservert=verts.reshape(-1),
                                      userface=np.arange(len(verts), dtype=np.int32))
        self.created_assets.append(mesh)
        return dict(type=G.mjGEOM_MESH, meshname=gname)

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
            canon = self.canonical_link(m, m.node)
            pose = np.asarray(self.world_pose(m), float)
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


class _Skip(Exception):
    """A geometry that makes no geom (``<empty/>``)."""


def _rotmat(q: np.ndarray) -> np.ndarray:
    return np.stack([quat_rotate(q, e) for e in np.eye(3)], axis=1)


def _quat_z_to(n: np.ndarray) -> np.ndarray:
    """xyzw rotation taking +z onto unit vector ``n``."""
    z = np.array([0.0, 0, 1])
    c = float(np.dot(z, n))
    if c > 1 - 1e-12:
        return np.array([0.0, 0, 0, 1])
    if c < -1 + 1e-12:
        return np.array([1.0, 0, 0, 0])
    axis = np.cross(z, n)
    axis /= np.linalg.norm(axis)
    half = math.acos(c) / 2
    return np.concatenate([axis * math.sin(half), [math.cos(half)]])


# --- public entry points --------------------------------------------------------------------------
def _new_spec(name: str):
    import mujoco

    spec = mujoco.MjSpec()
    spec.modelname = name or "world"
    spec.compiler.degree = False
    spec.compiler.inertiafromgeom = mujoco.mjtInertiaFromGeom.mjINERTIAFROMGEOM_FALSE
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    # elliptic friction cones: Gazebo models use ODE-style mu up to 100 (ground_plane), which
    # makes MuJoCo's default pyramidal cone leak (a resting base sinks through the floor)
    spec.option.cone = mujoco.mjtCone.mjCONE_ELLIPTIC
    return spec


def _physics(world_node: Node, lw: LoadedWorld) -> None:
    spec = lw.spec
    phys = world_node.findall("physics")
    chosen = next((p for p in phys if p.get("default", "").lower() in ("true", "1")),
                  phys[0] if phys else None)
    info = {"type": "ode", "max_step_size": 0.001, "real_time_factor": 1.0,
            "real_time_update_rate": 1000.0, "iters": 50, "sor": 1.3, "island_threads": 0,
            "thread_position_correction": False}
    gravity = None
    if chosen is not None:
        check_children(chosen)
        info["type"] = chosen.get("type", "ode")
        info["name"] = chosen.get("name", "")
        info["max_step_size"] = float_of(chosen, "max_step_size", 0.001)
        if info["max_step_size"] <= 0:
            raise chosen.find("max_step_size").error("max_step_size must be positive")
        info["real_time_factor"] = float_of(chosen, "real_time_factor", 1.0)
        info["real_time_update_rate"] = float_of(chosen, "real_time_update_rate", 1000.0)
        if chosen.find("max_contacts") is not None:
            info["max_contacts"] = int(float_of(chosen, "max_contacts", 20))
        ode = chosen.find("ode")
        solver = ode.find("solver") if ode is not None else None
        if solver is not None:
            info["solver_type"] = solver.child_text("type", "quick")
            info["iters"] = int(float_of(solver, "iters", 50))
            info["sor"] = float_of(solver, "sor", 1.3)
            info["island_threads"] = int(float_of(solver, "island_threads", 0))
            info["thread_position_correction"] = bool_of(solver, "thread_position_correction", False)
        if chosen.find("gravity") is not None:  # SDF <= 1.4 kept gravity here
            gravity = numbers(chosen.find("gravity"), 3)
    if world_node.find("gravity") is not None:
        gravity = numbers(world_node.find("gravity"), 3)
    lw.gravity = np.array(gravity if gravity is not None else [0.0, 0.0, -9.8])
    lw.step_size = float(info["max_step_size"])
    lw.physics = info
    spec.option.timestep = lw.step_size
    spec.option.gravity = lw.gravity


def _add_tops(b: _Builder, model_nodes: list[Node]) -> list[str]:
    """Build, emit and record top-level models; on error undo what was added to the spec."""
    tops = []
    for n in model_nodes:
        m = b.build_model(n, None)
        if m.name in b.world.models or any(t.name == m.name for t in tops):
            raise n.error(f"duplicate model name '{m.name}'")
        tops.append(m)
    b.tops.extend(tops)
    for m in tops:  # resolve every frame before touching the spec
        for sub in m.tree():
            b.world_pose(sub)
            for d in (sub.links, sub.joints, sub.frames):
                for name in d:
                    b.frame(sub, name, sub.node)
    names = []
    try:
        for m in tops:
            b.emit_top(m)
            names += b.records(m)
    except BaseException:
        b.rollback()
        for n in names:
            b.world.models.pop(n, None)
        raise
    return names


def _load(root: Node, source: str, resource_paths) -> LoadedWorld:
    if root.tag != "sdf":
        raise root.error(f"the root element must be <sdf>, not <{root.tag}>")
    if not root.get("version"):
        raise root.error("<sdf> needs a version attribute")
    worlds = root.findall("world")
    models = root.findall("model")
    for c in root.children:
        if c.tag not in ("world", "model", "light") and ":" not in c.tag:
            raise c.error(REJECTED.get(c.tag) or f"unknown or unsupported element <{c.tag}> in <sdf>")
    if len(worlds) > 1:
        raise worlds[1].error("only one <world> per file is supported")
    if worlds and models:
        raise models[0].error("a file holds either a <world> or a <model>, not both")
    if not worlds and len(models) != 1:
        raise root.error("expected a <world> or exactly one <model>")
    wnode = worlds[0] if worlds else None
    name = (wnode.get("name") if wnode is not None else None) or "default"
    lw = LoadedWorld(name=name, source=source, spec=_new_spec(name))
    lw.resource_paths = tuple(str(p) for p in resource_paths)
    b = _Builder(lw, resource_paths)
    if wnode is not None:
        check_children(wnode, "world")
        _physics(wnode, lw)
        b.expand_includes(wnode, (source,))
        for f in wnode.findall("frame"):
            check_children(f)
            fname = name_of(f)
            if fname in b.world_frames:
                raise f.error(f"duplicate frame '{fname}'")
            b.world_frames[fname] = Frame(f, fname, f.get("attached_to", "") or "",
                                           parse_pose(f.find("pose")))
        model_nodes = wnode.findall("model")
    else:
        _physics(Node("world"), lw)
        b.expand_includes(root, (source,))
        model_nodes = root.findall("model")
    _add_tops(b, model_nodes)
    if wnode is not None:
        for p in wnode.findall("plugin"):
            b.plugin(p, "")
    try:
        lw.spec.compile()
    except Exception as e:  # MuJoCo's own checks, as a last line
        raise SdfError(f"MuJoCo rejected the world: {e}", file=source, line=None,
                       element="world" if wnode is not None else "model") from None
    return lw


def load_world(path, resource_paths=()) -> LoadedWorld:
    """Load an SDF file holding a ``<world>`` or a single ``<model>``."""
    path = os.fspath(path)
    try:
        text = Path(path).read_text()
    except OSError as e:
        raise SdfError(f"cannot read file: {e.strerror}", file=path, element="sdf") from None
    root = parse(text, path)
    return _load(root, path, resource_paths)


def load_world_string(text: str, source: str = "<string>", base_dir=None,
                      resource_paths=()) -> LoadedWorld:
    """Load SDF text; relative includes and meshes resolve against ``base_dir`` (default cwd)."""
    if base_dir is None:
        base_dir = os.path.dirname(os.path.abspath(source)) if source != "<string>" else os.getcwd()
    root = parse(text, source, os.fspath(base_dir))
    return _load(root, source, resource_paths)


def add_models(world: LoadedWorld, sdf_text: str, name: str | None = None,
               pose: np.ndarray | None = None, source: str = "<string>") -> list[str]:
    """Add the ``<sdf><model>`` in ``sdf_text`` to ``world.spec`` and its records.

    ``name`` renames the top model, ``pose`` (xyzw, (7,)) replaces its pose in the world. Returns
    the scoped names of the models added, top first. Nothing is changed when it fails.
    """
    root = parse(sdf_text, source)
    if root.tag == "model":
        wrapper = Node("sdf", {"version": DEFAULT_VERSION}, root.line, root.file, root.base_dir,
                       DEFAULT_VERSION)
        wrapper.children = [root]
        root = wrapper
    if root.tag != "sdf":
        raise root.error(f"the root element must be <sdf>, not <{root.tag}>")
    models = root.findall("model")
    if len(models) != 1:
        raise root.error(f"expected exactly one <model>, found {len(models)}")
    node = models[0]
    if name is not None:
        if not name or "::" in name:
            raise node.error(f"invalid model name '{name}'")
        node.attrib["name"] = name
    if pose is not None:
        p = np.asarray(pose, float).reshape(-1)
        if p.shape != (7,) or not np.all(np.isfinite(p)) or abs(np.linalg.norm(p[3:]) - 1) > 1e-3:
            raise node.error("pose must be 7 finite numbers with a unit quaternion (xyzw)")
        pn = Node("pose", {"rotation_format": "quat_xyzw"}, node.line, node.file, node.base_dir,
                  node.version)
        pn.text = " ".join(f"{v:.17g}" for v in [*p[:3], *(p[3:] / np.linalg.norm(p[3:]))])
        node.children = [pn] + [c for c in node.children if c.tag != "pose"]
        if version_tuple(node.version or DEFAULT_VERSION) < (1, 9):
            pn.attrib = {}
            pn.text = pose_text(np.concatenate([p[:3], p[3:] / np.linalg.norm(p[3:])]))
    b = _Builder(world, getattr(world, "resource_paths", ()))
    b.expand_includes(root, (source,))
    return _add_tops(b, [node])
