"""``ClassicRosSimulator``: the Simulator protocol over Gazebo classic's ``gazebo_msgs`` (ROS 2
Humble's ``gazebo_ros`` plugins, or ``sim_server`` with ``interfaces:=gazebo_msgs``).

* Entities: ``get_model_list`` and ``get_model_properties`` (links scoped ``model::link``, joints
  and nested models named under their model); each model's properties are asked once and kept
  until this client spawns or deletes it.
* States: the ``model_states`` and ``link_states`` topics, one message for all entities, while a
  message newer than this client's last write holds every name asked for; otherwise (paused: Gazebo
  classic publishes them only while time runs; right after a write; nested links, which
  ``link_states`` leaves out) ``get_entity_state`` per entity, all in flight at once.
* Levers: GRAVITY through ``set_link_properties``' ``gravity_mode``, on every link of a model;
  DYNAMICS and COLLISION through RosSimulator's static-copy fallback (needs ``world_file``).
* Time: ``/clock``; no stepping (Humble's plugins serve none); pause, play and reset through
  ``gazebo_ros_init``'s Empty services. The step size and the pause state come from
  ``get_physics_properties`` where it is served (sim_server), else from ``step_size=`` (default
  0.001 s, Gazebo's) and from what this client last set.
* Bounds: computed from the models' SDF (the world file, or what this client spawned) by the
  embedded loader, in each entity's own frame; Gazebo classic has no bounds service.
"""
from __future__ import annotations

import threading
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
from gazebo_msgs import srv as gs
from std_srvs.srv import Empty

from ...errors import (
    InvalidNameError,
    InvalidOperationError,
    InvalidPoseError,
    SimulatorTimeoutError,
    UnknownEntityError,
    UnsupportedFeatureError,
    UnsupportedLeverError,
)
from ...poses import normalized_or_raise
from ...protocol import EntityInfo, EntityKind, Features, Lever, SimState
from ..client import FALLBACK_LEVERS, RosSimulator
from ..convert import pose_array, pose_msg, twist_array, twist_msg
from .names import SERVICES, TOPICS, interface_type, qualified
from .outcome import error_for

FRESH_AFTER_WRITE_S = 0.05  # a state message received sooner after a write may predate it
GAZEBO_STEP_S = 0.001  # Gazebo classic's default max_step_size
WITH_STATE = (EntityKind.MODEL, EntityKind.LINK)


