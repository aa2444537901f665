"""Pass 2 of the SDF loader: the intermediate tree of models, links, joints and frames, and the
frame graph that resolves every pose through ``relative_to``, ``attached_to``,
``placement_frame`` and nested model scopes.
"""
from __future__ import annotations

import numpy as np

from ..poses import IDENTITY, compose, inverse
from .elements import (
    JOINT_TYPES,
    ParsedPose,
    bool_of,
    check_children,
    float_of,
    name_of,
    parse_pose,
    required,
)
from .records import LoadedWorld
from .tree import Frame, Joint, Link, Model
from .xmltree import Node


class FrameGraph:
    """The models being loaded into ``world`` and every frame's pose, resolved on demand
    (cached)."""

    def __init__(self, world: LoadedWorld):
        self.world = world
        self.tops: list[Model] = []
        self.world_frames: dict[str, Frame] = {}
        self._cache: dict = {}
        self._active: set = set()
        self._top_pose: dict[int, np.ndarray] = {}

    # ---- the intermediate tree ----
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
        if m.canonical and self.link_of(m, m.canonical, node, quiet=True) is None:
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

    # ---- the frame graph ----
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

    def world_pose(self, m: Model, name: str = "__model__",
                   where: Node | None = None) -> np.ndarray:
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

    def link_of(self, m: Model, name: str, where: Node, quiet: bool = False,
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
            return self.link_of(sub, rest, where, quiet, depth + 1)
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
            return self.link_of(m, ent.child, where, quiet, depth + 1)
        return self.link_of(m, ent.attached_to or "__model__", where, quiet, depth + 1)

    def canonical_link(self, m: Model, where: Node) -> Link | None:
        if m.canonical:
            return self.link_of(m, m.canonical, where)
        if m.links:
            return next(iter(m.links.values()))
        for sub in m.models.values():
            link = self.canonical_link(sub, where)
            if link is not None:
                return link
        return None

    def pose_in_link(self, l: Link, p: ParsedPose) -> np.ndarray:
        """A pose written in link ``l`` (maybe ``relative_to`` another frame) in ``l``'s frame."""
        if not p.relative_to or p.relative_to == l.name:
            return p.value
        base = compose(inverse(self.frame(l.model, l.name, l.node)),
                       self.frame(l.model, p.relative_to, p.node))
        return compose(base, p.value)
