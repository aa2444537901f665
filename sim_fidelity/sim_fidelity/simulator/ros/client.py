"""``RosSimulator``: the Simulator protocol as a client of the ``simulation_interfaces`` services.

Works against our ``sim_server`` and against Gazebo's ``ros_gz_sim`` server. Where the server has
no fidelity-lever service (Gazebo), DYNAMICS and COLLISION are lowered by the only means the
standard services allow: the model is replaced by a static copy of itself (delete + spawn with
``<static>true</static>``, collisions kept or stripped), and the original SDF and state are
restored when the lever is raised again. That fallback needs the models' SDF (``world_file``).
"""
from __future__ import annotations

import math
import os
import re
import threading
import time
import xml.etree.ElementTree as ET
from collections import deque
from collections.abc import Sequence

import numpy as np
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import NodeNameNonExistentError
from rosgraph_msgs.msg import Clock
from simulation_interfaces import srv as si
from simulation_interfaces.msg import SimulatorFeatures as F

from sim_fidelity_interfaces import srv as ours

from ...service_handshake import prove_reply_path
from ..errors import (
    InvalidOperationError,
    SimulatorError,
    SimulatorTimeoutError,
    UnknownEntityError,
    UnsupportedFeatureError,
    UnsupportedLeverError,
)
from ..protocol import EntityInfo, EntityKind, Features, Lever, SimState, select_entities
from ..sdf import load_world
from ..snapshot import ServerSnapshot, Snapshot
from .convert import KINDS_OF_CODES, pose_array, pose_msg, time_seconds, twist_array, twist_msg
from .results import raise_for

FALLBACK_LEVERS = frozenset({Lever.DYNAMICS, Lever.COLLISION})
IN_FLIGHT = 4  # requests to one service unanswered at a time: a service queues 10, for all
# its clients together (a probe's 8 beside a manager's 8 lost requests)