class ClassicRosSimulator(RosSimulator):
    """A Simulator reached over ``gazebo_msgs``; ``gazebo_namespace`` is where the services and
    state topics are (``""``: the root, as the plugins serve them without a ``<ros><namespace>``).
    Other keywords as :class:`RosSimulator` (``server`` is unused)."""

    def __init__(self, *, gazebo_namespace: str = "", **options: Any):
        super().__init__(**options)
        self.gazebo_namespace = gazebo_namespace
        self._drop_inherited_clients()
        for name, endpoint in SERVICES.items():
            kind = interface_type(endpoint.type)
            self._clients["gz:" + name] = self._node.create_client(
                kind, qualified(name, gazebo_namespace))
            self._types["gz:" + name] = kind
        self._handshake = (qualified("get_model_list", gazebo_namespace), gs.GetModelList)
        self._snapshot_lock = threading.Lock()
        self._snapshots: dict[str, tuple[float, list[str], np.ndarray, np.ndarray]] = {}
        for topic, endpoint in TOPICS.items():
            self._node.create_subscription(interface_type(endpoint.type),
                                           qualified(topic, gazebo_namespace),
                                           lambda msg, t=topic: self._on_states(t, msg), 1)
        self._last_write = time.monotonic()
        self._properties: dict[str, Any] = {}  # model -> its GetModelProperties answer
        self._spawned_sdf: dict[str, str] = {}  # what this client spawned, for bounds()
        self._bounds_engines: dict[str, Any] = {}  # model -> a one-model MujocoEngine
        self._state: SimState | None = None  # what this client last set
        self._gravity_original: dict[str, bool] = {}  # link -> gravity_mode before we changed it
        self._in_fallback = False
        self.topic_reads = 0  # get_states answered from the state topics (observability)

    # ------------------------------------------------------------------ plumbing
    def _drop_inherited_clients(self) -> None:
        """Destroy RosSimulator's simulation_interfaces clients: five of their names are
        gazebo_msgs names with other types, which one node cannot hold at once. A client goes
        only once the spinning executor lets go of it, so wait for two of its wait cycles."""
        for key in list(self._clients):
            self._node.destroy_client(self._clients.pop(key))
            del self._types[key]
        cycled = threading.Event()
        guard = self._node.create_guard_condition(cycled.set)
        try:
            for _ in range(2):
                cycled.clear()
                guard.trigger()
                if not cycled.wait(self.timeout):
                    raise SimulatorTimeoutError("the client's executor does not spin")
        finally:
            self._node.destroy_guard_condition(guard)

    def _gz(self, name: str, request=None, timeout: float | None = None):
        return self.call("gz:" + name, request, timeout)

    def _gz_many(self, name: str, requests: Sequence) -> list:
        """Answers of ``requests`` to one service, in order (``RosSimulator._many``)."""
        return self._many("gz:" + name, requests)

    @staticmethod
    def _ok(response, what: str, entity: str = "") -> None:
        if not response.success:
            raise error_for(getattr(response, "status_message", ""), what, entity)

    def _wrote(self) -> None:
        self._last_write = time.monotonic()

    def _on_states(self, topic: str, msg) -> None:
        poses = np.array([pose_array(p) for p in msg.pose]).reshape(-1, 7)
        twists = np.array([twist_array(t) for t in msg.twist]).reshape(-1, 6)
        with self._snapshot_lock:
            self._snapshots[topic] = (time.monotonic(), list(msg.name), poses, twists)

    def wait_for_server(self, timeout: float | None = None) -> None:
        limit = timeout or self.timeout
        if not self._clients["gz:get_model_list"].wait_for_service(timeout_sec=limit):
            raise SimulatorTimeoutError(
                f"no simulator answers at {qualified('get_model_list', self.gazebo_namespace)} "
                f"after {limit:g} s: is Gazebo classic with gazebo_ros (or sim_server with "
                "interfaces:=gazebo_msgs) running on this ROS_DOMAIN_ID?")

    # ------------------------------------------------------------------ the scene
    def _entity_table(self, fresh: bool = True) -> dict[str, EntityInfo]:
        if self._info is not None and not fresh:
            return self._info
        res = self._gz("get_model_list")
        self._ok(res, "get_model_list")
        self._properties = {m: p for m, p in self._properties.items()
                            if m.split("::")[0] in set(res.model_names)}
        info: dict[str, EntityInfo] = {}
        level = [(m, "") for m in res.model_names]
        while level:
            missing = [m for m, _ in level if m not in self._properties]
            answers = self._gz_many("get_model_properties", [
                gs.GetModelProperties.Request(model_name=m) for m in missing])
            for m, a in zip(missing, answers):
                self._ok(a, "get_model_properties", m)
                self._properties[m] = a
            nested = []
            for model, parent in level:
                p = self._properties[model]
                info[model] = EntityInfo(model, EntityKind.MODEL, parent, bool(p.is_static))
                info.update({link: EntityInfo(link, EntityKind.LINK, model, bool(p.is_static))
                             for link in p.body_names})
                info.update({f"{model}::{j}": EntityInfo(f"{model}::{j}", EntityKind.JOINT, model)
                             for j in p.joint_names})
                nested += [(f"{model}::{c}", model) for c in p.child_model_names]
            level = nested
        self._info = info
        return info

    def _infos(self, names: Sequence[str]) -> list[EntityInfo]:
        """The info of each name (the cached table, fetched again for a name it lacks)."""
        table = self._entity_table(fresh=False)
        if any(n not in table for n in names):
            table = self._entity_table()
        for n in names:
            if n not in table:
                raise UnknownEntityError(n, "not listed by get_model_list/get_model_properties")
        return [table[n] for n in names]

    def _with_state(self, names: Sequence[str]) -> None:
        for info in self._infos(names):
            if info.kind not in WITH_STATE:
                raise InvalidOperationError(f"'{info.name}' is a {info.kind.value}: only models "
                                            "and links have a state")

    def bounds(self, names: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Each entity's collision box in its own frame, from its model's SDF (NaN rows where it
        has no collision geometry)."""
        names = list(names)
        lo, hi = np.full((len(names), 3), np.nan), np.full((len(names), 3), np.nan)
        for i, info in enumerate(self._infos(names)):
            if info.kind not in WITH_STATE:
                raise InvalidOperationError(f"'{info.name}' is a {info.kind.value}: only models "
                                            "and links have bounds")
            engine = self._bounds_engine(info.name.split("::")[0])
            box_lo, box_hi = engine.bounds([info.name])
            lo[i], hi[i] = box_lo[0], box_hi[0]
        return lo, hi

    def _bounds_engine(self, model: str):
        """A MujocoEngine holding only ``model`` at the origin (bounds are in its own frame)."""
        if model not in self._bounds_engines:
            from ...engine import MujocoEngine
            if model in self._spawned_sdf:
                sdf = self._spawned_sdf[model]
            elif self._world_file:
                sdf = self._sdf_of(model)
            else:
                raise UnsupportedFeatureError(
                    f"bounds of '{model}': Gazebo classic has no bounds service; give world_file= "
                    "to compute them from the SDF")
            root = ET.fromstring(sdf)
            element = root if root.tag == "model" else root.find("model")
            element.set("name", model)
            for pose in element.findall("pose"):
                element.remove(pose)
            text = ET.tostring(element, encoding="unicode")
            self._bounds_engines[model] = MujocoEngine.from_string(
                f"<sdf version='1.9'><world name='bounds'>{text}</world></sdf>")
        return self._bounds_engines[model]

    # ------------------------------------------------------------------ state
    def get_states(self, names: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        names = list(names)
        if not names:
            return np.zeros((0, 7)), np.zeros((0, 6))
        self._with_state(names)
        from_topics = self._from_topics(names)
        if from_topics is not None:
            self.topic_reads += 1
            return from_topics
        answers = self._gz_many("get_entity_state", [
            gs.GetEntityState.Request(name=n, reference_frame="world") for n in names])
        for n, a in zip(names, answers):
            if not a.success:
                raise InvalidOperationError(f"get_entity_state '{n}': refused by the simulator")
        return (np.array([pose_array(a.state.pose) for a in answers]),
                np.array([twist_array(a.state.twist) for a in answers]))

    def _from_topics(self, names: list[str]) -> tuple[np.ndarray, np.ndarray] | None:
        """The states of ``names`` from the latest state messages received after the last write;
        None where those lack one of them."""
        with self._snapshot_lock:
            parts = [s for s in self._snapshots.values()
                     if s[0] > self._last_write + FRESH_AFTER_WRITE_S]
        if not parts:
            return None
        index = {n: i for i, n in enumerate(n for _, listed, _, _ in parts for n in listed)}
        try:
            rows = np.array([index[n] for n in names])
        except KeyError:
            return None
        poses = np.concatenate([p for _, _, p, _ in parts])
        twists = np.concatenate([t for _, _, _, t in parts])
        return poses[rows], twists[rows]

    def set_states(self, names: Sequence[str], poses: np.ndarray | None = None,
                   twists: np.ndarray | None = None) -> None:
        names = list(names)
        if not names or (poses is None and twists is None):
            return
        poses = None if poses is None else self._rows(poses, names, 7, "poses")
        twists = None if twists is None else self._rows(twists, names, 6, "twists")
        if poses is not None:
            if not np.all(np.isfinite(poses[:, :3])):
                raise InvalidPoseError(f"pose position is not finite for {names}")
            try:
                poses[:, 3:] = normalized_or_raise(poses[:, 3:])
            except InvalidPoseError as e:
                raise InvalidPoseError(f"invalid pose for {names}: {e}") from None
        if twists is not None and not np.all(np.isfinite(twists)):
            raise InvalidPoseError(f"twist is not finite for {names}")
        self._with_state(names)
        if poses is None or twists is None:  # SetEntityState sets both: keep the other
            now_p, now_t = self.get_states(names)
            poses = now_p if poses is None else poses
            twists = now_t if twists is None else twists
        requests = []
        for n, p, t in zip(names, poses, twists):
            req = gs.SetEntityState.Request()
            req.state.name, req.state.reference_frame = n, "world"
            req.state.pose, req.state.twist = pose_msg(p), twist_msg(t)
            requests.append(req)
        answers = self._gz_many("set_entity_state", requests)
        self._wrote()
        for n, a in zip(names, answers):
            if not a.success:
                raise InvalidOperationError(f"set_entity_state '{n}': refused by the simulator "
                                            "(a link held by a joint, or a static model?)")

    @staticmethod
    def _rows(values, names: list[str], width: int, what: str) -> np.ndarray:
        array = np.array(values, float)
        if array.shape != (len(names), width):
            raise InvalidPoseError(f"{what} for {len(names)} entities must be ({len(names)}, "
                                   f"{width}), got {array.shape}")
        return array

    # ------------------------------------------------------------------ time
    def step(self, n: int = 1) -> None:
        if n == 0:
            return
        if n < 0:
            raise InvalidOperationError(f"cannot step a negative number of steps ({n})")
        raise UnsupportedFeatureError("Gazebo classic's ROS 2 interface (gazebo_ros on Humble) "
                                      "has no stepping service: play and pause instead")

    @property
    def step_size(self) -> float:
        if self._step_size is None:
            physics = self._physics()
            self._step_size = physics.time_step if physics is not None else GAZEBO_STEP_S
        return self._step_size

    def _physics(self):
        """The get_physics_properties answer where that service is served (sim_server), else
        None (Humble's plugins do not serve it)."""
        if not self.has_service("gz:get_physics_properties"):
            return None
        res = self._gz("get_physics_properties")
        self._ok(res, "get_physics_properties")
        return res

    def sim_state(self) -> SimState:
        physics = self._physics()
        if physics is not None:
            paused = physics.pause
        elif self._state is not None:
            return self._state
        else:  # nobody set it yet: playing if the clock moves
            before = self._clock
            with self._clock_event:
                self._clock_event.wait_for(lambda: self._clock != before, timeout=0.5)
            paused = self._clock == before
        if not paused:
            return SimState.PLAYING
        return SimState.STOPPED if self._state == SimState.STOPPED else SimState.PAUSED

    def set_sim_state(self, state: SimState) -> None:
        if state not in (SimState.PLAYING, SimState.PAUSED, SimState.STOPPED):
            name = state.name if isinstance(state, SimState) else repr(state)
            raise InvalidOperationError(f"cannot switch to {name}: Gazebo classic offers PLAYING, "
                                        "PAUSED and STOPPED (paused and reset)")
        self._gz("unpause_physics" if state == SimState.PLAYING else "pause_physics")
        self._wrote()  # a message on its way may hold states from before the pause
        if state == SimState.STOPPED:
            self.reset()
        self._state = SimState(state)

    def reset(self) -> None:
        """``reset_simulation``, then every lever this client lowered back to its original
        (Gazebo classic's reset keeps static copies and gravity modes)."""
        self._give_back_pending()
        self._gz("reset_simulation", Empty.Request())
        self._wrote()
        with self._clock_event:  # Gazebo classic publishes /clock only when time moves
            self._clock = 0.0
            self._clock_event.notify_all()
        with self._swapping():
            for name, entry in list(self._lowered.items()):  # the original, at its world pose
                self.delete(name)
                self.spawn(name, entry["sdf"])
                del self._lowered[name]
        self._set_gravity(self._gravity_original)

    # ------------------------------------------------------------------ scene edits
    def _spawn_request(self, name: str, sdf: str, pose: np.ndarray | None) -> tuple[str, object]:
        """A SpawnEntity request of SDF text; ``pose`` replaces the model's own <pose> (Gazebo
        classic would add the two, so the <pose> is taken out of the text sent)."""
        if "::" in name:
            raise InvalidNameError(f"'{name}' is not a valid model name: '::' separates scopes")
        req = gs.SpawnEntity.Request(name=name, xml=sdf)
        req.initial_pose.orientation.w = 1.0
        if pose is not None:
            pose = self._rows([pose], [name], 7, "spawn pose")[0]
            if not np.all(np.isfinite(pose[:3])):
                raise InvalidPoseError(f"spawn pose of '{name}' is not finite")
            try:
                pose[3:] = normalized_or_raise(pose[3:])
            except InvalidPoseError as e:
                raise InvalidPoseError(f"spawn pose of '{name}': {e}") from None
            req.initial_pose = pose_msg(pose)
            req.xml = without_model_pose(sdf)
        return "gz:spawn_entity", req

    def _spawned(self, name: str, sdf: str, res) -> str:
        self._ok(res, "spawn_entity", name)
        self._wrote()
        spawned = name or model_name(sdf)
        self._forget(spawned)
        if not self._in_fallback:
            self._spawned_sdf[spawned] = sdf
        return spawned

    def _delete_request(self, name: str) -> tuple[str, object]:
        info = self._entity_table(fresh=False).get(name)
        if info is not None and (info.kind != EntityKind.MODEL or info.parent):
            raise InvalidOperationError(f"'{name}' is not a top-level model: only those can be "
                                        "deleted")
        return "gz:delete_entity", gs.DeleteEntity.Request(name=name)

    def _deleted(self, name: str, res) -> None:
        self._ok(res, "delete_entity", name)
        self._wrote()
        self._forget(name)
        if not self._in_fallback:
            self._spawned_sdf.pop(name, None)

    def _forget(self, model: str) -> None:
        """Drop what is cached of ``model`` (it was spawned or deleted)."""
        self._info = None
        self._bounds_engines.pop(model, None)
        for key in [m for m in self._properties if m == model or m.startswith(model + "::")]:
            del self._properties[key]

    # ------------------------------------------------------------------ fidelity levers
    def features(self) -> Features:
        if self._features is None:
            self.wait_for_server()
            gravity = self._clients["gz:set_link_properties"].wait_for_service(
                timeout_sec=self.timeout)
            self._features = Features(
                levers=FALLBACK_LEVERS | ({Lever.GRAVITY} if gravity else set()),
                spawning=True, deleting=True, stepping=False, state_setting=True,
                resetting=True, static_fallback=True, free_running=True, spawn_formats=("sdf",),
                extra={"interface": "gazebo_msgs", "namespace": self.gazebo_namespace})
        return self._features

    def set_lever(self, names: Sequence[str], lever: Lever, enabled: bool) -> None:
        lever, names = Lever.of(lever), list(names)
        if lever != Lever.GRAVITY or not names:
            super().set_lever(names, lever, enabled)
            return
        if lever not in self.features().levers:
            raise UnsupportedLeverError(lever, why="no set_link_properties service")
        self._set_gravity({link: bool(enabled)
                           for n in names for link in self._links_of(n)})

    def _set_gravity(self, modes: dict[str, bool]) -> None:
        """Set each link's gravity_mode (mass, inertia and centre of mass as they are),
        remembering the mode each had before this client first changed it."""
        links = sorted(modes)
        current = self._link_properties(links)
        for link, props in zip(links, current):
            self._gravity_original.setdefault(link, bool(props.gravity_mode))
        requests = [gs.SetLinkProperties.Request(
            link_name=link, com=p.com, gravity_mode=modes[link], mass=p.mass, ixx=p.ixx,
            ixy=p.ixy, ixz=p.ixz, iyy=p.iyy, iyz=p.iyz, izz=p.izz)
            for link, p in zip(links, current)]
        for link, answer in zip(links, self._gz_many("set_link_properties", requests)):
            self._ok(answer, "set_link_properties", link)

    def _link_properties(self, links: list[str]) -> list:
        answers = self._gz_many("get_link_properties", [
            gs.GetLinkProperties.Request(link_name=link) for link in links])
        for link, a in zip(links, answers):
            self._ok(a, "get_link_properties", link)
        return answers

    def get_lever(self, names: Sequence[str], lever: Lever, *,
                  original: bool = False) -> np.ndarray:
        """The lever per entity; ``original``: before this client changed it (the static-copy
        fallback lowers only what the world file has at full fidelity)."""
        lever, names = Lever.of(lever), list(names)
        self._give_back_pending()  # a restore reads levers first: it finds no model missing
        if lever != Lever.GRAVITY:
            self._infos(names)  # unknown names fail as they do for every lever
            return super().get_lever(names, lever, original=original)
        links_of = {n: self._links_of(n) for n in names}
        links = sorted({link for ls in links_of.values() for link in ls})
        mode = {link: bool(a.gravity_mode) for link, a in zip(links, self._link_properties(links))}
        if original:
            mode.update((k, v) for k, v in self._gravity_original.items() if k in mode)
        return np.array([all(mode[link] for link in links_of[n]) for n in names], bool)

    def _links_of(self, name: str) -> list[str]:
        """The links a GRAVITY lever on ``name`` acts on: a model's own and nested ones."""
        info = self._infos([name])[0]
        if info.kind == EntityKind.LINK:
            return [name]
        if info.kind != EntityKind.MODEL:
            raise UnsupportedLeverError(Lever.GRAVITY, name, f"a {info.kind.value} has no links")
        return [n for n, i in self._entity_table(fresh=False).items()
                if i.kind == EntityKind.LINK and n.startswith(name + "::")]

    def _fallback_set(self, names: list[str], lever: Lever, enabled: bool) -> None:
        for info in self._infos(names):
            if not enabled and (info.kind != EntityKind.MODEL or info.parent):
                raise UnsupportedLeverError(lever, info.name, "the static-copy fallback swaps "
                                            "top-level models only")
        with self._swapping():
            super()._fallback_set(names, lever, enabled)

    def _give_back_pending(self) -> None:
        with self._swapping():
            super()._give_back_pending()

    @contextmanager
    def _swapping(self) -> Iterator[None]:
        """Spawns and deletes of the static-copy fallback: what they spawn is not the user's
        (``_spawned_sdf`` keeps the user's SDF for bounds)."""
        outer, self._in_fallback = self._in_fallback, True
        try:
            yield
        finally:
            self._in_fallback = outer


def model_name(sdf: str) -> str:
    """The name of the first <model> of SDF text ('' where there is none or it does not parse)."""
    try:
        root = ET.fromstring(sdf)
    except ET.ParseError:
        return ""
    model = root if root.tag == "model" else root.find("model")
    return model.get("name", "") if model is not None else ""


def without_model_pose(sdf: str) -> str:
    """SDF text with the top-level model's <pose> taken out (unchanged if it does not parse)."""
    try:
        root = ET.fromstring(sdf)
    except ET.ParseError:
        return sdf  # the simulator reports the parse error with its line
    model = root if root.tag == "model" else root.find("model")
    if model is None:
        return sdf
    for pose in model.findall("pose"):
        model.remove(pose)
    return ET.tostring(root, encoding="unicode")
