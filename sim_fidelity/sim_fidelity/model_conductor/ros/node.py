"""ROS node ``model_conductor``: an ensemble of models (paper 003, section 3.4) behind services.

Loads the ensemble YAML at start (a bad config stops the node with file, key and reason), then:

* ``~/start`` (StartEnsemble): the initial scene (objects, types, poses) and the data source --
  none, the live topics (``joint_states``, ``actions`` parameters; the ensemble then runs in real
  time) or a recorded bag played back paced to the service-stepped models. Builds the conductor
  (models of type ``remote`` become :class:`~.remote_model.RemoteModel` proxies of their
  ``model_node``, parameter ``node``, default ``/<name>``), initialises the models, opens the log
  bag and runs the ensemble on a thread of its own; answers with the models' ids.
* ``~/stop`` (StopEnsemble): ends the run (it also ends by itself when the recording or the
  request's ``duration`` is over) and answers with its time, steps, transfers and log.
* ``~/trigger`` (ActivateTrigger): activates a service trigger; answers whether it fired.

While running it publishes each model's output on ``~/output/<model>`` (ModelOutput), every
responsibility change on ``~/responsibility`` (ResponsibilityChange) and every event on
``~/events`` (ModelEvent), and logs the same into the bag (:mod:`..log`). ``~/running``
(std_msgs/Bool, latched) says whether a run is under way: false again once a run ended, by itself
or by ``~/stop``.
Parameters: ``node_parameters.MODEL_CONDUCTOR``.
"""
from __future__ import annotations

import sys
import threading
import time
from collections.abc import Mapping
from typing import Any

from ..conductor import Conductor, RunReport, SceneObject
from ..config import EnsembleConfig
from ..errors import ConductorConfigError, ConductorError
from ..responsibility import Transfer
from .remote_model import remote_models

STOP_WAIT_S = 30.0  # for the run's thread to finish its tick and stop the models
TRIGGER_WAIT_S = 5.0  # for the run to handle a trigger call at the end of its tick


class Publications:
    """A conductor listener publishing outputs, transfers and events on the node's topics."""

    def __init__(self, node, models: list[str]):
        from sim_fidelity_interfaces.msg import ModelEvent, ModelOutput, ResponsibilityChange

        from ..log import output_topic
        self.node = node
        self._outputs = {m: node.create_publisher(
            ModelOutput, "~/output/" + output_topic(m).rsplit("/", 1)[-1], 10) for m in models}
        self._transfers = node.create_publisher(ResponsibilityChange, "~/responsibility", 50)
        self._events = node.create_publisher(ModelEvent, "~/events", 50)
        from rclpy.qos import DurabilityPolicy, QoSProfile
        from visualization_msgs.msg import MarkerArray
        self.models, self.holders = models, {}  # object -> the model holding its pose
        self._markers = node.create_publisher(MarkerArray, "~/markers", QoSProfile(
            depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL))  # late displays get it too

    def on_output(self, time: float, model: str, model_id: int,
                  output: Mapping[str, Any]) -> None:
        from .convert import output_msg
        self._outputs[model].publish(output_msg(model, model_id, time, output))

    def on_transfer(self, transfer: Transfer) -> None:
        from sim_fidelity_interfaces.msg import ResponsibilityChange

        from ...simulator.ros.convert import time_msg
        self._transfers.publish(ResponsibilityChange(
            stamp=time_msg(transfer.time), entity=transfer.entity, attribute=transfer.attribute,
            from_model=transfer.from_model, to_model=transfer.to_model, cause=transfer.cause))
        if transfer.attribute == "pose":
            from .holder_markers import holder_marker_array
            self.holders[transfer.entity] = transfer.to_model
            if not transfer.to_model:
                del self.holders[transfer.entity]
            self._markers.publish(holder_marker_array(self.holders, self.models,
                                                      time_msg(transfer.time)))

    def on_event(self, time: float, model: str, event: str, data: Mapping[str, Any]) -> None:
        from .convert import event_msg
        self._events.publish(event_msg(model, time, event, data))

    def close(self) -> None:
        for publisher in [*self._outputs.values(), self._transfers, self._events, self._markers]:
            self.node.destroy_publisher(publisher)


