"""Triggers (paper 003, section 3.3.1) and the trigger process that runs them.

A trigger is activated by

* ``topic``: a model's cyclic output, when the expression ``value`` over it *becomes* true (a rising
  edge: an output that stays true activates once);
* ``service``: a call of :meth:`Conductor.call` with its service name (the node's trigger
  service);
* ``action``: an action annotation (``operation`` and named arguments) on the data source's
  action-sequence topic;
* ``event``: an event a model emitted (optionally only from one model).

Then it binds its ``let`` variables (expressions, often evaluators), checks its ``when``
preconditions (all must be true; else it does nothing and the history says which failed), and
runs its effects in order: ``transfer`` a responsibility, ``notify`` a model of an event, ``set``
variables, ``call`` another service trigger.

Names in expressions: the ensemble's variables, every model's name (its latest output, a mapping:
``monitor.near``), the ``let`` names bound before, and per activation ``output`` (topic), ``event``
(the event's data with ``event`` and ``model``), ``operation`` and ``args`` (action), ``args``
(service). Effect fields that are strings ``$name`` take a variable's value.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .errors import ConductorError, ExpressionError
from .expressions import SAFE_FUNCTIONS, Expression

if TYPE_CHECKING:
    from .conductor import Conductor, Signal

KINDS = ("topic", "service", "action", "event")
SIGNAL_OF = {"topic": "output", "service": "call", "action": "action", "event": "event"}
SCOPE_OF = {"topic": ("output",), "service": ("args",), "action": ("operation", "args"),
            "event": ("event",)}
EFFECTS = ("transfer", "notify", "set", "call")


@dataclass(frozen=True)
class Activation:
    kind: str  # one of KINDS
    source: str  # the model (topic), service name, operation (action) or event name
    model: str | None = None  # event: only this model's events
    value: Expression | None = None  # topic: activates when this becomes true


@dataclass(frozen=True)
class Effect:
    kind: str  # one of EFFECTS
    fields: Mapping[str, Any]  # transfer: entity, attribute, to; notify: model, event, data;
    # set: name -> Expression; call: service, args


@dataclass(frozen=True)
class NamedExpression:
    """An evaluator defined in the config: an expression with parameters."""

    name: str
    params: tuple[str, ...]
    expression: Expression


@dataclass
class Trigger:
    name: str
    on: Activation
    let: dict[str, Expression] = field(default_factory=dict)
    when: tuple[Expression, ...] = ()
    do: tuple[Effect, ...] = ()


@dataclass(frozen=True)
class Activity:
    """One activation of a trigger, as the history keeps it."""

    time: float
    trigger: str
    fired: bool
    reason: str  # "" when fired, else the precondition that failed
    bindings: Mapping[str, Any]


class TriggerProcess:
    """Runs the triggers on the conductor's signals (the conductor's ``handler``)."""

    def __init__(self, triggers: list[Trigger], functions: Mapping[str, Callable[..., Any]],
                 named: Mapping[str, NamedExpression] | None = None):
        """``functions``: evaluator name -> callable(context, ...); ``named``: config
        evaluators."""
        self.triggers = list(triggers)
        self.functions = dict(functions)
        self.named = dict(named or {})
        self.history: list[Activity] = []
        self._edge: dict[str, bool] = {}

    @property
    def wants_outputs(self) -> bool:
        """Only topic triggers need every output as a signal."""
        return any(t.on.kind == "topic" for t in self.triggers)

    def handle(self, conductor: "Conductor", signal: "Signal") -> None:
        for trigger in self.triggers:
            names = self._matches(trigger, signal)
            if names is not None:
                self._activate(conductor, trigger, names, signal.time)

    def _matches(self, trigger: Trigger, signal: "Signal") -> dict[str, Any] | None:
        """The activation's names when ``signal`` activates ``trigger``, else None."""
        on = trigger.on
        if SIGNAL_OF[on.kind] != signal.kind:
            return None
        data = dict(signal.data)
        if on.kind == "service":
            return {"args": data} if signal.source == on.source else None
        if on.kind == "action":
            if signal.source != on.source:
                return None
            return {"operation": signal.source, "args": dict(data.get("args", {}))}
        if on.kind == "event":
            if data.get("event") != on.source or (on.model and signal.source != on.model):
                return None
            return {"event": {**data, "model": signal.source}}
        if signal.source != on.source:
            return None
        names = {"output": data}
        return names

    def _activate(self, conductor: "Conductor", trigger: Trigger, names: dict[str, Any],
                  time: float) -> None:
        scope = _Scope(conductor, names)
        if trigger.on.kind == "topic":
            value = bool(self._eval(conductor, trigger.on.value, scope, trigger))
            rising = value and not self._edge.get(trigger.name, False)
            self._edge[trigger.name] = value
            if not rising:
                return
        for name, expression in trigger.let.items():
            scope.local[name] = self._eval(conductor, expression, scope, trigger)
        bindings = {k: v for k, v in scope.local.items() if k not in names}
        for condition in trigger.when:
            if not self._eval(conductor, condition, scope, trigger):
                self.history.append(Activity(time, trigger.name, False,
                                             f"'{condition.text}' is false", bindings))
                return
        self.history.append(Activity(time, trigger.name, True, "", bindings))
        for effect in trigger.do:
            self._run(conductor, trigger, effect, scope)

    def _run(self, conductor: "Conductor", trigger: Trigger, effect: Effect,
             scope: "_Scope") -> None:
        f = effect.fields
        if effect.kind == "transfer":
            entity = _resolve(f["entity"], scope, trigger, "entity")
            to = _resolve(f["to"], scope, trigger, "to")
            attribute = _resolve(f.get("attribute", "pose"), scope, trigger, "attribute")
            conductor.transfer(str(entity), str(attribute), str(to), cause=trigger.name)
        elif effect.kind == "notify":
            data = _resolve(f.get("data") or {}, scope, trigger, "data")
            conductor.notify(str(_resolve(f["model"], scope, trigger, "model")),
                             str(_resolve(f["event"], scope, trigger, "event")), data)
        elif effect.kind == "set":
            for name, expression in f.items():
                value = self._eval(conductor, expression, scope, trigger)
                conductor.variables[name] = value
                scope.local[name] = value
        elif effect.kind == "call":
            args = _resolve(f.get("args") or {}, scope, trigger, "args")
            conductor.call(str(f["service"]), args)

    def _eval(self, conductor: "Conductor", expression: Expression, scope: Mapping[str, Any],
              trigger: Trigger) -> Any:
        def call(name: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
            return self._call(conductor, name, args, kwargs)
        try:
            return expression.evaluate(scope, call)
        except ExpressionError as e:
            raise ExpressionError(f"trigger '{trigger.name}': {e}") from None

    def _call(self, conductor: "Conductor", name: str, args: list[Any],
              kwargs: dict[str, Any]) -> Any:
        if name in self.named:
            named = self.named[name]
            if kwargs or len(args) != len(named.params):
                raise ExpressionError(f"evaluator '{name}' takes {len(named.params)} "
                                      f"positional argument(s) ({', '.join(named.params)})")
            scope = _Scope(conductor, dict(zip(named.params, args)))
            return named.expression.evaluate(
                scope, lambda n, a, k: self._call(conductor, n, a, k))
        if name in self.functions:
            return self.functions[name](conductor, *args, **kwargs)
        if name in SAFE_FUNCTIONS:
            return SAFE_FUNCTIONS[name](*args, **kwargs)
        raise ExpressionError(f"unknown function '{name}'")


class _Scope(Mapping[str, Any]):
    """Names of an expression: locals, then the ensemble's variables, then the models' latest
    outputs (fetched when read)."""

    def __init__(self, conductor: "Conductor", local: dict[str, Any]):
        self.conductor = conductor
        self.local = dict(local)

    def __getitem__(self, key: str) -> Any:
        if key in self.local:
            return self.local[key]
        if key in self.conductor.variables:
            return self.conductor.variables[key]
        if key in self.conductor.models:
            return self.conductor.output(key)
        raise KeyError(key)

    def __contains__(self, key: object) -> bool:
        return (key in self.local or key in self.conductor.variables
                or key in self.conductor.models)

    def __iter__(self) -> Iterator[str]:
        return iter({**dict.fromkeys(self.conductor.models), **self.conductor.variables,
                     **self.local})

    def __len__(self) -> int:
        return len(list(iter(self)))


def _resolve(value: Any, scope: Mapping[str, Any], trigger: Trigger, key: str) -> Any:
    """An effect field: ``$name`` is the variable's value, through nested mappings and lists
    (as :func:`template_names` checks them at load); anything else itself."""
    if isinstance(value, Mapping):
        return {k: _resolve(v, scope, trigger, f"{key}.{k}") for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_resolve(v, scope, trigger, f"{key}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, str) and value.startswith("$"):
        name = value[1:]
        if name not in scope:
            raise ConductorError(f"trigger '{trigger.name}': effect field '{key}' names "
                                 f"undefined variable '{name}'")
        resolved = scope[name]
        if resolved is None:
            raise ConductorError(f"trigger '{trigger.name}': effect field '{key}': variable "
                                 f"'{name}' is None")
        return resolved
    return value


def template_names(value: Any) -> set[str]:
    """Variables a field refers to (``$name``), through nested mappings and lists."""
    if isinstance(value, str) and value.startswith("$"):
        return {value[1:]}
    if isinstance(value, Mapping):
        return set().union(*(template_names(v) for v in value.values())) if value else set()
    if isinstance(value, (list, tuple)):
        return set().union(*(template_names(v) for v in value)) if value else set()
    return set()
