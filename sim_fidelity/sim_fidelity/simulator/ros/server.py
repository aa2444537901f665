"""``sim_server``: the embedded MuJoCo engine as a ROS 2 node speaking ``simulation_interfaces``.

Serves the same service names and types as Gazebo's ``ros_gz_sim`` server, so a client cannot tell
the two apart, plus our fidelity levers (``~/set_lever``, ``~/get_levers``, ``~/list_entities``).
Publishes ``/clock``, ``~/performance``, for the models named in ``odometry``,
``/model/<name>/odometry``, and the world's settable sensor values (``sensor_values.py``) on
their topics, overridden through ``~/set_sensor_values``. Joint commands and states of the models
and the topics of their scripts are in ``model_topics.py``; ``/get_entity_bounds`` (standard) gives the box
around an entity's collision geometry.
"""
from __future__ import annotations

import os
import re
import threading
import time
from pathlib import Path

import numpy as np

from .. import poses
from ..engine import MujocoEngine
from .model_topics import ModelTopics
from ..sensor_values import SensorValues
from ..errors import (InvalidPoseError, SdfError, SimulatorError, UnknownEntityError,
                     UnsupportedFeatureError)
from ..protocol import EntityKind, Lever, SimState

KIND_CODES = {EntityKind.MODEL: 0, EntityKind.LINK: 1, EntityKind.JOINT: 2, EntityKind.SENSOR: 3,
              EntityKind.PLUGIN: 4}
CHUNK_WALL_S = 0.004  # stepping releases the engine to service calls at least this often


# simulation_interfaces/Result codes
FEATURE_UNSUPPORTED, OK, NOT_FOUND, INCORRECT_STATE, OPERATION_FAILED = range(5)


def _result(code: int, message: str = ""):
    from simulation_interfaces.msg import Result
    return Result(result=code, error_message=message)


def _error_code(error: Exception, response) -> int:
    """The Result code for a typed error; INVALID_POSE where the service defines it."""
    if isinstance(error, UnknownEntityError):
        return NOT_FOUND
    if isinstance(error, UnsupportedFeatureError):
        return FEATURE_UNSUPPORTED
    if isinstance(error, InvalidPoseError):
        return getattr(type(response), "INVALID_POSE", OPERATION_FAILED)
    return OPERATION_FAILED