def scene_of(req) -> dict[str, SceneObject]:
    """The StartEnsemble request's objects; ValueError naming the field that does not fit."""
    from ...simulator.ros.convert import pose_array
    n = len(req.objects)
    for field in ("types", "poses"):
        given = len(getattr(req, field))
        if given not in (0, n):
            raise ValueError(f"{given} {field} for {n} objects: give one per object or none")
    if len(set(req.objects)) != n:
        raise ValueError("objects: a name is given twice")
    return {name: SceneObject(req.types[i] if req.types else "",
                              pose_array(req.poses[i]) if req.poses else None)
            for i, name in enumerate(req.objects)}


def discard(conductor: Conductor) -> None:
    """Stop the models of an ensemble that could not start (connections they opened close)."""
    for model in conductor.models.values():
        try:
            model.stop()
        except Exception:  # a model never started may refuse to stop; the others still go
            pass


class Run:
    """One run of the ensemble: the conductor, its data source and log, on a thread."""

    def __init__(self, conductor: Conductor, source, duration: float | None, log, publications,
                 on_end):
        """``on_end(run)`` is called on the run's thread once it ended and the log is closed."""
        self.conductor, self.source, self.log = conductor, source, log
        self._on_end = on_end
        self.publications = publications
        self.report: RunReport | None = None
        self.error: BaseException | None = None
        self.ended = ""  # why the run ended
        self._duration = duration
        self._stop_called = False
        self._closed = False
        self.thread = threading.Thread(target=self._run, daemon=True, name="ensemble_run")

    def _run(self) -> None:
        try:
            self.report = self.conductor.run(self._duration, self.source)
            self.ended = "stop called" if self._stop_called else "the data or the duration ended"
        except BaseException as e:  # reported by ~/stop and in the node's log
            self.error = e
            self.ended = f"failed: {e}"
        finally:
            self.log.close()
            self._on_end(self)

    def stop(self) -> None:
        """Ask the run to end and wait for it (the models stopped, the log closed)."""
        from ..data_sources import LiveSource
        if self.thread.is_alive():
            self._stop_called = True
            self.conductor.request_stop()
            if isinstance(self.source, LiveSource):
                self.source.close()
            self.thread.join(STOP_WAIT_S)
        if not self._closed and not self.thread.is_alive():
            self._closed = True
            self.publications.close()


