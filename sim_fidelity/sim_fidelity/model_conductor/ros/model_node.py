"""``model_node``: one model of an ensemble in a node of its own (paper 003, section 3.2: a model
may live in its own process).

Hosts any Python :class:`~sim_fidelity.model_conductor.model.Model` class, named as in the ensemble
config (a built-in type, an entry point of ``sim_fidelity.models``, or ``package.module:Class``),
and serves its interface to a conductor (:class:`~.remote_model.RemoteModel` is the conductor's
side), under the node's name:

* ``~/register`` (RegisterModel), ``~/required_parameters`` (GetModelParameters; the node's own
  ``~/get_parameters`` is rclpy's parameter service), ``~/initialise`` (InitialiseModel),
  ``~/lifecycle`` (ModelLifecycle: start, stop);
* ``~/step`` (StepModel): applies the followed values, other models' outputs and the data-source
  messages the request carries, steps the model and answers with its values, output and events;
* ``~/state`` (GetModelState), ``~/set_responsibility`` (SetResponsibility: take, release),
  ``~/notify`` (NotifyModel: an event for the model).

Topics: ``~/output`` (ModelOutput, after every step: the model's cyclic output) and ``~/events``
(ModelEvent, as the model emits them). A model call that raises answers ``success: false`` with
the error; the node keeps serving. When the node stops, a started model is stopped.
Parameters: ``node_parameters.MODEL_NODE``.
"""
from __future__ import annotations

import importlib
import sys
import threading
from collections.abc import Callable, Mapping
from importlib.metadata import entry_points
from typing import Any

from ..errors import ConductorConfigError
from ..model import POSE, Model, RequirementKind, Stepping

MODEL_GROUP = "sim_fidelity.models"


def load_model_class(spec: str) -> type[Model]:
    """The Model class named by ``spec``: a built-in type of the ensemble config (``carrier``,
    ...), an entry point of ``sim_fidelity.models`` or ``package.module:Class``; a
    ConductorConfigError naming the parameter if there is none."""
    def bad(message: str) -> ConductorConfigError:
        return ConductorConfigError("<parameters>", "model", message)

    if not spec:
        raise bad("parameter 'model' is empty (an entry point of sim_fidelity.models or "
                  "package.module:Class)")
    from ..config import BUILTIN_MODELS
    if spec in BUILTIN_MODELS:
        return BUILTIN_MODELS[spec]
    if ":" in spec:
        module, _, name = spec.partition(":")
        try:
            cls = getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError) as e:
            raise bad(f"cannot load '{spec}': {e}") from None
    else:
        found = entry_points(group=MODEL_GROUP, name=spec)
        if not found:
            known = sorted(ep.name for ep in entry_points(group=MODEL_GROUP))
            raise bad(f"unknown model type '{spec}' (entry points: {', '.join(known) or 'none'};"
                      " or give package.module:Class)")
        cls = next(iter(found)).load()
    if not (isinstance(cls, type) and issubclass(cls, Model)):
        raise bad(f"'{spec}' is not a Model class")
    return cls