class SimServer:
    """Owns the engine, the stepping thread and the ROS interfaces of one ``sim_server`` node."""

    def __init__(self, node, engine: MujocoEngine, *, real_time_factor: float, paused: bool,
                 publish_rate: float, odometry: list[str], serve_levers: bool = True):
        from rclpy.callback_groups import ReentrantCallbackGroup
        from rosgraph_msgs.msg import Clock
        from sim_fidelity_interfaces.msg import Performance
        from sim_fidelity_interfaces.srv import (GetLevers, GetStates, ListEntities, SetLever,
                                                 SetSensorValues, SetStates)
        from simulation_interfaces import srv as si

        self.node, self.engine = node, engine
        self.rtf = real_time_factor
        self.lock = threading.RLock()
        self.spawned: list[str] = []
        self._stop = threading.Event()
        self._wake = threading.Event()
        engine.set_sim_state(SimState.PAUSED if paused else SimState.PLAYING)
        self._clock_pub = node.create_publisher(Clock, "/clock", 10)
        self._perf_pub = node.create_publisher(Performance, "~/performance", 10)
        group = ReentrantCallbackGroup()
        services = {
            "/get_entities": (si.GetEntities, self._get_entities),
            "/get_entity_state": (si.GetEntityState, self._get_entity_state),
            "/get_entities_states": (si.GetEntitiesStates, self._get_entities_states),
            "/set_entity_state": (si.SetEntityState, self._set_entity_state),
            "/get_entity_info": (si.GetEntityInfo, self._get_entity_info),
            "/spawn_entity": (si.SpawnEntity, self._spawn_entity),
            "/delete_entity": (si.DeleteEntity, self._delete_entity),
            "/step_simulation": (si.StepSimulation, self._step_simulation),
            "/get_simulation_state": (si.GetSimulationState, self._get_simulation_state),
            "/set_simulation_state": (si.SetSimulationState, self._set_simulation_state),
            "/reset_simulation": (si.ResetSimulation, self._reset_simulation),
            "/get_simulator_features": (si.GetSimulatorFeatures, self._get_simulator_features),
            "/get_entity_bounds": (si.GetEntityBounds, self._get_entity_bounds),
        }
        if serve_levers:
            services.update({"~/set_lever": (SetLever, self._set_lever),
                             "~/get_levers": (GetLevers, self._get_levers),
                             "~/list_entities": (ListEntities, self._list_entities),
                             "~/get_states": (GetStates, self._get_states),
                             "~/set_states": (SetStates, self._set_states)})
        self.sensor_values = SensorValues(engine)
        services["~/set_sensor_values"] = (SetSensorValues, self._set_sensor_values)
        self._services = [node.create_service(t, name, self._guarded(cb), callback_group=group)
                          for name, (t, cb) in services.items()]
        self._odometry = self._odometry_publishers(odometry)
        self._sensor_pubs = self._sensor_value_publishers()
        self.model_topics = ModelTopics(node, engine, self.lock)
        self._perf = {"wall": time.perf_counter(), "sim": engine.time, "steps": 0, "busy": 0.0}
        self._perf_timer = node.create_timer(1.0, self._publish_performance)
        if publish_rate > 0:  # a spawned robot may bring topics
            self._state_timer = node.create_timer(1.0 / publish_rate, self._publish_states)
        self._thread = threading.Thread(target=self._run, name="sim_server_stepper", daemon=True)

    # ------------------------------------------------------------------ stepping
    def start(self) -> None:
        self._publish_clock()
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)

    def _run(self) -> None:
        chunk = 1
        anchor = None  # (wall, sim) where real-time pacing started
        while not self._stop.is_set():
            if self.engine.sim_state() != SimState.PLAYING:
                anchor = None
                self._wake.wait(0.05)
                self._wake.clear()
                continue
            t0 = time.perf_counter()
            with self.lock:
                if self.engine.sim_state() != SimState.PLAYING:
                    continue
                self.engine.step(chunk)
                self._account(chunk, time.perf_counter() - t0)
                self._publish_clock()
            busy = time.perf_counter() - t0
            chunk = int(np.clip(chunk * CHUNK_WALL_S / max(busy, 1e-6), 1, 1000)) or 1
            if self.rtf > 0:
                now = time.perf_counter()
                if anchor is None:
                    anchor = (now, self.engine.time)
                ahead = anchor[0] + (self.engine.time - anchor[1]) / self.rtf - now
                if ahead > 0:
                    self._stop.wait(ahead)
                chunk = max(1, min(chunk, int(CHUNK_WALL_S * self.rtf / self.engine.step_size)))
            else:
                time.sleep(0)  # let service threads take the lock

    def _account(self, steps: int, wall: float) -> None:
        self._perf["steps"] += steps
        self._perf["busy"] += wall

    def _publish_clock(self) -> None:
        from rosgraph_msgs.msg import Clock

        from .convert import time_msg
        self._clock_pub.publish(Clock(clock=time_msg(self.engine.time)))

    def _publish_performance(self) -> None:
        from sim_fidelity_interfaces.msg import Performance

        from .convert import time_msg
        with self.lock:
            now, sim = time.perf_counter(), self.engine.time
            p = self._perf
            window = now - p["wall"]
            msg = Performance(stamp=time_msg(sim), sim_time=sim, steps=p["steps"],
                              real_time_factor=(sim - p["sim"]) / window if window > 0 else 0.0,
                              step_time_ms=1e3 * p["busy"] / p["steps"] if p["steps"] else 0.0,
                              window_s=window)
            self._perf = {"wall": now, "sim": sim, "steps": 0, "busy": 0.0}
        self._perf_pub.publish(msg)

    def _odometry_publishers(self, patterns: list[str]) -> dict:
        from nav_msgs.msg import Odometry
        names = [n for n in self.engine.entities(EntityKind.MODEL)
                 if any(re.fullmatch(p, n) for p in patterns)]
        return {n: self.node.create_publisher(Odometry, f"/model/{n}/odometry", 10) for n in names}

    def _sensor_value_publishers(self) -> list:
        """One std_msgs/Bool or Float64 publisher per settable sensor value, on its topic."""
        from std_msgs.msg import Bool, Float64
        return [(self.node.create_publisher(Bool if s.kind == "bool" else Float64, s.topic, 10),
                 s.kind) for s in self.sensor_values.sensors]

    def _publish_states(self) -> None:
        if self._sensor_pubs:
            self._publish_sensor_values()
        if self._odometry:
            self._publish_odometry()
        self.model_topics.publish()

    def _publish_sensor_values(self) -> None:
        from std_msgs.msg import Bool, Float64
        with self.lock:
            values = self.sensor_values.values()
            enabled = [self.engine.sensor_enabled(n) for n in self.sensor_values.names]
        for (pub, kind), v, on in zip(self._sensor_pubs, values, enabled):
            if on:  # the SENSOR lever switches publishing off
                pub.publish(Bool(data=bool(v >= 0.5)) if kind == "bool" else Float64(data=float(v)))

    def _publish_odometry(self) -> None:
        from nav_msgs.msg import Odometry

        from .convert import pose_msg, time_msg, twist_msg
        names = list(self._odometry)
        with self.lock:
            pose, twist = self.engine.get_states(names)
            stamp = time_msg(self.engine.time)
        q_inv = poses.quat_conj(pose[:, 3:])
        body_twist = np.concatenate([poses.quat_rotate(q_inv, twist[:, :3]),
                                     poses.quat_rotate(q_inv, twist[:, 3:])], axis=1)
        for i, name in enumerate(names):
            msg = Odometry()
            msg.header.stamp, msg.header.frame_id, msg.child_frame_id = stamp, "world", name
            msg.pose.pose, msg.twist.twist = pose_msg(pose[i]), twist_msg(body_twist[i])
            self._odometry[name].publish(msg)

    # ------------------------------------------------------------------ service plumbing
    def _guarded(self, callback):
        """Run a service callback under the engine lock; its errors become result codes.

        The result is OK unless the handler sets another or raises one of the protocol's typed
        errors; a service must answer, never die.
        """
        def call(request, response):
            with self.lock:
                try:
                    if hasattr(response, "result"):
                        response.result = _result(OK)
                    callback(request, response)
                except Exception as e:
                    if not isinstance(e, (SimulatorError, re.error)):
                        self.node.get_logger().error(f"{callback.__name__}: {type(e).__name__}: {e}")
                    response.result = _result(_error_code(e, response), str(e))
                return response
        call.__name__ = callback.__name__
        return call

    def _filtered(self, filters) -> list[str]:
        """Entities with a state (models and links) that pass ``EntityFilters``; may raise."""
        from simulation_interfaces.msg import Bounds
        names = self.engine.entities(EntityKind.MODEL) + self.engine.entities(EntityKind.LINK)
        if filters.filter:
            rx = re.compile(filters.filter)
            names = [n for n in names if rx.search(n)]
        if filters.categories:
            wanted = {c.category for c in filters.categories}
            names = [n for n in names if self._category(n) in wanted]
        if filters.tags.tags:
            names = [n for n in names if self._tag_match(n, filters.tags)]
        b = filters.bounds
        if b.type != Bounds.TYPE_EMPTY and names:
            pos = self.engine.get_states(names)[0][:, :3]
            pts = np.array([[p.x, p.y, p.z] for p in b.points])
            if b.type == Bounds.TYPE_BOX and len(pts) == 2:
                lo, hi = pts.min(axis=0), pts.max(axis=0)
                inside = np.all((pos >= lo) & (pos <= hi), axis=1)
            elif b.type == Bounds.TYPE_SPHERE and len(pts) == 2:
                inside = np.linalg.norm(pos - pts[0], axis=1) <= pts[1][0]
            else:
                raise UnsupportedFeatureError("only TYPE_BOX (2 corner points) and TYPE_SPHERE "
                                              "(centre, radius in x) bounds are supported")
            names = [n for n, keep in zip(names, inside) if keep]
        return names

    def _category(self, name: str) -> int:
        from simulation_interfaces.msg import EntityCategory
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

    def _entity_state(self, name: str, pose: np.ndarray, twist: np.ndarray):
        from simulation_interfaces.msg import EntityState

        from .convert import pose_msg, time_msg, twist_msg
        state = EntityState()
        state.header.stamp, state.header.frame_id = time_msg(self.engine.time), "world"
        state.pose, state.twist = pose_msg(pose), twist_msg(twist)
        return state

    # ------------------------------------------------------------------ simulation_interfaces
    def _get_entities(self, req, res):
        res.entities = self._filtered(req.filters)

    def _get_entity_state(self, req, res):
        pose, twist = self.engine.get_states([req.entity])
        res.state = self._entity_state(req.entity, pose[0], twist[0])

    def _get_entities_states(self, req, res):
        names = self._filtered(req.filters)
        pose, twist = self.engine.get_states(names)
        res.entities = names
        res.states = [self._entity_state(n, p, t) for n, p, t in zip(names, pose, twist)]

    def _set_entity_state(self, req, res):
        from .convert import pose_array, twist_array
        frame = req.state.header.frame_id
        if frame not in ("", "world"):
            raise InvalidPoseError(f"frame '{frame}' is not supported: use 'world'")
        pose, twist = pose_array(req.state.pose), twist_array(req.state.twist)
        self.engine.set_states([req.entity], pose[None], twist[None])
        self._wake.set()

    def _get_entity_info(self, req, res):
        info = self.engine.entity_info(req.entity)
        res.info.category.category = self._category(req.entity)
        res.info.description = f"{info.kind.value}{' ' + info.type if info.type else ''}"
        res.info.tags = self._tags(req.entity)

    def _get_entity_bounds(self, req, res):
        from geometry_msgs.msg import Vector3
        from simulation_interfaces.msg import Bounds
        box = np.concatenate(self.engine.bounds([req.entity]))
        if np.isnan(box).any():
            res.bounds.type = Bounds.TYPE_EMPTY
            return
        res.bounds.type = Bounds.TYPE_BOX
        res.bounds.points = [Vector3(x=float(p[0]), y=float(p[1]), z=float(p[2])) for p in box]

    def _spawn_entity(self, req, res):
        from .convert import pose_array
        text, source = req.resource_string, "<string>"
        if not text and req.uri:
            try:
                source = str(self._model_file(req.uri))
            except FileNotFoundError as e:
                res.result = _result(type(res).NO_RESOURCE, str(e))
                return
            text = Path(source).read_text()
        if not text.strip():
            res.result = _result(type(res).NO_RESOURCE, "neither uri nor resource_string given")
            return
        if "<robot" in text[:2000] and "<sdf" not in text[:2000]:
            res.result = _result(type(res).UNSUPPORTED_FORMAT, "URDF is not supported: spawn SDF")
            return
        name = req.name
        existing = set(self.engine.entities(EntityKind.MODEL))
        if name and name in existing:
            if not req.allow_renaming:
                res.result = _result(type(res).NAME_NOT_UNIQUE, f"an entity named '{name}' exists")
                return
            i = 1
            while f"{name}_{i}" in existing:
                i += 1
            name = f"{name}_{i}"
        if name and not re.fullmatch(r"[A-Za-z_][\w\-.]*", name):
            res.result = _result(type(res).NAME_INVALID, f"'{name}' is not a valid entity name")
            return
        frame = req.initial_pose.header.frame_id
        if frame not in ("", "world"):
            res.result = _result(type(res).INVALID_POSE, f"frame '{frame}' is not supported: use 'world'")
            return
        pose = pose_array(req.initial_pose.pose)
        if not np.any(pose[3:]):  # an all-zero quaternion is the default message: identity
            pose[6] = 1.0
        try:
            pose[3:] = poses.normalized_or_raise(pose[3:])
            res.entity_name = self.engine.spawn(name, text, pose, source)
        except ValueError as e:
            code = type(res).RESOURCE_PARSE_ERROR if isinstance(e, SdfError) else type(res).INVALID_POSE
            if isinstance(e, SdfError) and "exists" in str(e):
                code = type(res).NAME_NOT_UNIQUE
            res.result = _result(code, str(e))
            return
        except SimulatorError as e:
            res.result = _result(OPERATION_FAILED, str(e))
            return
        self.spawned.append(res.entity_name)
        self.model_topics.sync()

    def _model_file(self, uri: str) -> Path:
        """The SDF file a spawn URI names (``model://``, ``file://`` or a path, as in <include>)."""
        from ..sdf import resolve
        found = resolve.resolve_uri(uri, os.getcwd(), self.engine.world.resource_paths)
        if found is None:
            raise FileNotFoundError(f"'{uri}' is not found in {resolve.search_dirs()}")
        path, why = resolve.model_file(found)
        if path is None:
            raise FileNotFoundError(why)
        return path

    def _delete_entity(self, req, res):
        self.engine.delete(req.entity)
        if req.entity in self.spawned:
            self.spawned.remove(req.entity)
        self.model_topics.sync()

    def _step_simulation(self, req, res):
        if self.engine.sim_state() == SimState.PLAYING:
            res.result = _result(INCORRECT_STATE,
                                 "the simulation is playing: pause it before stepping")
            return
        if req.steps < 1:
            res.result = _result(OPERATION_FAILED, "steps must be at least 1")
            return
        t0 = time.perf_counter()
        if self.engine.sim_state() == SimState.STOPPED:
            self.engine.set_sim_state(SimState.PAUSED)
        self.engine.step(int(req.steps))
        self._account(int(req.steps), time.perf_counter() - t0)
        self._publish_clock()
        return

    def _get_simulation_state(self, req, res):
        res.state.state = int(self.engine.sim_state())
        return

    def _set_simulation_state(self, req, res):
        target = req.state.state
        if target == int(self.engine.sim_state()):
            res.result = _result(type(res).ALREADY_IN_TARGET_STATE,
                                 f"already {SimState(target).name}")
            return
        if target == SimState.QUITTING:
            threading.Thread(target=self._quit, daemon=True).start()
            return
        if target not in (SimState.PLAYING, SimState.PAUSED, SimState.STOPPED):
            res.result = _result(type(res).INCORRECT_TRANSITION,
                                 f"cannot switch to state {target}: use PLAYING, PAUSED, STOPPED "
                                 "or QUITTING")
            return
        self.engine.set_sim_state(SimState(target))
        if target == SimState.STOPPED:
            self._publish_clock()
        self._wake.set()
        return

    def _quit(self) -> None:
        time.sleep(0.2)  # let the response go out
        self.stop()
        import rclpy
        rclpy.try_shutdown()

    def _reset_simulation(self, req, res):
        scope = req.scope
        if scope in (type(req).SCOPE_DEFAULT, type(req).SCOPE_ALL) or scope & type(req).SCOPE_SPAWNED:
            for name in list(self.spawned):
                self.engine.delete(name)
            self.spawned.clear()
            self.model_topics.sync()
        if scope in (type(req).SCOPE_DEFAULT, type(req).SCOPE_ALL) or scope & (type(req).SCOPE_TIME | type(req).SCOPE_STATE):
            self.engine.reset()
        self._publish_clock()
        return

    def _get_simulator_features(self, req, res):
        from simulation_interfaces.msg import SimulatorFeatures as F
        res.features.features = [
            F.SPAWNING, F.DELETING, F.SPAWNING_RESOURCE_STRING, F.ENTITY_CATEGORIES, F.ENTITY_TAGS,
            F.ENTITY_STATE_GETTING, F.ENTITY_STATE_SETTING, F.ENTITY_INFO_GETTING,
            F.SIMULATION_RESET, F.SIMULATION_RESET_TIME, F.SIMULATION_RESET_STATE,
            F.SIMULATION_RESET_SPAWNED, F.SIMULATION_STATE_GETTING, F.SIMULATION_STATE_SETTING,
            F.SIMULATION_STATE_PAUSE, F.STEP_SIMULATION_SINGLE, F.STEP_SIMULATION_MULTIPLE,
            F.ENTITY_BOUNDS, F.ENTITY_BOUNDS_BOX]
        res.features.spawn_formats = ["sdf"]
        levers = ",".join(l.name.lower() for l in sorted(self.engine.features().levers))
        res.features.custom_info = (f"sim_fidelity embedded {self.engine.features().extra['engine']}; "
                                    f"step_size={self.engine.step_size!r}; "
                                    f"fidelity levers ({levers}) at "
                                    f"{self.node.get_fully_qualified_name()}/set_lever")
        return

    # ------------------------------------------------------------------ sim_fidelity extensions
    def _set_lever(self, req, res):
        try:
            lever = Lever(req.lever)
        except ValueError:
            raise UnsupportedFeatureError(f"unknown lever {req.lever}") from None
        names = list(req.entities)
        res.failed_entities = [n for n in names if not self.engine.has(n)]
        if res.failed_entities:
            raise UnknownEntityError(res.failed_entities[0], f"{len(res.failed_entities)} of the "
                                     f"{len(names)} entities are unknown")
        self.engine.set_lever(names, lever, req.enabled)

    def _get_levers(self, req, res):
        res.supported_levers = [int(l) for l in sorted(self.engine.features().levers)]
        if req.entities:
            try:
                lever = Lever(req.lever)
            except ValueError:
                raise UnsupportedFeatureError(f"unknown lever {req.lever}") from None
            res.enabled = self.engine.get_lever(list(req.entities), lever).tolist()

    def _get_states(self, req, res):
        pose, twist = self.engine.get_states(list(req.entities))
        res.sim_time = self.engine.time
        res.poses, res.twists = pose.ravel(), twist.ravel()

    def _set_states(self, req, res):
        names = list(req.entities)
        n = len(names)
        pose = np.asarray(req.poses, float) if len(req.poses) else None
        twist = np.asarray(req.twists, float) if len(req.twists) else None
        if (pose is not None and pose.size != 7 * n) or (twist is not None and twist.size != 6 * n):
            raise InvalidPoseError(f"{n} entities need {7 * n} pose and {6 * n} twist values, got "
                                   f"{len(req.poses)} and {len(req.twists)}")
        self.engine.set_states(names, pose, twist)
        self._wake.set()

    def _set_sensor_values(self, req, res):
        self.sensor_values.set_sensor_values(list(req.names), list(req.values))
        self._publish_sensor_values()  # the new value goes out at once, not at the next tick

    def _list_entities(self, req, res):
        codes = {v: k for k, v in KIND_CODES.items()}
        unknown = [k for k in req.kinds if k not in codes]
        if unknown:
            raise UnsupportedFeatureError(f"unknown kind codes {unknown}")
        kinds = [codes[k] for k in req.kinds]
        names = self.engine.entities(pattern=req.filter or None)
        infos = [self.engine.entity_info(n) for n in names]
        infos = [i for i in infos if not kinds or i.kind in kinds]
        res.names = [i.name for i in infos]
        res.kinds = [KIND_CODES[i.kind] for i in infos]
        res.parents = [i.parent for i in infos]
        res.static_flags = [i.static for i in infos]
        res.types = [i.type for i in infos]