class ConductorNode:
    """The rclpy adapter: services, live subscriptions and the current run."""

    def __init__(self, node, config: EnsembleConfig, p: dict):
        from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
        from rclpy.qos import DurabilityPolicy, QoSProfile
        from sensor_msgs.msg import JointState
        from std_msgs.msg import Bool

        from sim_fidelity_interfaces.msg import ActionAnnotation
        from sim_fidelity_interfaces.srv import ActivateTrigger, StartEnsemble, StopEnsemble

        self.node, self.config, self.p = node, config, p
        self.log = node.get_logger()
        self.lock = threading.Lock()  # one start/stop at a time
        self.run: Run | None = None
        self.started_wall = 0.0
        self._running = node.create_publisher(
            Bool, "~/running", QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL))
        self._running.publish(Bool(data=False))
        services = MutuallyExclusiveCallbackGroup()
        node.create_service(StartEnsemble, "~/start", self._start, callback_group=services)
        node.create_service(StopEnsemble, "~/stop", self._stop, callback_group=services)
        node.create_service(ActivateTrigger, "~/trigger", self._trigger, callback_group=services)
        live = MutuallyExclusiveCallbackGroup()
        node.create_subscription(JointState, p["joint_states"], self._on_joint_state, 50,
                                 callback_group=live)
        node.create_subscription(ActionAnnotation, p["actions"], self._on_action, 50,
                                 callback_group=live)

    # --- start / stop --------------------------------------------------------------------------
    def _start(self, req, res):
        try:
            with self.lock:
                if self.run is not None and self.run.thread.is_alive():
                    raise ConductorError("a run is under way: call ~/stop first")
                if self.run is not None:
                    self.run.stop()  # the finished run's publishers
                self.run = self.start_run(req)
                members = self.run.conductor.models
                res.models = list(members)
                res.model_ids = [int(m.id) for m in members.values()]
                res.success = True
                res.message = f"running {len(members)} models, logging to {self.run.log.path}"
                self.log.info(res.message)
        except (ConductorError, ValueError) as e:
            res.success, res.message = False, str(e)
            self.log.error(f"start: {e}")
        return res

    def start_run(self, req) -> Run:
        """Build and initialise the ensemble for ``req`` and start its thread."""
        from std_msgs.msg import Bool

        from ..data_sources import LiveSource, RecordedSource
        from ..log import BagLog

        kinds = type(req)
        scene = scene_of(req)
        if req.source == kinds.SOURCE_BAG:
            if not req.bag:
                raise ValueError("source is SOURCE_BAG but no bag is given")
            source = RecordedSource(req.bag)
        elif req.source == kinds.SOURCE_LIVE:
            source = LiveSource()
        elif req.source == kinds.SOURCE_NONE:
            source = None
        else:
            raise ValueError(f"source {req.source} is none of SOURCE_NONE (0), SOURCE_LIVE (1), "
                             "SOURCE_BAG (2)")
        duration = req.duration if req.duration > 0 else None
        if source is None and duration is None:
            source = LiveSource()  # no data: runs until ~/stop
        conductor = self.config.build(remote_models(self.config, self.p["timeout"]))
        if req.source == kinds.SOURCE_LIVE:
            conductor.realtime = True  # live data: the ensemble keeps pace with the robot
        try:
            self.config.initialise(conductor, scene)
        except ConductorError as e:
            discard(conductor)
            if isinstance(e, ConductorConfigError):
                raise
            raise ConductorConfigError(self.config.file, "models", str(e)) from e
        try:
            log = BagLog(req.log or self.p["log"]
                         or f"conductor_{time.strftime('%Y%m%d_%H%M%S')}.mcap")
        except ConductorError:
            discard(conductor)
            raise
        publications = Publications(self.node, list(conductor.models))
        conductor.add_listener(log)  # each told the initial allocation first
        conductor.add_listener(publications)
        run = Run(conductor, source, duration, log, publications, self._run_ended)
        self.started_wall = time.monotonic()
        self._running.publish(Bool(data=True))
        run.thread.start()
        return run

    def _run_ended(self, run: Run) -> None:
        from std_msgs.msg import Bool
        if run.error is not None:
            self.log.error(f"the run {run.ended}")
        self._running.publish(Bool(data=False))

    def _stop(self, req, res):
        with self.lock:
            run = self.run
            if run is None:
                res.success, res.message = False, "no run was started"
                return res
            run.stop()
            if run.thread.is_alive():
                res.success = False
                res.message = f"the run did not end within {STOP_WAIT_S:g} s"
                return res
        report = run.report or run.conductor.report()
        res.sim_time, res.steps = float(report.time), int(report.ticks)
        res.transfers = len(report.transfers)
        res.log = str(run.log.path)
        res.success = run.error is None
        res.message = f"run ended ({run.ended}) at t = {report.time:.3f} s"
        self.log.info(res.message)
        return res

    def autostart(self) -> None:
        """Start a run (the ``bag`` parameter's, else live) as soon as the node spins, so that
        a signal during the start finds the run to stop; a failed start ends the node."""
        from rclpy.clock import Clock, ClockType

        from sim_fidelity_interfaces.srv import StartEnsemble

        def once() -> None:
            timer.cancel()
            kinds = StartEnsemble.Request
            request = kinds(source=kinds.SOURCE_BAG if self.p["bag"] else kinds.SOURCE_LIVE,
                            bag=self.p["bag"], duration=self.p["duration"])
            response = self._start(request, StartEnsemble.Response())
            if not response.success:
                raise ConductorError(f"autostart: {response.message}")

        timer = self.node.create_timer(0.0, once, clock=Clock(clock_type=ClockType.STEADY_TIME))

    def stop_on_shutdown(self) -> int:
        """The node's clean-up: end a run under way; exit code 0."""
        with self.lock:
            if self.run is not None:
                self.run.stop()
        return 0

    # --- triggers --------------------------------------------------------------------------------
    def _trigger(self, req, res):
        run = self.run
        names = {t.name for t in self.config.triggers if t.on.kind == "service"}
        if req.trigger not in names:
            res.success = False
            res.message = (f"no service trigger '{req.trigger}' (service triggers: "
                           f"{', '.join(sorted(names)) or 'none'})")
            return res
        if run is None or not run.thread.is_alive():
            res.success, res.message = False, "the ensemble is not running: call ~/start"
            return res
        if len(req.arg_names) != len(req.arg_values):
            res.success = False
            res.message = (f"{len(req.arg_names)} arg_names but {len(req.arg_values)} "
                           "arg_values")
            return res
        history = run.conductor.handler.history
        seen = len(history)
        run.conductor.call(req.trigger, dict(zip(req.arg_names, req.arg_values)))
        deadline = time.monotonic() + TRIGGER_WAIT_S
        while time.monotonic() < deadline:
            done = [a for a in history[seen:] if a.trigger == req.trigger]
            if done:
                res.success, res.fired = True, done[0].fired
                res.message = "fired" if done[0].fired else f"not fired: {done[0].reason}"
                return res
            if not run.thread.is_alive():
                break
            time.sleep(0.005)
        res.success = False
        res.message = f"the run did not handle the call within {TRIGGER_WAIT_S:g} s"
        return res

    # --- live data -------------------------------------------------------------------------------
    def _live_source(self):
        from ..data_sources import LiveSource
        run = self.run
        if run is not None and isinstance(run.source, LiveSource) and run.thread.is_alive():
            return run.source
        return None

    def _now(self) -> float:
        """Seconds since the run started: live messages' time on the ensemble's time line."""
        return time.monotonic() - self.started_wall

    def _on_joint_state(self, msg) -> None:
        from ..data_sources import joint_state
        source = self._live_source()
        if source is not None:
            source.push(joint_state(self._now(), msg.name, msg.position, msg.velocity,
                                    msg.effort, self.p["joint_states"]))

    def _on_action(self, msg) -> None:
        from ..data_sources import action
        source = self._live_source()
        if source is None:
            return
        if len(msg.arg_names) != len(msg.arg_values):
            self.log.warning(f"action '{msg.operation}': {len(msg.arg_names)} argument names "
                             f"but {len(msg.arg_values)} values; ignored")
            return
        source.push(action(self._now(), msg.operation, dict(zip(msg.arg_names, msg.arg_values)),
                           self.p["actions"]))


def main(args: list[str] | None = None) -> int:
    """console_script ``model_conductor``: ``--ros-args -p config:=ensemble.yaml``."""
    from ...node_parameters import MODEL_CONDUCTOR
    from ...ros_node import run_node
    from ..config import load_config

    def start(node, p: dict, stack):
        if not p["config"]:
            raise ConductorConfigError("<parameters>", "config", "parameter 'config' is empty")
        config = load_config(p["config"])
        adapter = ConductorNode(node, config, p)
        node.get_logger().info(f"ensemble of {len(config.models)} models from {p['config']}")
        if p["autostart"]:
            adapter.autostart()
        return adapter.stop_on_shutdown

    return run_node("model_conductor", MODEL_CONDUCTOR, start, errors=(ConductorError,),
                    threads=2, args=args, use_sim_time=False)


if __name__ == "__main__":
    sys.exit(main())
