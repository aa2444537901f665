"""A model living in another process, as a :class:`~sim_fidelity.model_conductor.model.Model` of
the conductor's process: every call goes to its ``model_node``'s services.

One step is one blocking ``~/step`` call (what service stepping means; a clock-stepped or
free-running remote model is the same call made from the conductor's clock or free thread). The
holders' values the conductor passes with :meth:`follow`, the outputs of other models
(:meth:`read`) and the data-source messages (:meth:`input`) are collected and travel with the next
step; its answer brings the model's values, output and the events it emitted, so :meth:`value`
and :meth:`output` answer from that copy. Registration happens with the first call that needs it,
once the conductor has assigned the id.
"""
from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ...service_handshake import polled, prove_reply_path
from ..errors import ModelError
from ..model import Model, ModelKind, Requirement, RequirementKind, Stepping
from .convert import AttributeValue

if TYPE_CHECKING:
    from ..config import EnsembleConfig

_proxies = itertools.count()


class RemoteModel(Model):
    """A proxy for the model served by ``model_node`` ``node`` (default: ``/<name>``)."""

    def __init__(self, name: str, *, stepping: Stepping = Stepping.SERVICE,
                 period: float | None = None, node: str | None = None, timeout: float = 10.0,
                 domain_id: int | None = None):
        """``timeout``: seconds to wait for the node to appear and for each answer;
        ``domain_id``: talk to a node in another DDS domain (a private rclpy context)."""
        super().__init__(name, stepping=stepping, period=period)
        self.node_name = node or f"/{name}"
        self.timeout = timeout
        self._domain_id = domain_id
        self._ros = None  # the proxy's own rclpy node, created on the first call
        self._registered_as: int | None = None
        self._kind = ModelKind.SIMULATION
        self._unreachable = False
        self._values: dict[tuple[str, str], Any] = {}
        self._output: dict[str, Any] = {}
        self._stale = True  # values/output to be fetched before they are read
        self._pending = threading.Lock()
        self._follow: dict[tuple[str, str], Any] = {}
        self._reads: dict[str, Mapping[str, Any]] = {}
        self._inputs: list[tuple[str, Mapping[str, Any]]] = []
        self._time = 0.0

    # --- plumbing ------------------------------------------------------------------------------
    def _call(self, service: str, srv_type: type, **fields):
        """Call the model node's ``service``; ModelError unless it answers ``success``."""
        if self._ros is None:
            self._ros = _ServiceNode(f"{self.name}_proxy_{os.getpid()}_{next(_proxies)}",
                                     self._domain_id)
        try:
            response = self._ros.call(f"{self.node_name}/{service}", srv_type,
                                      srv_type.Request(**fields), self.timeout, self.name)
        except ModelError:
            self._unreachable = True  # the node is gone or hung; that error was reported
            raise
        if not response.success:
            raise ModelError(self.name, f"{service}: {response.message}")
        return response

    def _register(self) -> None:
        """Register with the model node under the id the conductor assigned (once per id)."""
        from sim_fidelity_interfaces.srv import RegisterModel
        if self._registered_as == self.id and self._registered_as is not None:
            return
        res = self._call("register", RegisterModel, model_id=self.id or 0, name=self.name,
                         stepping=self.stepping.value, period=self.period or 0.0)
        self._kind = ModelKind(res.kind)
        self._registered_as = self.id

    @property  # type: ignore[override]  # the class's kind is the remote model's
    def kind(self) -> ModelKind:
        """Simulation or observer, as the model node answers at registration."""
        self._register()
        return self._kind

    def _refresh(self) -> None:
        from sim_fidelity_interfaces.srv import GetModelState
        if self._stale:
            res = self._call("state", GetModelState)
            self._keep(res.values, res.output)

    def _keep(self, values, output) -> None:
        from .convert import output_of, values_of
        self._values = {(e, a): v for e, a, v in values_of(values)}
        self._output = output_of(output)
        self._stale = False

    # --- initialisation ------------------------------------------------------------------------
    def requires(self) -> Mapping[str, Requirement]:
        from sim_fidelity_interfaces.srv import GetModelParameters
        self._register()
        res = self._call("required_parameters", GetModelParameters)
        return {name: Requirement(RequirementKind(kind), of, optional)
                for name, kind, of, optional in zip(res.names, res.kinds, res.of, res.optional)}

    def initialise(self, parameters: Mapping[str, Any]) -> None:
        from sim_fidelity_interfaces.srv import InitialiseModel

        from .convert import to_json
        self._register()
        self._call("initialise", InitialiseModel, parameters_json=to_json(parameters))
        self._stale = True

    def start(self) -> None:
        from sim_fidelity_interfaces.srv import ModelLifecycle
        self._call("lifecycle", ModelLifecycle, command=ModelLifecycle.Request.START)
        self._stale = True

    def stop(self) -> None:
        """Stop the remote model and close the proxy's node (a node that stopped answering is
        not asked again: its first silence was the error)."""
        from sim_fidelity_interfaces.srv import ModelLifecycle
        try:
            if not self._unreachable:
                self._call("lifecycle", ModelLifecycle, command=ModelLifecycle.Request.STOP)
        finally:
            if self._ros is not None:
                self._ros.close()
                self._ros = None

    # --- time ----------------------------------------------------------------------------------
    def step(self, dt: float) -> None:
        from sim_fidelity_interfaces.srv import StepModel

        from ...simulator.ros.convert import time_msg
        from .convert import event_of, to_json, values_msg
        with self._pending:
            follow: list[AttributeValue] = [(e, a, v) for (e, a), v in self._follow.items()]
            reads, inputs = self._reads, self._inputs
            self._follow, self._reads, self._inputs = {}, {}, []
        res = self._call("step", StepModel, dt=float(dt), stamp=time_msg(self._time),
                         follow=values_msg(follow), reads_json=to_json(reads),
                         inputs_json=to_json(inputs))
        self._time += dt
        self._keep(res.values, res.output)
        for msg in res.events:
            self.emit(*event_of(msg))

    # --- responsibility ------------------------------------------------------------------------
    def represents(self) -> Mapping[str, frozenset[str]]:
        """What the model represents now (it may depend on its initialisation): the pairs of its
        latest values."""
        self._register()
        self._refresh()
        represents: dict[str, set[str]] = {}
        for entity, attribute in self._values:
            represents.setdefault(entity, set()).add(attribute)
        return {e: frozenset(a) for e, a in represents.items()}

    def value(self, entity: str, attribute: str) -> Any:
        self._refresh()
        try:
            return self._values[(entity, attribute)]
        except KeyError:
            raise KeyError(f"{self.name} does not represent {attribute} of {entity}") from None

    def follow(self, entity: str, attribute: str, value: Any) -> None:
        with self._pending:
            self._follow[(entity, attribute)] = value

    def take(self, entity: str, attribute: str, value: Any) -> None:
        self._responsibility("TAKE", entity, attribute, value)

    def release(self, entity: str, attribute: str) -> None:
        self._responsibility("RELEASE", entity, attribute, None)

    def _responsibility(self, action: str, entity: str, attribute: str, value: Any) -> None:
        from sim_fidelity_interfaces.srv import SetResponsibility

        from .convert import to_json
        with self._pending:  # a value collected to follow is void once the holder changes
            self._follow.pop((entity, attribute), None)
        self._call("set_responsibility", SetResponsibility,
                   action=getattr(SetResponsibility.Request, action), entity=entity,
                   attribute=attribute, value_json=to_json(value))
        self._stale = True

    # --- communication -------------------------------------------------------------------------
    def output(self) -> Mapping[str, Any]:
        self._refresh()
        return dict(self._output)

    def read(self, model: str, output: Mapping[str, Any]) -> None:
        with self._pending:
            self._reads[model] = output

    def input(self, topic: str, message: Mapping[str, Any]) -> None:
        with self._pending:
            self._inputs.append((topic, message))

    def on_event(self, event: str, data: Mapping[str, Any]) -> None:
        from sim_fidelity_interfaces.srv import NotifyModel

        from .convert import event_msg
        self._call("notify", NotifyModel, event=event_msg(self.name, self._time, event, data))
        self._stale = True


