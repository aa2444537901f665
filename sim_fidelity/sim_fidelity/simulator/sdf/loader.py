"""SDFormat (1.6 - 1.11) to ``mujoco.MjSpec``: the public entry points and the world-level parts.

The passes, each in its own module (element reading is in ``elements``, the intermediate tree's
types in ``tree``):

1. :mod:`.includes`: parse (line-tracking) and expand ``<include>`` into plain ``<model>`` nodes;
2. :mod:`.frames`: build the intermediate tree of models, links, joints and frames and resolve
   every pose through the frame graph (``relative_to``, ``attached_to``, ``placement_frame``,
   nested scopes);
3. :mod:`.emission`: emit MuJoCo bodies by walking the kinematic tree from the root links, with
   their geoms (:mod:`.geometry`), and fill the records.

This module reads ``<physics>`` and world frames, runs the passes, and undoes a failed add.
Everything the loader refuses raises :class:`SdfError` with file, line and element.
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ..errors import SdfError
from .elements import (
    REJECTED,
    bool_of,
    check_children,
    float_of,
    name_of,
    numbers,
    parse_pose,
    pose_text,
)
from .emission import Emitter
from .frames import FrameGraph
from .includes import expand_includes
from .records import LoadedWorld
from .tree import DEFAULT_VERSION, Frame
from .xmltree import Node, parse, version_tuple


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
            info["thread_position_correction"] = bool_of(solver, "thread_position_correction",
                                                         False)
        if chosen.find("gravity") is not None:  # SDF <= 1.4 kept gravity here
            gravity = numbers(chosen.find("gravity"), 3)
    if world_node.find("gravity") is not None:
        gravity = numbers(world_node.find("gravity"), 3)
    lw.gravity = np.array(gravity if gravity is not None else [0.0, 0.0, -9.8])
    lw.step_size = float(info["max_step_size"])
    lw.physics = info
    spec.option.timestep = lw.step_size
    spec.option.gravity = lw.gravity


def _add_tops(frames: FrameGraph, emitter: Emitter, model_nodes: list[Node]) -> list[str]:
    """Build, emit and record top-level models; on error undo what was added to the spec."""
    tops = []
    for n in model_nodes:
        m = frames.build_model(n, None)
        if m.name in frames.world.models or any(t.name == m.name for t in tops):
            raise n.error(f"duplicate model name '{m.name}'")
        tops.append(m)
    frames.tops.extend(tops)
    for m in tops:  # resolve every frame before touching the spec
        for sub in m.tree():
            frames.world_pose(sub)
            for d in (sub.links, sub.joints, sub.frames):
                for name in d:
                    frames.frame(sub, name, sub.node)
    names = []
    w = frames.world
    before = {t: set(getattr(w, t)) for t in ("models", "links", "joints", "sensors", "plugins")}
    try:
        for m in tops:
            emitter.emit_top(m)
            names += emitter.records(m)
    except BaseException:
        emitter.rollback()
        for table, kept in before.items():  # every record the failed models added
            records = getattr(w, table)
            for key in [k for k in records if k not in kept]:
                del records[key]
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
            raise c.error(REJECTED.get(c.tag)
                          or f"unknown or unsupported element <{c.tag}> in <sdf>")
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
    frames = FrameGraph(lw)
    emitter = Emitter(lw, frames, lw.resource_paths)
    if wnode is not None:
        check_children(wnode, "world")
        _physics(wnode, lw)
        expand_includes(wnode, (source,), lw.resource_paths)
        for f in wnode.findall("frame"):
            check_children(f)
            fname = name_of(f)
            if fname in frames.world_frames:
                raise f.error(f"duplicate frame '{fname}'")
            frames.world_frames[fname] = Frame(f, fname, f.get("attached_to", "") or "",
                                           parse_pose(f.find("pose")))
        model_nodes = wnode.findall("model")
    else:
        _physics(Node("world"), lw)
        expand_includes(root, (source,), lw.resource_paths)
        model_nodes = root.findall("model")
    _add_tops(frames, emitter, model_nodes)
    if wnode is not None:
        for p in wnode.findall("plugin"):
            emitter.plugin(p, "")
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
    frames = FrameGraph(world)
    expand_includes(root, (source,), world.resource_paths)
    return _add_tops(frames, Emitter(world, frames, world.resource_paths), [node])
