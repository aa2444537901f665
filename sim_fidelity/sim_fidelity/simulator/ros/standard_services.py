"""``sim_server``'s ``simulation_interfaces`` services, named as Gazebo's ``ros_gz_sim`` names them.

Each handler fills a response; the server runs it under the engine lock and turns the typed
errors it raises into result codes (``results.py``).
"""
from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import rclpy
from geometry_msgs.msg import Vector3
from rclpy.node import Node
from simulation_interfaces import srv as si
from simulation_interfaces.msg import (
    Bounds,
    EntityCategory,
    EntityState,
    SimulatorFeatures,
)

from ..engine import MujocoEngine
from ..errors import (
    EntityExistsError,
    InvalidNameError,
    InvalidNamespaceError,
    InvalidOperationError,
    InvalidPoseError,
    ResourceNotFoundError,
    SimulatorError,
    UnsupportedFeatureError,
)
from ..protocol import EntityKind, SimState
from ..sdf import resolve
from .convert import ReusedStates, pose_array, pose_msg, time_msg, twist_array, twist_msg
from .model_topics import ModelTopics
from .publishers import Publishers
from .stepping import Stepper

Handler = Callable[[Any, Any], None]
ENTITY_NAME = re.compile(r"[A-Za-z_][\w\-.]*")
WORLD_FRAMES = ("", "world")
QUIT_DELAY_S = 0.2  # a QUITTING request's response goes out before the node stops
FEATURES = (
    SimulatorFeatures.SPAWNING, SimulatorFeatures.DELETING,
    SimulatorFeatures.SPAWNING_RESOURCE_STRING, SimulatorFeatures.ENTITY_CATEGORIES,
    SimulatorFeatures.ENTITY_TAGS, SimulatorFeatures.ENTITY_STATE_GETTING,
    SimulatorFeatures.ENTITY_STATE_SETTING, SimulatorFeatures.ENTITY_INFO_GETTING,
    SimulatorFeatures.SIMULATION_RESET, SimulatorFeatures.SIMULATION_RESET_TIME,
    SimulatorFeatures.SIMULATION_RESET_STATE, SimulatorFeatures.SIMULATION_RESET_SPAWNED,
    SimulatorFeatures.SIMULATION_STATE_GETTING, SimulatorFeatures.SIMULATION_STATE_SETTING,
    SimulatorFeatures.SIMULATION_STATE_PAUSE, SimulatorFeatures.STEP_SIMULATION_SINGLE,
    SimulatorFeatures.STEP_SIMULATION_MULTIPLE, SimulatorFeatures.ENTITY_BOUNDS,
    SimulatorFeatures.ENTITY_BOUNDS_BOX)