# ---------------------------------------------------------------------- node entry points
def run(parameters: dict | None = None, args: list[str] | None = None) -> int:
    """Start the node (``parameters`` override the command line's) and spin until a signal;
    parameters: ``node_parameters.SIM_SERVER``, declared by :mod:`sim_fidelity.ros_node`."""
    from ...node_parameters import SIM_SERVER
    from ...ros_node import run_node

    def start(node, values: dict, _stack):
        if not values["world"]:
            raise SdfError("parameter 'world' is empty: give the SDF world to load")
        engine = MujocoEngine.from_file(values["world"], sleep=values["sleep"],
                                        sleep_tolerance=values["sleep_tolerance"] or None,
                                        step_size=values["step_size"] or None,
                                        solver_iterations=values["solver_iterations"] or None)
        server = SimServer(node, engine, real_time_factor=values["real_time_factor"],
                           paused=values["paused"], publish_rate=values["publish_rate"],
                           odometry=[p for p in values["odometry"] if p],
                           serve_levers=values["serve_levers"])
        node.get_logger().info(
            f"world '{engine.world.name}' from {values['world']}: {len(engine.entities())} entities, "
            f"step {engine.step_size * 1e3:g} ms, rtf {values['real_time_factor']:g}, "
            f"{'paused' if values['paused'] else 'playing'}")
        server.start()

        def stop() -> int:  # the stepper stops publishing before the context goes
            server.stop()
            return 0
        return stop

    return run_node("sim_server", SIM_SERVER, start, errors=(SimulatorError, FileNotFoundError),
                    threads=4, args=args, overrides=parameters, use_sim_time=False)


def main(args: list[str] | None = None) -> int:
    """console_script ``sim_server``: parameters come as ``--ros-args -p world:=...``."""
    return run(args=args)


if __name__ == "__main__":
    import sys
    sys.exit(main())