class ModelHost:
    """Serves one model's interface on ``node`` (one call at a time)."""

    def __init__(self, node, model: Model):
        from sim_fidelity_interfaces.msg import ModelEvent, ModelOutput
        from sim_fidelity_interfaces.srv import (
            GetModelParameters,
            GetModelState,
            InitialiseModel,
            ModelLifecycle,
            NotifyModel,
            RegisterModel,
            SetResponsibility,
            StepModel,
        )

        self.node, self.model = node, model
        self.lock = threading.Lock()  # one model call at a time
        self._events_lock = threading.Lock()
        self._events: list = []  # ModelEvent messages emitted since the last step's answer
        self.time = 0.0  # the ensemble's simulated time after the last step
        self.started = False
        model.emit = self._emit
        self._output = node.create_publisher(ModelOutput, "~/output", 10)
        self._event_pub = node.create_publisher(ModelEvent, "~/events", 10)
        handlers: dict[str, tuple[type, Callable]] = {
            "register": (RegisterModel, self._register),
            "required_parameters": (GetModelParameters, self._required_parameters),
            "initialise": (InitialiseModel, self._initialise),
            "lifecycle": (ModelLifecycle, self._lifecycle),
            "step": (StepModel, self._step),
            "state": (GetModelState, self._state),
            "set_responsibility": (SetResponsibility, self._set_responsibility),
            "notify": (NotifyModel, self._notify),
        }
        self._services = [node.create_service(kind, f"~/{name}", self._guarded(name, handler))
                          for name, (kind, handler) in handlers.items()]

    def _guarded(self, name: str, handler: Callable) -> Callable:
        """Run ``handler`` under the lock; a model error becomes ``success: false``."""
        def serve(req, res):
            with self.lock:
                try:
                    handler(req, res)
                    res.success = True
                except Exception as e:  # the hosted model is any user code: answer, keep serving
                    res.success, res.message = False, f"{type(e).__name__}: {e}"
                    self.node.get_logger().warning(f"{name}: {res.message}")
            return res
        return serve

    def _emit(self, event: str, data: Mapping[str, Any]) -> None:
        from .convert import event_msg
        msg = event_msg(self.model.name, self.time, event, data)
        with self._events_lock:
            self._events.append(msg)
        self._event_pub.publish(msg)

    # --- life cycle ----------------------------------------------------------------------------
    def _register(self, req, res) -> None:
        model = self.model
        model.id = req.model_id
        model.name = req.name or model.name
        model.stepping = Stepping(req.stepping) if req.stepping else model.stepping
        model.period = req.period or None
        res.kind = model.kind.value
        pairs = [(e, a) for e, attributes in model.represents().items()
                 for a in sorted(attributes)]
        res.entities = [e for e, _ in pairs]
        res.attributes = [a for _, a in pairs]

    def _required_parameters(self, req, res) -> None:
        needs = self.model.requires()
        res.names = list(needs)
        res.kinds = [r.kind.value for r in needs.values()]
        res.of = [r.of for r in needs.values()]
        res.optional = [r.optional for r in needs.values()]

    def _initialise(self, req, res) -> None:
        from .convert import attribute_value, from_json
        given = from_json(req.parameters_json, "parameters_json", {})
        kinds = {name: r.kind for name, r in self.model.requires().items()}
        self.model.initialise({name: attribute_value(POSE, v)
                               if kinds.get(name) is RequirementKind.POSE else v
                               for name, v in given.items()})

    def _lifecycle(self, req, res) -> None:
        if req.command == type(req).START:
            self.model.start()
            self.started = True
        elif req.command == type(req).STOP:
            self.started = False
            self.model.stop()
        else:
            raise ValueError(f"unknown lifecycle command {req.command} (START=1, STOP=2)")

    # --- time ----------------------------------------------------------------------------------
    def _step(self, req, res) -> None:
        from ...simulator.ros.convert import time_seconds
        from .convert import from_json, values_of, with_arrays
        model = self.model
        model.follow_all(values_of(req.follow))
        for other, output in from_json(req.reads_json, "reads_json", {}).items():
            model.read(other, with_arrays(output))
        for topic, message in from_json(req.inputs_json, "inputs_json", []):
            model.input(topic, message)
        model.step(req.dt)
        self.time = time_seconds(req.stamp) + req.dt
        self._fill_state(res)
        with self._events_lock:
            res.events, self._events = self._events, []
        self._output.publish(res.output)

    def _state(self, req, res) -> None:
        self._fill_state(res)

    def _fill_state(self, res) -> None:
        from .convert import output_msg, values_msg
        model = self.model
        res.values = values_msg((e, a, model.value(e, a))
                                for e, attributes in model.represents().items()
                                for a in sorted(attributes))
        res.output = output_msg(model.name, model.id or 0, self.time, model.output())

    # --- responsibility and events -------------------------------------------------------------
    def _set_responsibility(self, req, res) -> None:
        from .convert import attribute_value, from_json
        if req.action == type(req).TAKE:
            value = from_json(req.value_json, "value_json")
            self.model.take(req.entity, req.attribute, attribute_value(req.attribute, value))
        elif req.action == type(req).RELEASE:
            self.model.release(req.entity, req.attribute)
        else:
            raise ValueError(f"unknown responsibility action {req.action} (TAKE=1, RELEASE=2)")

    def _notify(self, req, res) -> None:
        from .convert import event_of
        self.model.on_event(*event_of(req.event))

    def close(self) -> int:
        """Stop a model that is still running (the conductor did not stop it); exit code 0."""
        with self.lock:
            if self.started:
                self.started = False
                self.model.stop()
        return 0


def main(args: list[str] | None = None) -> int:
    """console_script ``model_node``: ``--ros-args -p model:=package.module:Class -p name:=...``."""
    import yaml

    from ...node_parameters import MODEL_NODE
    from ...ros_node import run_node
    from ..errors import ConductorError

    def start(node, p: dict, stack):
        cls = load_model_class(p["model"])
        try:
            arguments = yaml.safe_load(p["arguments"]) or {}
        except yaml.YAMLError as e:
            raise ConductorConfigError("<parameters>", "arguments", f"not YAML: {e}") from None
        if not isinstance(arguments, dict):
            raise ConductorConfigError("<parameters>", "arguments",
                                       f"must be a mapping of keyword arguments; got {arguments!r}")
        try:
            model = cls(p["name"] or node.get_name(), **arguments)
        except TypeError as e:  # arguments the class does not take
            raise ConductorConfigError("<parameters>", "arguments", str(e)) from None
        host = ModelHost(node, model)
        node.get_logger().info(f"model '{model.name}' ({p['model']}) serving on "
                               f"{node.get_fully_qualified_name()}")
        return host.close

    return run_node("model_node", MODEL_NODE, start, errors=(ConductorError,), args=args,
                    use_sim_time=False)


if __name__ == "__main__":
    sys.exit(main())