def remote_models(config: "EnsembleConfig", timeout: float = 10.0) -> dict[str, RemoteModel]:
    """Proxies for the config's ``remote`` models, each for the ``model_node`` its parameter
    ``node`` names (default ``/<name>``): pass them to ``EnsembleConfig.build(models)``."""
    return {spec.name: RemoteModel(spec.name, stepping=spec.stepping, period=spec.period,
                                   node=spec.parameters.get("node"), timeout=timeout)
            for spec in config.models if issubclass(spec.cls, RemoteModel)}


class _ServiceNode:
    """A private rclpy node spun on its own thread, making blocking service calls.

    It ignores the process's ``--ros-args`` (a launch file's ``__node`` remap would rename it).
    """

    def __init__(self, name: str, domain_id: int | None):
        import rclpy
        from rclpy.executors import SingleThreadedExecutor

        self._context = None
        if domain_id is not None:
            self._context = rclpy.Context()
            rclpy.init(context=self._context, domain_id=domain_id)
        elif not rclpy.ok():
            rclpy.init()
        self.node = rclpy.create_node(name, context=self._context, use_global_arguments=False)
        self._clients: dict[str, Any] = {}
        self._executor = SingleThreadedExecutor(context=self._context)
        self._executor.add_node(self.node)
        self._thread = threading.Thread(target=self._spin, daemon=True, name=name)
        self._thread.start()

    def _spin(self) -> None:
        try:
            self._executor.spin()
        except Exception:  # the context shut down underneath the executor
            pass

    def call(self, service: str, srv_type: type, request, timeout: float, model: str):
        """The answer of ``service`` to ``request``; ModelError if it is absent or silent for
        ``timeout`` seconds."""
        client = self._clients.get(service)
        if client is None:
            from rcl_interfaces.srv import GetParameters
            client = self.node.create_client(srv_type, service)
            node = service.rsplit("/", 1)[0]  # every node answers its parameter queries
            if not client.wait_for_service(timeout_sec=timeout):
                self.node.destroy_client(client)
                raise ModelError(model, f"no service {service} within {timeout:g} s "
                                        "(is its model_node running?)")
            if not prove_reply_path(self.node, GetParameters, f"{node}/get_parameters", timeout,
                                    polled):
                self.node.destroy_client(client)
                raise ModelError(model, f"{node} did not answer within {timeout:g} s")
            self._clients[service] = client
        done = threading.Event()
        future = client.call_async(request)
        future.add_done_callback(lambda _f: done.set())
        if not done.wait(timeout):
            client.remove_pending_request(future)
            raise ModelError(model, f"{service} did not answer within {timeout:g} s")
        return future.result()

    def close(self) -> None:
        self._executor.shutdown(timeout_sec=1.0)
        self._thread.join(timeout=2.0)
        self.node.destroy_node()
        if self._context is not None:
            self._context.try_shutdown()