class StandardServices:
    """The handlers of the standard services; ``stop`` is how a QUITTING request ends the node."""

    def __init__(self, node: Node, engine: MujocoEngine, stepper: Stepper,
                 publishers: Publishers, model_topics: ModelTopics, stop: Callable[[], None],
                 levers_reset: Callable[[], None]):
        self.node, self.engine, self.stepper = node, engine, stepper
        self.publishers, self.model_topics, self.stop = publishers, model_topics, stop
        self.levers_reset = levers_reset  # a reset put every lever back to the original
        self.spawned: list[str] = []
        self.reused_states = ReusedStates()  # GetEntitiesStates' messages, rewritten in place

    def services(self) -> dict[str, tuple[type, Handler]]:
        """Service name: (type, handler)."""
        return {
            "/get_entities": (si.GetEntities, self.get_entities),
            "/get_entity_state": (si.GetEntityState, self.get_entity_state),
            "/get_entities_states": (si.GetEntitiesStates, self.get_entities_states),
            "/set_entity_state": (si.SetEntityState, self.set_entity_state),
            "/get_entity_info": (si.GetEntityInfo, self.get_entity_info),
            "/spawn_entity": (si.SpawnEntity, self.spawn_entity),
            "/delete_entity": (si.DeleteEntity, self.delete_entity),
            "/step_simulation": (si.StepSimulation, self.step_simulation),
            "/get_simulation_state": (si.GetSimulationState, self.get_simulation_state),
            "/set_simulation_state": (si.SetSimulationState, self.set_simulation_state),
            "/reset_simulation": (si.ResetSimulation, self.reset_simulation),
            "/get_simulator_features": (si.GetSimulatorFeatures, self.get_simulator_features),
            "/get_entity_bounds": (si.GetEntityBounds, self.get_entity_bounds),
        }

    # ------------------------------------------------------------------ entities and states
    def get_entities(self, req, res) -> None:
        res.entities = self._filtered(req.filters)

    def get_entity_state(self, req, res) -> None:
        pose, twist = self.engine.get_states([req.entity])
        res.state = self._entity_state(pose[0], twist[0])

    def get_entities_states(self, req, res) -> None:
        names = self._filtered(req.filters)
        pose, twist = self.engine.get_states(names)
        res.entities = names
        res.states = self.reused_states.states(names, pose, twist, self.engine.time)

    def set_entity_state(self, req, res) -> None:
        self._world_frame(req.state.header.frame_id)
        pose, twist = pose_array(req.state.pose), twist_array(req.state.twist)
        self.engine.set_states([req.entity], poses=pose[None], twists=twist[None])
        self.stepper.wake()

    def get_entity_info(self, req, res) -> None:
        info = self.engine.entity_info(req.entity)
        res.info.category.category = self._category(req.entity)
        res.info.description = f"{info.kind.value}{' ' + info.type if info.type else ''}"
        res.info.tags = self._tags(req.entity)

    def get_entity_bounds(self, req, res) -> None:
        box = np.concatenate(self.engine.bounds([req.entity]))
        if np.isnan(box).any():
            res.bounds.type = Bounds.TYPE_EMPTY
            return
        res.bounds.type = Bounds.TYPE_BOX
        res.bounds.points = [Vector3(x=float(p[0]), y=float(p[1]), z=float(p[2])) for p in box]

    # ------------------------------------------------------------------ scene edits
    def spawn_entity(self, req, res) -> None:
        if req.entity_namespace:
            raise InvalidNamespaceError(
                f"entity_namespace '{req.entity_namespace}' is not supported: sim_server gives "
                "spawned models no ROS namespace of their own (their topics follow the model "
                "name); leave entity_namespace empty")
        text, source = req.resource_string, "<string>"
        if not text and req.uri:
            source = str(self._model_file(req.uri))
            text = Path(source).read_text()
        if not text.strip():
            raise ResourceNotFoundError("neither uri nor resource_string given")
        if "<robot" in text[:2000] and "<sdf" not in text[:2000]:
            raise UnsupportedFeatureError("URDF is not supported: spawn SDF")
        name = self._spawn_name(req.name, req.allow_renaming)
        self._world_frame(req.initial_pose.header.frame_id)
        pose = pose_array(req.initial_pose.pose)
        if not np.any(pose[3:]):  # an all-zero quaternion is the default message: identity
            pose[6] = 1.0
        res.entity_name = self.engine.spawn(name, text, pose, source)
        self.spawned.append(res.entity_name)
        self.model_topics.sync()

    def delete_entity(self, req, res) -> None:
        self.engine.delete(req.entity)
        if req.entity in self.spawned:
            self.spawned.remove(req.entity)
        self.model_topics.sync()

    def _spawn_name(self, name: str, allow_renaming: bool) -> str:
        """``name``, or with ``allow_renaming`` the first free ``name_<i>``; '' keeps the SDF's."""
        existing = set(self.engine.entities(EntityKind.MODEL))
        if name and name in existing:
            if not allow_renaming:
                raise EntityExistsError(f"an entity named '{name}' exists")
            i = 1
            while f"{name}_{i}" in existing:
                i += 1
            name = f"{name}_{i}"
        if name and not ENTITY_NAME.fullmatch(name):
            raise InvalidNameError(f"'{name}' is not a valid entity name")
        return name

    def _model_file(self, uri: str) -> Path:
        """The SDF file a spawn URI names (``model://``, ``file://`` or a path, as in <include>)."""
        paths = self.engine.world.resource_paths
        found = resolve.resolve_uri(uri, os.getcwd(), paths)
        if found is None:  # the folders searched, the world's resource paths among them
            raise ResourceNotFoundError(f"not found in {resolve.search_dirs(paths)}", file=uri)
        path, why = resolve.model_file(found)
        if path is None:
            raise ResourceNotFoundError(why, file=uri)
        return path

    # ------------------------------------------------------------------ simulation state
    def step_simulation(self, req, res) -> None:
        self.stepper.step(int(req.steps))

    def get_simulation_state(self, req, res) -> None:
        res.state.state = int(self.engine.sim_state())

    def set_simulation_state(self, req, res) -> None:
        target = req.state.state
        if target in (SimState.PAUSED, SimState.STOPPED) and self.stepper.cancel_request(
                f"cancelled by a state change to {SimState(target).name}"):
            if target == SimState.PAUSED:  # paused it stays: the request's steps end
                res.result.error_message = "a running step request was cancelled"
                return
        if target == int(self.engine.sim_state()):  # not an error: the client is where it wants
            res.result.result = type(res).ALREADY_IN_TARGET_STATE
            res.result.error_message = f"already {SimState(target).name}"
            return
        if target == SimState.QUITTING:
            threading.Thread(target=self._quit, daemon=True).start()
            return
        if target not in (SimState.PLAYING, SimState.PAUSED, SimState.STOPPED):
            raise InvalidOperationError(f"cannot switch to state {target}: use PLAYING, PAUSED, "
                                        "STOPPED or QUITTING")
        self.engine.set_sim_state(SimState(target))
        if target == SimState.STOPPED:  # a reset: levers too
            self.levers_reset()
            self.publishers.publish_clock()
        self.stepper.wake()

    def reset_simulation(self, req, res) -> None:
        scope, kind = req.scope, type(req)
        known = kind.SCOPE_TIME | kind.SCOPE_STATE | kind.SCOPE_SPAWNED
        if scope != kind.SCOPE_ALL and scope & ~known:
            raise UnsupportedFeatureError(
                f"scope {scope}: bits {scope & ~known:#x} name no scope; use SCOPE_DEFAULT (0), "
                "SCOPE_TIME (1), SCOPE_STATE (2), SCOPE_SPAWNED (4), a sum of these, or "
                "SCOPE_ALL (255)")
        self.stepper.cancel_request("cancelled by a reset")
        everything = scope in (kind.SCOPE_DEFAULT, kind.SCOPE_ALL)
        if everything or scope & kind.SCOPE_SPAWNED:
            for name in self.spawned:
                self.engine.delete(name)
            self.spawned.clear()
            self.model_topics.sync()
        if everything or scope & (kind.SCOPE_TIME | kind.SCOPE_STATE):
            self.engine.reset()  # levers too: back to the world's originals
            self.levers_reset()
        self.publishers.publish_clock()

    def get_simulator_features(self, req, res) -> None:
        features = self.engine.features()
        res.features.features = list(FEATURES)
        res.features.spawn_formats = ["sdf"]
        levers = ",".join(lever.name.lower() for lever in sorted(features.levers))
        res.features.custom_info = (f"sim_fidelity embedded {features.extra['engine']}; "
                                    f"step_size={self.engine.step_size!r}; "
                                    f"fidelity levers ({levers}) at "
                                    f"{self.node.get_fully_qualified_name()}/set_lever")

    def _quit(self) -> None:
        time.sleep(QUIT_DELAY_S)
        self.stop()
        rclpy.try_shutdown(context=self.node.context)

    # ------------------------------------------------------------------ helpers
    @staticmethod
    def _world_frame(frame: str) -> None:
        if frame not in WORLD_FRAMES:
            raise InvalidPoseError(f"frame '{frame}' is not supported: use 'world'")

    def _entity_state(self, pose: np.ndarray, twist: np.ndarray) -> EntityState:
        state = EntityState()
        state.header.stamp, state.header.frame_id = time_msg(self.engine.time), "world"
        state.pose, state.twist = pose_msg(pose), twist_msg(twist)
        return state

    def _filtered(self, filters) -> list[str]:
        """Entities with a state (models and links) that pass ``EntityFilters``."""
        names = self.engine.entities(EntityKind.MODEL) + self.engine.entities(EntityKind.LINK)
        if filters.filter:
            try:
                rx = re.compile(filters.filter)
            except re.error as e:
                raise SimulatorError(f"filter '{filters.filter}' is not a regular expression: "
                                     f"{e}") from None
            names = [n for n in names if rx.search(n)]
        if filters.categories:
            wanted = {c.category for c in filters.categories}
            names = [n for n in names if self._category(n) in wanted]
        if filters.tags.tags:
            names = [n for n in names if self._tag_match(n, filters.tags)]
        bounds = filters.bounds
        if bounds.type != Bounds.TYPE_EMPTY and names:
            pos = self.engine.get_states(names)[0][:, :3]
            pts = np.array([[p.x, p.y, p.z] for p in bounds.points]).reshape(-1, 3)
            if not np.isfinite(pts).all():
                raise InvalidOperationError(f"filters.bounds.points must be finite, got "
                                            f"{pts.tolist()}")
            if bounds.type == Bounds.TYPE_BOX and len(pts) == 2:
                lo, hi = pts.min(axis=0), pts.max(axis=0)
                inside = np.all((pos >= lo) & (pos <= hi), axis=1)
            elif bounds.type == Bounds.TYPE_SPHERE and len(pts) == 2:
                inside = np.linalg.norm(pos - pts[0], axis=1) <= pts[1][0]
            else:
                raise UnsupportedFeatureError("only TYPE_BOX (2 corner points) and TYPE_SPHERE "
                                              "(centre, radius in x) bounds are supported")
            names = [n for n, keep in zip(names, inside) if keep]
        return names

    def _category(self, name: str) -> int:
        info = self.engine.entity_info(name)
        if info.static:
            return EntityCategory.CATEGORY_STATIC_OBJECT
        if info.kind == EntityKind.MODEL and any(
                r.model == name or r.model.startswith(name + "::")
                for r in self.engine.world.joints.values() if r.type != "fixed"):
            return EntityCategory.CATEGORY_ROBOT
        return EntityCategory.CATEGORY_DYNAMIC_OBJECT

    def _tags(self, name: str) -> list[str]:
        info = self.engine.entity_info(name)
        return [f"kind:{info.kind.value}"] + ([f"parent:{info.parent}"] if info.parent else [])

    def _tag_match(self, name: str, tags) -> bool:
        have = set(self._tags(name))
        hits = [t in have for t in tags.tags]
        return all(hits) if tags.filter_mode == type(tags).FILTER_MODE_ALL else any(hits)
