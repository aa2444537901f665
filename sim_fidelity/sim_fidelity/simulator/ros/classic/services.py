"""``sim_server``'s ``gazebo_msgs`` interface: the services and state topics Gazebo classic's
``gazebo_ros`` plugins serve on Humble (``names.py``), answered by the embedded engine.

The handlers behave as the plugins do where the protocol allows it: ``/model_states`` and
``/link_states`` go out only while simulation time advances (at most ``STATE_RATE_HZ`` of sim
time; Gazebo classic publishes them from its world update, so nothing comes while paused), link
names are scoped (``model::link``), ``/reset_world`` keeps the time and ``/reset_simulation``
resets it. Errors become ``success = False`` with a status message that names the typed error
(``outcome.py``); ``set_link_properties`` changes ``gravity_mode`` only (mass, inertia and centre
of mass must be as ``get_link_properties`` reports them).
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np
from gazebo_msgs import msg as gm
from gazebo_msgs import srv as gs
from geometry_msgs.msg import Vector3
from rclpy.node import Node
from std_srvs.srv import Empty

from ...engine import MujocoEngine
from ...errors import InvalidOperationError, InvalidPoseError, SimulatorError, UnknownEntityError
from ...protocol import EntityKind, Lever, SimState
from ..convert import pose_array, pose_msg, time_msg, twist_array, twist_msg
from ..model_topics import ModelTopics
from ..publishers import Publishers
from ..stepping import Stepper
from .names import STATE_RATE_HZ, qualified
from .outcome import message_for

Handler = Callable[[Any, Any], None]
WORLD_FRAMES = ("", "world")
INERTIA_TOLERANCE = 1e-6  # relative: a set_link_properties that changes more is refused


class ClassicServices:
    """The ``gazebo_msgs`` handlers of one sim_server node, and its state topics' timer.

    Handlers run under the engine lock (the server's guard); each answers, never raises.
    """

    def __init__(self, node: Node, engine: MujocoEngine, lock: threading.RLock,
                 stepper: Stepper, publishers: Publishers, model_topics: ModelTopics,
                 levers_reset: Callable[[], None], namespace: str = ""):
        self.node, self.engine, self.lock, self.stepper = node, engine, lock, stepper
        self.levers_reset = levers_reset  # a reset put every lever back to the original
        self.publishers, self.model_topics, self.namespace = publishers, model_topics, namespace
        self._model_states = node.create_publisher(gm.ModelStates,
                                                   qualified("model_states", namespace), 1)
        self._link_states = node.create_publisher(gm.LinkStates,
                                                  qualified("link_states", namespace), 1)
        self._published_at = -np.inf  # sim time of the last state messages
        node.create_timer(0.5 / STATE_RATE_HZ, self.publish_states)

    def services(self) -> dict[str, tuple[type, Handler]]:
        """Service name: (type, handler), every handler answering failures itself."""
        table = {
            "get_model_list": (gs.GetModelList, self.get_model_list),
            "get_model_properties": (gs.GetModelProperties, self.get_model_properties),
            "get_entity_state": (gs.GetEntityState, self.get_entity_state),
            "set_entity_state": (gs.SetEntityState, self.set_entity_state),
            "spawn_entity": (gs.SpawnEntity, self.spawn_entity),
            "delete_entity": (gs.DeleteEntity, self.delete_entity),
            "get_link_properties": (gs.GetLinkProperties, self.get_link_properties),
            "set_link_properties": (gs.SetLinkProperties, self.set_link_properties),
            "get_physics_properties": (gs.GetPhysicsProperties, self.get_physics_properties),
            "pause_physics": (Empty, self.pause_physics),
            "unpause_physics": (Empty, self.unpause_physics),
            "reset_simulation": (Empty, self.reset_simulation),
            "reset_world": (Empty, self.reset_world),
        }
        return {qualified(name, self.namespace): (kind, self._answering(handler))
                for name, (kind, handler) in table.items()}

    def _answering(self, handler: Handler) -> Handler:
        """``handler`` with its errors as ``success = False`` and a status message."""
        def call(request, response) -> None:
            try:
                handler(request, response)
                if hasattr(response, "success"):
                    response.success = True
            except Exception as e:  # noqa: BLE001 - every error becomes an answer
                if not isinstance(e, SimulatorError):
                    self.node.get_logger().error(f"{handler.__name__}: {type(e).__name__}: {e}")
                if hasattr(response, "success"):
                    response.success = False
                if hasattr(response, "status_message"):
                    response.status_message = message_for(e)
        call.__name__ = handler.__name__
        return call

    # ------------------------------------------------------------------ state topics
    def publish_states(self) -> None:
        """``model_states`` and ``link_states``, when sim time moved on by a period since the
        last ones (none while paused, as in Gazebo classic)."""
        with self.lock:
            now = self.engine.time
            if now < self._published_at + 1.0 / STATE_RATE_HZ and now >= self._published_at:
                return
            self._published_at = now
            models = self._top_models()
            links = [n for m in models for n in self.engine.world.models[m].links]
            poses, twists = self.engine.get_states(models + links)
        split = len(models)
        self.publishers.gate.publish([
            (self._model_states, self._states(gm.ModelStates, models, poses[:split],
                                              twists[:split])),
            (self._link_states, self._states(gm.LinkStates, links, poses[split:],
                                             twists[split:]))])

    @staticmethod
    def _states(cls: type, names: list[str], poses: np.ndarray, twists: np.ndarray):
        return cls(name=names, pose=[pose_msg(p) for p in poses],
                   twist=[twist_msg(t) for t in twists])

    def _top_models(self) -> list[str]:
        return [n for n, r in self.engine.world.models.items() if not r.parent]

    # ------------------------------------------------------------------ the scene
    def get_model_list(self, req, res) -> None:
        res.header.stamp = time_msg(self.engine.time)
        res.model_names = self._top_models()

    def get_model_properties(self, req, res) -> None:
        record = self.engine.world.models.get(req.model_name)
        if record is None:
            raise UnknownEntityError(req.model_name, "model does not exist")
        short = lambda scoped: scoped.rsplit("::", 1)[-1]  # noqa: E731
        res.parent_model_name = short(record.parent) if record.parent else ""
        res.canonical_body_name = record.canonical_link
        res.body_names = list(record.links)
        res.geom_names = [short(g) for link in record.links
                          for g in self.engine.world.links[link].collisions]
        res.joint_names = [short(j) for j in record.joints]
        res.child_model_names = [short(m) for m in record.models]
        res.is_static = bool(record.static)

    # ------------------------------------------------------------------ entity state
    def get_entity_state(self, req, res) -> None:
        self._world_frame(req.reference_frame)
        self._with_state(req.name)
        pose, twist = self.engine.get_states([req.name])
        res.header.stamp = time_msg(self.engine.time)
        res.header.frame_id = req.reference_frame
        res.state.name, res.state.reference_frame = req.name, req.reference_frame
        res.state.pose, res.state.twist = pose_msg(pose[0]), twist_msg(twist[0])

    def set_entity_state(self, req, res) -> None:
        self._world_frame(req.state.reference_frame)
        self._with_state(req.state.name)
        self.engine.set_states([req.state.name], poses=pose_array(req.state.pose)[None],
                               twists=twist_array(req.state.twist)[None])
        self.stepper.wake()

    def _with_state(self, name: str) -> None:
        kind = self.engine.entity_info(name).kind
        if kind not in (EntityKind.MODEL, EntityKind.LINK):
            raise InvalidOperationError(f"'{name}' is a {kind.value}: only models and links "
                                        "have a state")

    @staticmethod
    def _world_frame(frame: str) -> None:
        if frame not in WORLD_FRAMES:
            raise InvalidPoseError(f"reference frame '{frame}' is not supported: use 'world'")

    # ------------------------------------------------------------------ scene edits
    def spawn_entity(self, req, res) -> None:
        """Spawn the SDF ``xml``; the initial pose is the model's pose (Gazebo classic adds it to
        the SDF's own <pose>; RosSimulator's classic flavour sends SDF without one)."""
        if "<robot" in req.xml[:2000] and "<sdf" not in req.xml[:2000]:
            raise SimulatorError("URDF is not supported: spawn SDF")
        self._world_frame(req.reference_frame)
        pose = pose_array(req.initial_pose)
        if not np.any(pose[3:]):  # the default message: identity
            pose[6] = 1.0
        name = self.engine.spawn(req.name, req.xml, pose)
        res.status_message = f"SpawnEntity: Successfully spawned entity [{name}]"
        self.model_topics.sync()

    def delete_entity(self, req, res) -> None:
        self.engine.delete(req.name)
        res.status_message = f"DeleteEntity: Successfully deleted entity [{req.name}]"
        self.model_topics.sync()

    # ------------------------------------------------------------------ link properties
    def _link_inertial(self, link: str) -> tuple[int, float, np.ndarray, np.ndarray]:
        """Body id, mass, principal inertia and its frame (pose in the link) of ``link``."""
        if link not in self.engine.world.links:
            raise UnknownEntityError(link, "link not found, did you forget to scope the link by "
                                     "model name?")
        bid = self.engine.index.body_id[link]
        m = self.engine.model
        frame = np.concatenate([m.body_ipos[bid], m.body_iquat[bid][[1, 2, 3, 0]]])
        return bid, float(m.body_mass[bid]), np.array(m.body_inertia[bid]), frame

    def get_link_properties(self, req, res) -> None:
        _, mass, inertia, frame = self._link_inertial(req.link_name)
        res.gravity_mode = bool(self.engine.get_lever([req.link_name], Lever.GRAVITY)[0])
        res.mass, res.com = mass, pose_msg(frame)
        res.ixx, res.iyy, res.izz = (float(v) for v in inertia)
        res.ixy = res.ixz = res.iyz = 0.0
        res.status_message = "GetLinkProperties: got properties"

    def set_link_properties(self, req, res) -> None:
        _, mass, inertia, frame = self._link_inertial(req.link_name)
        asked = np.array([req.mass, req.ixx, req.iyy, req.izz, req.ixy, req.ixz, req.iyz])
        have = np.concatenate([[mass], inertia, np.zeros(3)])
        com = pose_array(req.com)
        same_com = (np.allclose(com[:3], frame[:3], atol=1e-9)
                    and abs(abs(float(np.dot(com[3:], frame[3:]))) - 1.0) < 1e-9)
        if not (np.allclose(asked, have, rtol=INERTIA_TOLERANCE, atol=1e-12) and same_com):
            raise InvalidOperationError(
                f"'{req.link_name}': sim_server changes gravity_mode only; send mass, inertia "
                "and com as get_link_properties reports them")
        self.engine.set_lever([req.link_name], Lever.GRAVITY, bool(req.gravity_mode))
        res.status_message = "SetLinkProperties: properties set"

    def get_physics_properties(self, req, res) -> None:
        """Not served by Humble's plugins (see ``names.py``): the step, pause state and gravity."""
        res.time_step = self.engine.step_size
        res.pause = self.engine.sim_state() != SimState.PLAYING
        res.max_update_rate = (self.stepper.rtf / self.engine.step_size
                               if self.stepper.rtf > 0 else 0.0)
        g = self.engine.world.gravity
        res.gravity = Vector3(x=float(g[0]), y=float(g[1]), z=float(g[2]))
        res.status_message = "GetPhysicsProperties: got properties"

    # ------------------------------------------------------------------ simulation control
    def pause_physics(self, req, res) -> None:
        self.engine.set_sim_state(SimState.PAUSED)
        self.stepper.wake()

    def unpause_physics(self, req, res) -> None:
        self.engine.set_sim_state(SimState.PLAYING)
        self.stepper.wake()

    def reset_simulation(self, req, res) -> None:
        """Poses, time and levers back to the start (spawned models stay, at their spawn
        poses)."""
        self.engine.reset()
        self.levers_reset()
        self._published_at = -np.inf
        self.publishers.publish_clock()

    def reset_world(self, req, res) -> None:
        """Poses and levers back to the start; time goes on."""
        now = self.engine.time
        self.engine.reset()
        self.levers_reset()
        self.engine.data.time = now
        self._published_at = -np.inf