class RosSimulator:
    """A Simulator reached over ROS 2 services; owns a private node spun on its own thread.

    The node ignores the process's ``--ros-args`` (``use_global_arguments=False``): a launch
    file's ``-r __node:=NAME`` renames every other node of the process, and parameter files are
    not meant for it. A node hosting a client names it after itself (``node_name``, ``namespace``),
    so the graph shows each name once.
    """

    def __init__(self, *, server: str = "/sim_server", timeout: float = 10.0,
                 world_file: str | None = None, step_size: float | None = None,
                 node_name: str | None = None, namespace: str | None = None,
                 domain_id: int | None = None):
        os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")

        self._context = None
        if domain_id is not None:  # a private context: talk to a simulator in another domain
            self._context = rclpy.Context()
            rclpy.init(context=self._context, domain_id=domain_id)
        elif not rclpy.ok():
            rclpy.init()
        self.timeout = timeout
        self._node = rclpy.create_node(node_name or f"sim_client_{os.getpid()}_{id(self) % 10000}",
                                       namespace=namespace, context=self._context,
                                       use_global_arguments=False)
        self._deadline = math.inf  # no call waits past this monotonic time (limit_waits)
        self._answers = threading.Condition()  # notified by every answer and by limit_waits
        self._closed = False
        names = {"get_entities": si.GetEntities, "get_entity_state": si.GetEntityState,
                 "get_entities_states": si.GetEntitiesStates, "set_entity_state": si.SetEntityState,
                 "get_entity_info": si.GetEntityInfo, "spawn_entity": si.SpawnEntity,
                 "delete_entity": si.DeleteEntity, "step_simulation": si.StepSimulation,
                 "get_simulation_state": si.GetSimulationState,
                 "set_simulation_state": si.SetSimulationState,
                 "reset_simulation": si.ResetSimulation,
                 "get_simulator_features": si.GetSimulatorFeatures,
                 "get_entity_bounds": si.GetEntityBounds}
        self._clients = {k: self._node.create_client(t, "/" + k) for k, t in names.items()}
        extensions = {"set_lever": ours.SetLever, "get_levers": ours.GetLevers,
                      "list_entities": ours.ListEntities, "get_states": ours.GetStates,
                      "set_states": ours.SetStates, "set_sensor_values": ours.SetSensorValues,
                      "save_snapshot": ours.SaveSnapshot, "restore_snapshot": ours.RestoreSnapshot,
                      "drop_snapshot": ours.DropSnapshot}
        for k, t in extensions.items():
            self._clients[k] = self._node.create_client(t, f"{server}/{k}")
        self._server = server
        self._types = {**names, **extensions}
        self._clock = 0.0
        self._clock_event = threading.Condition()
        self._node.create_subscription(Clock, "/clock", self._on_clock, 10)
        self._executor = SingleThreadedExecutor(context=self._context)
        self._executor.add_node(self._node)
        self._spinner = threading.Thread(target=self._spin, daemon=True, name="ros_simulator")
        self._spinner.start()
        self._world_file = world_file
        self._model_sdf: dict[str, str] | None = None
        self._model_pose: dict[str, np.ndarray] = {}  # fallback: each model's world pose
        self._lowered: dict[str, dict] = {}  # fallback: model -> {"sdf", "pose", "twist", flags}
        self._pending: dict[str, dict] = {}  # fallback: a swap begun, not done (_give_back_pending)
        self._step_size = step_size
        self._features: Features | None = None
        self._info: dict[str, EntityInfo] | None = None
        # the idempotent query that proves the reply path before the first call (subclasses
        # serving other interfaces name their own); see service_handshake
        self._handshake: tuple[str, type] = ("/get_simulation_state", si.GetSimulationState)
        self._handshake_lock = threading.Lock()
        self._reply_path_proven = False

    # ------------------------------------------------------------------ plumbing
    def _spin(self) -> None:
        try:
            self._executor.spin()
        except Exception:  # context shut down underneath us
            pass

    def _on_clock(self, msg) -> None:
        with self._clock_event:
            self._clock = time_seconds(msg.clock)
            self._clock_event.notify_all()

    def close(self) -> None:
        """Give back a model whose static-copy swap was cut off (see ``_give_back_pending``),
        then leave the graph."""
        if self._closed:
            return
        try:
            self._give_back_pending()
        except SimulatorError:  # the simulator is gone: nothing left to give it back into
            pass
        self._closed = True
        self._executor.shutdown(timeout_sec=1.0)
        self._spinner.join(timeout=2.0)  # no thread may be inside rcl when the node goes
        self._node.destroy_node()
        if self._context is not None:
            self._context.try_shutdown()

    def __enter__(self) -> "RosSimulator":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def wait_for_server(self, timeout: float | None = None) -> None:
        if not self._clients["get_entities"].wait_for_service(timeout_sec=timeout or self.timeout):
            raise SimulatorTimeoutError(
                f"no simulator answers at /get_entities after {timeout or self.timeout:g} s: "
                "is sim_server (or Gazebo with ros_gz_sim) running on this ROS_DOMAIN_ID?")

    def request(self, key: str, **fields):
        """A request message of the service ``key`` with ``fields`` set."""
        return self._types[key].Request(**fields)

    def has_service(self, key: str) -> bool:
        return self._clients[key].service_is_ready()

    def server_present(self) -> bool:
        """Is any of the simulator's services still in the graph (a server that left, or was
        killed and noticed by discovery, has none)?"""
        return any(client.service_is_ready() for client in self._clients.values())

    def call(self, key: str, request=None, timeout: float | None = None):
        """Raw call of a service by short name (``get_entities``, ``set_lever``, ...)."""
        return self._wait(key, self._send(key, request), timeout)

    def limit_waits(self, seconds: float) -> None:
        """Bound what is left to wait, for shutting down against a simulator that may be gone:
        from now on every call, those in flight included, waits at most until ``seconds`` from
        now, and a service missing from the graph fails at once instead of being waited for."""
        with self._answers:
            self._deadline = time.monotonic() + seconds
            self._answers.notify_all()

    def _await(self, done, limit: float, poll: float = math.inf) -> bool:
        """Wait until ``done()``, at most ``limit`` s and not past the deadline of limit_waits;
        ``poll``: re-check every so often (for conditions nothing notifies; under limit_waits,
        at least every 50 ms, as the graph may change)."""
        end = time.monotonic() + limit
        with self._answers:
            while not done():
                left = min(end, self._deadline) - time.monotonic()
                if left <= 0:
                    return False
                self._answers.wait(min(left, poll, 0.05 if self._deadline < math.inf else poll))
        return True

    def _notify(self, _future=None) -> None:
        with self._answers:
            self._answers.notify_all()

    def _send(self, key: str, request=None):
        client = self._clients[key]
        # A request sent before the service is matched both ways can be lost (DDS discovery race).
        if not client.service_is_ready() and (
                self._deadline < math.inf
                or not self._await(client.service_is_ready, self.timeout, poll=0.05)):
            raise SimulatorTimeoutError(f"{client.srv_name} is not available: is the simulator "
                                        "running?")
        if not self._reply_path_proven:
            self._prove_reply_path()
        return client.call_async(request if request is not None else self._types[key].Request())

    def _prove_reply_path(self) -> None:
        """Before the first call: the server answers a query re-sent on a client made after all
        of ours, so it has discovered where every answer goes (``service_handshake``)."""
        with self._handshake_lock:
            if self._reply_path_proven:
                return
            name, kind = self._handshake
            if not prove_reply_path(self._node, kind, name, self.timeout,
                                    lambda done, s: self._await(done, s, poll=0.02)):
                raise SimulatorTimeoutError(f"{name} did not answer within {self.timeout:g} s, "
                                            "re-sent: the simulator may be gone")
            self._reply_path_proven = True

    def _wait(self, key: str, future, timeout: float | None = None):
        client = self._clients[key]
        future.add_done_callback(self._notify)
        started = time.monotonic()

        def answered_or_gone() -> bool:  # under limit_waits, a server off the graph won't answer
            return future.done() or (self._deadline < math.inf and not client.service_is_ready())

        self._await(answered_or_gone, timeout or self.timeout)
        if not future.done():
            client.remove_pending_request(future)
            raise SimulatorTimeoutError(f"{client.srv_name} did not answer within "
                                        f"{time.monotonic() - started:.1f} s: the simulator may "
                                        "be gone")
        return future.result()

    def _many(self, key: str, requests: Sequence) -> list:
        """The answers of ``requests`` to the service ``key``, in order, with at most IN_FLIGHT
        of them unanswered at a time. Cut off (an error, a signal), it first waits for those
        sent (within the timeout and ``limit_waits``), so that the simulator has done what it
        will do with them before anyone looks."""
        answers: list = []
        sent: deque = deque()
        try:
            for request in requests:
                if len(sent) == IN_FLIGHT:
                    answers.append(self._wait(key, sent.popleft()))
                sent.append(self._send(key, request))
            while sent:
                answers.append(self._wait(key, sent.popleft()))
        except BaseException:
            self._await(lambda: all(f.done() for f in sent), self.timeout, poll=0.05)
            raise
        return answers

    def _check(self, response, what: str, names: Sequence[str] = (),
               lever: Lever | None = None) -> None:
        """Raise the protocol's typed error for a non-OK result (the table in ``results.py``);
        ``names``: the entities asked about, of which a NOT_FOUND answer names the unknown one."""
        where = f"{what} '{names[0]}'" if len(names) == 1 else what
        raise_for(response, where, unknown=lambda: self._unknown_among(names), lever=lever)

    def _unknown_among(self, names: Sequence[str]) -> str:
        """The first of ``names`` the simulator does not list ('?' when all are listed)."""
        if len(names) == 1:
            return names[0]
        listed = self._entity_table()
        return next((n for n in names if n not in listed), "?")

    # ------------------------------------------------------------------ the scene
    def _entity_table(self, fresh: bool = True) -> dict[str, EntityInfo]:
        """Every entity's info; fetched anew unless ``fresh`` is False and a table is cached."""
        if fresh or self._info is None:
            if self.has_service("list_entities"):
                res = self.call("list_entities")
                self._check(res, "list_entities")
                self._info = {n: EntityInfo(n, KINDS_OF_CODES[k], p, s, t) for n, k, p, s, t in
                              zip(res.names, res.kinds, res.parents, res.static_flags, res.types)}
            else:  # plain simulation_interfaces: entities with a state; '::' marks a link
                res = self.call("get_entities")
                self._check(res, "get_entities")
                self._info = {n: EntityInfo(n, EntityKind.LINK if "::" in n else EntityKind.MODEL,
                                            n.rsplit("::", 1)[0] if "::" in n else "")
                              for n in res.entities}
        return self._info

    def entities(self, kind: EntityKind | None = None, pattern: str | None = None) -> list[str]:
        return select_entities(self._entity_table(), kind, pattern)

    def entity_info(self, name: str) -> EntityInfo:
        info = self._entity_table(fresh=False).get(name) or self._entity_table().get(name)
        if info is None:
            raise UnknownEntityError(name, "not listed by the simulator")
        return info

    def bounds(self, names: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Lower and upper corners (n, 3) of each entity's collision box in its own frame, NaN
        rows where it has none (``get_entity_bounds``, a few requests in flight at a time:
        services keep 10)."""
        names = list(names)
        lo, hi = np.full((len(names), 3), np.nan), np.full((len(names), 3), np.nan)
        futures: dict[int, object] = {}
        for i, name in enumerate(names):
            request = self.request("get_entity_bounds", entity=name)
            futures[i] = self._send("get_entity_bounds", request)
            if len(futures) == 8 or i == len(names) - 1:
                for k, future in futures.items():
                    lo[k], hi[k] = self._bounds(names[k], self._wait("get_entity_bounds", future))
                futures.clear()
        return lo, hi

    def _bounds(self, name: str, res) -> tuple[tuple, tuple]:
        """The box corners of one get_entity_bounds answer."""
        self._check(res, "get_entity_bounds", [name])
        if res.bounds.type == res.bounds.TYPE_EMPTY:
            return (np.nan,) * 3, (np.nan,) * 3
        if res.bounds.type != res.bounds.TYPE_BOX:
            raise InvalidOperationError(f"'{name}' has no box bounds (type {res.bounds.type})")
        low, high = res.bounds.points[:2]
        return (low.x, low.y, low.z), (high.x, high.y, high.z)

    # ------------------------------------------------------------------ state
    def get_states(self, names: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        names = list(names)
        if not names:
            return np.zeros((0, 7)), np.zeros((0, 6))
        if self.has_service("get_states"):  # flat arrays: far cheaper than one message per entity
            res = self.call("get_states", self.request("get_states", entities=names))
            self._check(res, "get_states", names)
            return (np.asarray(res.poses).reshape(-1, 7), np.asarray(res.twists).reshape(-1, 6))
        req = self._types["get_entities_states"].Request()
        req.filters.filter = "^(" + "|".join(re.escape(n) for n in set(names)) + ")$"
        res = self.call("get_entities_states", req)
        self._check(res, "get_entities_states", names)
        index = {n: i for i, n in enumerate(res.entities)}
        missing = [n for n in names if n not in index]
        if missing:
            raise UnknownEntityError(missing[0], f"the simulator has no state for {missing[:5]}")
        states = [res.states[index[n]] for n in names]
        return (np.array([pose_array(s.pose) for s in states]),
                np.array([twist_array(s.twist) for s in states]))

    def set_states(self, names: Sequence[str], poses: np.ndarray | None = None,
                   twists: np.ndarray | None = None) -> None:
        names = list(names)
        if not names or (poses is None and twists is None):
            return
        if self.has_service("set_states"):
            req = self.request("set_states", entities=names)
            if poses is not None:
                req.poses = np.asarray(poses, float).ravel()
            if twists is not None:
                req.twists = np.asarray(twists, float).ravel()
            res = self.call("set_states", req)
            self._check(res, "set_states", names)
            return
        if poses is None or twists is None:  # the Kilted service sets both: keep the other
            cur_p, cur_t = self.get_states(names)
            poses = cur_p if poses is None else poses
            twists = cur_t if twists is None else twists
        poses = np.asarray(poses, float).reshape(len(names), 7)
        twists = np.asarray(twists, float).reshape(len(names), 6)
        requests = []
        for n, p, t in zip(names, poses, twists):
            req = self._types["set_entity_state"].Request(entity=n)
            req.state.header.frame_id = "world"
            req.state.pose, req.state.twist = pose_msg(p), twist_msg(t)
            requests.append(req)
        # IN_FLIGHT at a time: more than a service queues are lost (50 at once never answered)
        for n, answer in zip(names, self._many("set_entity_state", requests)):
            self._check(answer, "set_entity_state", [n])

    def set_sensor_values(self, names: Sequence[str], values: Sequence[float]) -> None:
        """Override world-declared sensor values (``sensor_values.py``); NaN releases one."""
        client = self._clients["set_sensor_values"]
        if not client.service_is_ready() and not self._await(client.service_is_ready, self.timeout,
                                                             poll=0.05):
            raise InvalidOperationError(f"{client.srv_name} is not served: the simulator has no "
                                        "settable sensor values (Gazebo has none)")
        req = self.request("set_sensor_values", names=list(names),
                           values=[float(v) for v in values])
        self._check(self.call("set_sensor_values", req), "set_sensor_values", list(names))

    # ------------------------------------------------------------------ time
    def step(self, n: int = 1) -> None:
        if n < 1:
            if n == 0:
                return
            raise InvalidOperationError(f"cannot step a negative number of steps ({n})")
        before, dt = self._clock, self.step_size
        limit = max(self.timeout, n * 0.01)
        res = self.call("step_simulation", self._types["step_simulation"].Request(steps=n), limit)
        self._check(res, "step_simulation")
        # the server publishes /clock after every chunk of steps, the last before it answers; on
        # a loaded machine the earlier ones may arrive after the answer
        with self._clock_event:
            self._clock_event.wait_for(lambda: self._clock >= before + (n - 0.5) * dt,
                                       timeout=self.timeout)

    @property
    def time(self) -> float:
        return self._clock

    @property
    def step_size(self) -> float:
        if self._step_size is None:
            info = self.call("get_simulator_features").features.custom_info
            m = re.search(r"step_size=([0-9.eE+-]+)", info)
            self._step_size = float(m.group(1)) if m else 0.001
        return self._step_size

    def sim_state(self) -> SimState:
        res = self.call("get_simulation_state")
        self._check(res, "get_simulation_state")
        return SimState(res.state.state)

    def set_sim_state(self, state: SimState) -> None:
        req = self._types["set_simulation_state"].Request()
        req.state.state = int(state)
        res = self.call("set_simulation_state", req)
        if res.result.result == type(res).ALREADY_IN_TARGET_STATE:
            return
        self._check(res, "set_simulation_state")

    def reset(self) -> None:
        """``reset_simulation``, then every model the static-copy fallback lowered back to its
        original at its world pose (the server's reset keeps the static copies)."""
        self._give_back_pending()
        req = self._types["reset_simulation"].Request()
        req.scope = type(req).SCOPE_STATE | type(req).SCOPE_TIME
        self._check(self.call("reset_simulation", req), "reset_simulation")
        with self._clock_event:  # the reset's /clock (0) comes after any sent before it
            self._clock_event.wait_for(lambda: self._clock == 0.0, timeout=self.timeout)
        for name, entry in list(self._lowered.items()):
            self.delete(name)
            self.spawn(name, entry["sdf"], self._model_pose[name])
            del self._lowered[name]

    # ------------------------------------------------------------------ snapshots
    def snapshot(self) -> ServerSnapshot:
        """Save the full state on the server (``~/save_snapshot``; sim_server has it, Gazebo
        not). The server keeps it until :meth:`drop_snapshot`, a bounded number at once."""
        self._require_snapshots()
        res = self.call("save_snapshot")
        self._check(res, "save_snapshot")
        return ServerSnapshot(time=res.sim_time, world="", id=res.id, server=self._server)

    def restore(self, snapshot: Snapshot) -> None:
        """Put the server back to ``snapshot`` (``~/restore_snapshot``); it stays saved."""
        snap = self._own(snapshot)
        res = self.call("restore_snapshot", self.request("restore_snapshot", id=snap.id))
        self._check(res, "restore_snapshot")
        with self._clock_event:  # the server publishes /clock (in whole ns) before it answers
            self._clock_event.wait_for(lambda: abs(self._clock - res.sim_time) < 1e-9,
                                       timeout=1.0)

    def drop_snapshot(self, snapshot: Snapshot) -> None:
        """Let the server forget ``snapshot`` (``~/drop_snapshot``)."""
        snap = self._own(snapshot)
        res = self.call("drop_snapshot", self.request("drop_snapshot", id=snap.id))
        self._check(res, "drop_snapshot")

    def _require_snapshots(self) -> None:
        if not self.features().snapshots:
            raise UnsupportedFeatureError("the simulator has no snapshots (no service "
                                          f"{self._server}/save_snapshot; Gazebo has none)")

    def _own(self, snapshot: Snapshot) -> ServerSnapshot:
        """``snapshot`` as one this client's server keeps; UnsupportedFeatureError without
        snapshots, InvalidOperationError for another's."""
        self._require_snapshots()
        if not isinstance(snapshot, ServerSnapshot) or snapshot.server != self._server:
            where = (f"server {snapshot.server}" if isinstance(snapshot, ServerSnapshot)
                     else f"a {type(snapshot).__name__}")
            raise InvalidOperationError(f"snapshot from {where}: this client's server is "
                                        f"{self._server}; take it with this client's snapshot()")
        return snapshot

    # ------------------------------------------------------------------ scene edits
    def spawn(self, name: str, sdf: str, pose: np.ndarray | None = None) -> str:
        return self._spawned(name, sdf, self.call(*self._spawn_request(name, sdf, pose)))

    def delete(self, name: str) -> None:
        self._deleted(name, self.call(*self._delete_request(name)))

    def _spawn_request(self, name: str, sdf: str, pose: np.ndarray | None) -> tuple[str, object]:
        """(service key, request) of a spawn; :meth:`_spawned` takes its answer."""
        req = self._types["spawn_entity"].Request(name=name, resource_string=sdf)
        req.initial_pose.header.frame_id = "world"
        if pose is not None:
            req.initial_pose.pose = pose_msg(np.asarray(pose, float))
        else:
            req.initial_pose.pose.orientation.w = 1.0
        return "spawn_entity", req

    def _spawned(self, name: str, sdf: str, res) -> str:
        """The name of the entity a spawn answer reports (the typed error of a refusal)."""
        self._check(res, "spawn_entity", [name])
        return res.entity_name

    def _delete_request(self, name: str) -> tuple[str, object]:
        """(service key, request) of a delete; :meth:`_deleted` takes its answer."""
        return "delete_entity", self._types["delete_entity"].Request(entity=name)

    def _deleted(self, name: str, res) -> None:
        self._check(res, "delete_entity", [name])

    # ------------------------------------------------------------------ fidelity levers
    def features(self) -> Features:
        if self._features is None:
            f = self.call("get_simulator_features").features
            have = set(f.features)
            if self._server_advertises("get_levers"):
                res = self.call("get_levers")
                levers, fallback = frozenset(Lever(v) for v in res.supported_levers), False
            else:
                fallback = {F.SPAWNING, F.DELETING, F.ENTITY_STATE_SETTING} <= have
                levers = FALLBACK_LEVERS if fallback else frozenset()
            self._features = Features(
                levers=levers, spawning=F.SPAWNING in have, deleting=F.DELETING in have,
                stepping=bool({F.STEP_SIMULATION_SINGLE, F.STEP_SIMULATION_MULTIPLE} & have),
                state_setting=F.ENTITY_STATE_SETTING in have, resetting=F.SIMULATION_RESET in have,
                snapshots=self._server_advertises("save_snapshot"), static_fallback=fallback,
                spawn_formats=tuple(f.spawn_formats),
                extra={"custom_info": f.custom_info})
        return self._features

    def _server_advertises(self, key: str) -> bool:
        """Whether the node serving ``/get_entities`` advertises the service ``key``, asked of
        the graph (a node lists its services all at once), then waited for until ready within
        the timeout: an extension the server node does not advertise is not waited for, one it
        advertises is not missed because discovery of it lags behind ``/get_entities``."""
        client = self._clients[key]

        def decided() -> bool | None:
            if client.service_is_ready():
                return True
            for name, namespace in self._node.get_node_names_and_namespaces():
                try:
                    served = {s for s, _ in self._node.get_service_names_and_types_by_node(
                        name, namespace)}
                except NodeNameNonExistentError:  # left the graph meanwhile
                    continue
                if "/get_entities" in served:
                    return client.srv_name in served or False
            return None

        answer: list[bool | None] = [None]

        def known() -> bool:
            answer[0] = decided()
            return answer[0] is not None

        if not self._await(known, self.timeout, poll=0.05):
            return client.service_is_ready()  # no node lists /get_entities: as discovered
        return answer[0] and (client.service_is_ready()
                              or self._await(client.service_is_ready, self.timeout, poll=0.05))

    def set_lever(self, names: Sequence[str], lever: Lever, enabled: bool) -> None:
        lever, names = Lever.of(lever), list(names)
        if not names:
            return
        feats = self.features()
        if lever not in feats.levers:
            raise UnsupportedLeverError(lever, why="the simulator offers "
                                        f"{sorted(l.name for l in feats.levers) or 'no levers'}")
        if feats.static_fallback:
            self._fallback_set(names, lever, enabled)
            return
        req = self._types["set_lever"].Request(entities=names, lever=int(lever), enabled=enabled,
                                               owner=self._node.get_fully_qualified_name())
        res = self.call("set_lever", req)
        self._check(res, "set_lever", list(res.failed_entities) or names, lever=lever)

    def get_lever(self, names: Sequence[str], lever: Lever, *,
                  original: bool = False) -> np.ndarray:
        """The lever per entity; ``original``: as the world gave it (the server keeps it; the
        static-copy fallback only ever lowers what the world file has at full fidelity)."""
        lever, names = Lever.of(lever), list(names)
        if self.features().static_fallback:
            self._give_back_pending()  # a restore reads levers first: it finds no model missing
            key = "dynamics_off" if lever == Lever.DYNAMICS else "collision_off"
            return np.array([original or not self._lowered.get(n, {}).get(key, False)
                             for n in names], bool)
        res = self.call("get_levers", self._types["get_levers"].Request(
            entities=names, lever=int(lever), original=original))
        self._check(res, "get_levers", names, lever=lever)
        return np.array(res.enabled, bool)

    # ------------------------------------------------------------------ static-copy fallback
    def _sdf_of(self, model: str) -> str:
        if self._model_sdf is None:
            if not self._world_file:
                raise UnsupportedLeverError(Lever.DYNAMICS, model, "the simulator has no lever "
                                            "service; the static-copy fallback needs world_file=")
            world = load_world(self._world_file)
            self._model_sdf = {n: r.sdf for n, r in world.models.items() if not r.parent}
            self._model_pose = {n: r.pose for n, r in world.models.items() if not r.parent}
        if model not in self._model_sdf:
            raise UnsupportedLeverError(Lever.DYNAMICS, model, "not a top-level model of "
                                        f"{self._world_file}")
        return self._model_sdf[model]

    def _fallback_set(self, names: list[str], lever: Lever, enabled: bool) -> None:
        """Swap each model for its static copy with the lever's new value, or for its original:
        all deletes, then all spawns, each IN_FLIGHT at a time (``_many``), then the restored
        originals' velocities in one call. Neither interface renames, so a replacement cannot
        be spawned first under another name; the swaps are journalled instead (``_pending``)
        from before the deletes until each one's bookkeeping is done, and a swap cut off between
        its delete and its spawn (a signal, a timeout, a refusal) is settled by the next call
        that needs the models (``_give_back_pending``)."""
        self._give_back_pending()
        key = "dynamics_off" if lever == Lever.DYNAMICS else "collision_off"
        models, entries, flags = [], [], []
        for name in names:
            entry = self._lowered.get(name)
            wanted = {k: bool((entry or {}).get(k)) for k in ("dynamics_off", "collision_off")}
            wanted[key] = not enabled
            if entry is None and not any(wanted.values()):
                continue
            models.append(name)
            entries.append(entry)
            flags.append(wanted)
        if not models:
            return
        poses, twists = self.get_states(models)
        entries = [entry or {"sdf": self._sdf_of(name), "twist": twist}
                   for name, entry, twist in zip(models, entries, twists)]
        for name, entry, wanted, pose in zip(models, entries, flags, poses):
            self._pending[name] = {"entry": entry, "flags": wanted, "pose": pose}
        deletes = [self._delete_request(name) for name in models]
        for name, answer in zip(models, self._many(deletes[0][0], [r for _, r in deletes])):
            self._deleted(name, answer)
        sdfs = [static_copy(entry["sdf"], wanted["collision_off"]) if any(wanted.values())
                else entry["sdf"] for entry, wanted in zip(entries, flags)]
        spawns = [self._spawn_request(n, sdf, pose) for n, sdf, pose in zip(models, sdfs, poses)]
        answers = self._many(spawns[0][0], [r for _, r in spawns])
        for name, sdf, entry, wanted, answer in zip(models, sdfs, entries, flags, answers):
            self._spawned(name, sdf, answer)
            if any(wanted.values()):
                entry.update(wanted)
                self._lowered[name] = entry
            else:
                self._lowered.pop(name, None)
            del self._pending[name]
        raised = [i for i, wanted in enumerate(flags) if not any(wanted.values())]
        if raised:
            self.set_states([models[i] for i in raised], poses[raised],
                            np.array([entries[i]["twist"] for i in raised]))

    def _give_back_pending(self) -> None:
        """Settle every swap cut off between its delete and its spawn. A model missing is
        spawned as its original at the pose it had: the swap undone (a restore wants the
        original anyway). A model present may be the original, the old copy or the new one
        (the cut came before the delete, or the spawn's answer was lost): it is booked as
        lowered, so that raising its levers, as every restore does, spawns the original."""
        if not self._pending:
            return
        listed = self._entity_table()
        for name, swap in list(self._pending.items()):
            entry = swap["entry"]
            if name not in listed:
                self.spawn(name, entry["sdf"], swap["pose"])
                self._lowered.pop(name, None)
            else:  # a swap back to the original keeps the flags of the copy it was booked as
                if any(swap["flags"].values()):
                    entry.update(swap["flags"])
                self._lowered[name] = entry
            del self._pending[name]


def static_copy(model_sdf: str, strip_collisions: bool) -> str:
    """The ``<sdf><model>`` text made static, optionally without collision elements."""
    root = ET.fromstring(model_sdf)
    model = root if root.tag == "model" else root.find("model")
    if model is None:
        raise SimulatorError("static copy: no <model> in the SDF text")
    static = model.find("static")
    if static is None:
        static = ET.SubElement(model, "static")
    static.text = "true"
    if strip_collisions:
        for link in model.iter("link"):
            for col in link.findall("collision"):
                link.remove(col)
    return ET.tostring(root, encoding="unicode")
