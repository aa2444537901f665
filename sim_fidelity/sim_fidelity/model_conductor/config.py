"""The ensemble configuration (paper 003, section 3.4): a YAML file, checked whole at load.

.. code-block:: yaml

    conductor: {step: 0.01, realtime: false, twist_follows_pose: true, parallel: true}
    models:
      world: {type: simulator, main: true, parameters: {world: drop.sdf}}
      hand: {type: carrier, stepping: service, period: 0.01, parameters: {entities: [ball]}}
      monitor: {type: "my_pkg.models:GraspMonitor", stepping: clock}
    scene: {ball: {type: ball, pose: [0, 0, 1.5]}}  # initial objects (x y z [rpy | quaternion])
    responsibilities: {ball: {pose: world}}        # initial holders beyond the defaults
    variables: {reach: 0.15}
    evaluators:                                      # named expressions
      target: "nearest_object('hand_link', reach)"
      near: {params: [a, b], expression: "distance(a, b) < reach"}
    triggers:
      grasp:
        on: {action: move_hand}                      # or {topic: monitor, value: "monitor.near"},
                                                     # {service: grasp}, {event: near, model: m}
        let: {obj: "target()"}
        when: ["obj != None", "is_free('hand')"]
        do:
          - transfer: {entity: $obj, attribute: pose, to: hand}
          - notify: {model: monitor, event: grasped, data: {object: $obj}}
          - set: {holding: "obj"}
          - call: {service: log_grasp}

Model types: ``simulator`` (:class:`SimulatorModel` on a world file), ``carrier``,
``integrator``, ``proximity_monitor`` (:mod:`demo_models`), the entry-point group
``sim_fidelity.models``, or ``package.module:Class``. Every problem raises
:class:`ConductorConfigError` naming the file, the key path and the reason: unknown keys, models,
model types, evaluators and variables; transfers to models that do not exist; calls of triggers
that are no service triggers; cycles of ``call`` effects; one trigger moving one pair twice.
"""
from __future__ import annotations

import importlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from ..simulator import poses as pose_math
from . import evaluators as evaluator_registry
from .conductor import Conductor, SceneObject
from .demo_models import Carrier, Integrator, ProximityMonitor
from .errors import (
    ConductorConfigError,
    ConductorError,
    ExpressionError,
    ModelError,
    ResponsibilityError,
)
from .expressions import SAFE_FUNCTIONS, Expression, parse
from .model import Model, Stepping
from .simulation_model import SimulatorModel
from .triggers import (
    EFFECTS,
    KINDS,
    SCOPE_OF,
    Activation,
    Effect,
    NamedExpression,
    Trigger,
    TriggerProcess,
    template_names,
)

MODEL_ENTRY_POINT_GROUP = "sim_fidelity.models"
BUILTIN_MODELS: dict[str, type[Model]] = {
    "simulator": SimulatorModel, "carrier": Carrier, "integrator": Integrator,
    "proximity_monitor": ProximityMonitor}
TOP_KEYS = ("conductor", "models", "scene", "responsibilities", "variables", "evaluators",
            "triggers")
MODEL_KEYS = ("type", "main", "stepping", "period", "parameters")
CONDUCTOR_KEYS = ("step", "realtime", "twist_follows_pose", "parallel")
TRIGGER_KEYS = ("on", "let", "when", "do")


@dataclass(frozen=True)
class ModelSpec:
    name: str
    cls: type[Model]
    main: bool
    stepping: Stepping
    period: float | None
    parameters: Mapping[str, Any]


@dataclass
class EnsembleConfig:
    file: str
    base_dir: Path
    step: float = 0.01
    realtime: bool = False
    twist_follows_pose: bool = True
    parallel: bool = True
    models: list[ModelSpec] = field(default_factory=list)
    responsibilities: dict[tuple[str, str], str] = field(default_factory=dict)
    variables: dict[str, Any] = field(default_factory=dict)
    named: dict[str, NamedExpression] = field(default_factory=dict)
    triggers: list[Trigger] = field(default_factory=list)
    scene: dict[str, SceneObject] = field(default_factory=dict)

    def build(self, models: Mapping[str, Model] | None = None) -> Conductor:
        """A conductor with the models registered (``models`` replaces configured ones by name,
        e.g. a ROS proxy) and the trigger process installed; not yet initialised."""
        conductor = Conductor(step=self.step, realtime=self.realtime, base_dir=self.base_dir,
                              twist_follows_pose=self.twist_follows_pose,
                              parallel=self.parallel)
        given = dict(models or {})
        for spec in self.models:
            model = given.pop(spec.name, None) or spec.cls(spec.name, stepping=spec.stepping,
                                                           period=spec.period)
            conductor.register(model, main=spec.main, parameters=spec.parameters)
        if given:
            raise ConductorConfigError(self.file, "models", f"models given but not configured: "
                                       f"{', '.join(sorted(given))}")
        conductor.variables.update(self.variables)
        functions = {name: evaluator_registry.evaluator(name) for name in self._used_functions()}
        conductor.handler = TriggerProcess(self.triggers, functions, self.named)
        return conductor

    def initialise(self, conductor: Conductor,
                   scene: Mapping[str, SceneObject] | None = None) -> None:
        """Initialise with the configured responsibilities and scene (objects of ``scene``, e.g.
        a start request's, replace the config's); a pair no model represents is a config error
        naming its key."""
        try:
            conductor.initialise({**self.scene, **(scene or {})}, self.responsibilities)
        except ResponsibilityError as e:
            key = "scene" if str(e).startswith("scene object") else "responsibilities"
            raise ConductorConfigError(self.file, key, str(e)) from None

    def _used_functions(self) -> set[str]:
        used = set()
        for expression in self._expressions():
            used |= expression.functions
        return used & evaluator_registry.known()

    def _expressions(self) -> list[Expression]:
        out = [n.expression for n in self.named.values()]
        for t in self.triggers:
            out += [*t.let.values(), *t.when] + ([t.on.value] if t.on.value else [])
            out += [e for effect in t.do if effect.kind == "set" for e in effect.fields.values()]
        return out


def load_config(path: str | Path) -> EnsembleConfig:
    """Read and check an ensemble YAML file."""
    path = Path(path)
    if not path.is_file():
        raise ConductorConfigError(str(path), "", "no such file")
    return parse_config_text(path.read_text(), str(path), path.parent.resolve())


def parse_config_text(text: str, file: str = "<config>", base_dir: Path | None = None
                      ) -> EnsembleConfig:
    """Check a configuration given as YAML text (YAML 1.2 booleans: ``on:`` is a key)."""
    try:
        data = yaml.load(text, Loader=_Loader)
    except yaml.YAMLError as e:
        raise ConductorConfigError(file, "", f"not valid YAML: {e}") from None
    return parse_config(data, file, base_dir)


def parse_config(data: Any, file: str = "<config>", base_dir: Path | None = None
                 ) -> EnsembleConfig:
    """Check a parsed configuration; ``file`` names it in errors."""
    p = _Parser(file)
    data = p.mapping(data, "", TOP_KEYS)
    config = EnsembleConfig(file, base_dir or Path.cwd())
    settings = p.mapping(data.get("conductor") or {}, "conductor", CONDUCTOR_KEYS)
    config.step = p.positive(settings.get("step", 0.01), "conductor.step")
    config.realtime = p.boolean(settings.get("realtime", False), "conductor.realtime")
    config.twist_follows_pose = p.boolean(settings.get("twist_follows_pose", True),
                                          "conductor.twist_follows_pose")
    config.parallel = p.boolean(settings.get("parallel", True), "conductor.parallel")
    config.models = p.models(data.get("models"))
    names = {m.name for m in config.models}
    config.responsibilities = p.responsibilities(data.get("responsibilities") or {}, names)
    config.variables = dict(p.mapping(data.get("variables") or {}, "variables"))
    config.named = p.named(data.get("evaluators") or {})
    config.triggers = p.triggers(data.get("triggers") or {}, config)
    config.scene = p.scene(data.get("scene") or {})
    return config


class _Loader(yaml.SafeLoader):
    """YAML with the booleans of YAML 1.2 (true/false only): ``on:`` stays a key, as do
    ``yes``/``no``/``off``."""


_BOOL = "tag:yaml.org,2002:bool"
_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != _BOOL]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}
_Loader.add_implicit_resolver(_BOOL, re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
                              list("tTfF"))


class _Parser:
    def __init__(self, file: str):
        self.file = file

    def error(self, key: str, message: str) -> ConductorConfigError:
        return ConductorConfigError(self.file, key, message)

    def mapping(self, value: Any, key: str, allowed: tuple[str, ...] | None = None
                ) -> Mapping[str, Any]:
        if not isinstance(value, Mapping):
            raise self.error(key, f"must be a mapping; got {type(value).__name__}")
        if allowed is not None:
            unknown = [str(k) for k in value if k not in allowed]
            if unknown:
                raise self.error(f"{key}.{unknown[0]}" if key else unknown[0],
                                 f"unknown key (allowed: {', '.join(allowed)})")
        return value

    def positive(self, value: Any, key: str) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
            raise self.error(key, f"must be a positive number; got {value!r}")
        return float(value)

    def boolean(self, value: Any, key: str) -> bool:
        if not isinstance(value, bool):
            raise self.error(key, f"must be true or false; got {value!r}")
        return value

    def expression(self, text: Any, key: str) -> Expression:
        try:
            return parse(text)
        except ExpressionError as e:
            raise self.error(key, str(e)) from None

    # --- sections ----------------------------------------------------------------------------
    def models(self, value: Any) -> list[ModelSpec]:
        if not value:
            raise self.error("models", "an ensemble needs models (one of them main: true)")
        specs = []
        for name, entry in self.mapping(value, "models").items():
            key = f"models.{name}"
            entry = self.mapping(entry, key, MODEL_KEYS)
            if "type" not in entry:
                raise self.error(f"{key}.type", "missing: the model's type")
            cls = self.model_class(entry["type"], f"{key}.type")
            try:
                stepping = Stepping(entry.get("stepping", "service"))
            except ValueError:
                raise self.error(f"{key}.stepping", f"{entry['stepping']!r} is not a stepping "
                                 f"mode ({', '.join(s.value for s in Stepping)})") from None
            period = entry.get("period")
            if period is not None:
                period = self.positive(period, f"{key}.period")
            main = self.boolean(entry.get("main", False), f"{key}.main")
            if main and stepping != Stepping.SERVICE:
                raise self.error(f"{key}.stepping", "the main model times the others: it is "
                                 "stepped by the conductor (service)")
            parameters = self.mapping(entry.get("parameters") or {}, f"{key}.parameters")
            specs.append(ModelSpec(str(name), cls, main, stepping, period, dict(parameters)))
        mains = [s.name for s in specs if s.main]
        if len(mains) != 1:
            raise self.error("models", f"exactly one model must be main: true; "
                             f"{'none is' if not mains else ', '.join(mains) + ' are'}")
        return specs

    def model_class(self, name: Any, key: str) -> type[Model]:
        name = str(name)
        cls: Any = BUILTIN_MODELS.get(name)
        if cls is None:
            eps = [ep for ep in entry_points(group=MODEL_ENTRY_POINT_GROUP) if ep.name == name]
            try:
                if eps:
                    cls = eps[0].load()
                elif ":" in name:
                    module, _, attr = name.partition(":")
                    cls = getattr(importlib.import_module(module), attr)
            except (ImportError, AttributeError) as e:
                raise self.error(key, f"model type '{name}' cannot be loaded: {e}") from None
        if cls is None:
            known = sorted(set(BUILTIN_MODELS) | {ep.name for ep in
                                                   entry_points(group=MODEL_ENTRY_POINT_GROUP)})
            raise self.error(key, f"unknown model type '{name}' (known: {', '.join(known)}, or "
                             "package.module:Class)")
        if not (isinstance(cls, type) and issubclass(cls, Model)):
            raise self.error(key, f"model type '{name}' is not a Model subclass")
        return cls

    def responsibilities(self, value: Any, models: set[str]) -> dict[tuple[str, str], str]:
        out = {}
        for entity, attributes in self.mapping(value, "responsibilities").items():
            key = f"responsibilities.{entity}"
            for attribute, model in self.mapping(attributes, key).items():
                if model not in models:
                    raise self.error(f"{key}.{attribute}", f"unknown model '{model}' (models: "
                                     f"{', '.join(sorted(models))})")
                out[(str(entity), str(attribute))] = str(model)
        return out

    def scene(self, value: Any) -> dict[str, SceneObject]:
        """Initial objects: ``name: {type: ..., pose: [x, y, z] | [x, y, z, roll, pitch, yaw] |
        [x, y, z, qx, qy, qz, qw]}``."""
        out = {}
        for name, entry in self.mapping(value, "scene").items():
            key = f"scene.{name}"
            entry = self.mapping(entry, key, ("type", "pose"))
            pose = None
            if entry.get("pose") is not None:
                raw = entry["pose"]
                numbers = (isinstance(raw, list) and len(raw) in (3, 6, 7)
                           and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                   for v in raw))
                if not numbers:
                    raise self.error(f"{key}.pose", "must be 3 (x y z), 6 (x y z roll pitch "
                                     f"yaw) or 7 (x y z qx qy qz qw) numbers; got {raw!r}")
                xyz = np.asarray(raw[:3], float)
                if len(raw) == 3:
                    quat = np.array([0.0, 0.0, 0.0, 1.0])
                elif len(raw) == 6:
                    quat = pose_math.rpy_to_quat(*raw[3:])
                else:
                    quat = np.asarray(raw[3:], float)
                    norm = np.linalg.norm(quat)
                    if not norm > 1e-9:
                        raise self.error(f"{key}.pose", "the quaternion is zero")
                    quat = quat / norm
                pose = np.concatenate([xyz, quat])
            out[str(name)] = SceneObject(str(entry.get("type") or ""), pose)
        return out

    def named(self, value: Any) -> dict[str, NamedExpression]:
        out = {}
        for name, entry in self.mapping(value, "evaluators").items():
            key = f"evaluators.{name}"
            if isinstance(entry, Mapping):
                entry = self.mapping(entry, key, ("params", "expression"))
                if "expression" not in entry:
                    raise self.error(f"{key}.expression", "missing")
                params = tuple(str(p) for p in entry.get("params") or ())
                text, key = entry["expression"], f"{key}.expression"
            else:
                params, text = (), entry
            out[str(name)] = NamedExpression(str(name), params, self.expression(text, key))
        return out

    def triggers(self, value: Any, config: EnsembleConfig) -> list[Trigger]:
        models = {m.name for m in config.models}
        functions = evaluator_registry.known() | set(SAFE_FUNCTIONS) | set(config.named)
        globals_ = set(config.variables) | models
        for name, named in config.named.items():
            self.names(named.expression, globals_ | set(named.params), functions,
                       f"evaluators.{name}")
        triggers = []
        for name, entry in self.mapping(value, "triggers").items():
            key = f"triggers.{name}"
            entry = self.mapping(entry, key, TRIGGER_KEYS)
            on = self.activation(entry.get("on"), f"{key}.on", models)
            scope = globals_ | set(SCOPE_OF[on.kind])
            if on.value is not None:
                self.names(on.value, scope, functions, f"{key}.on.value")
            let = {}
            for var, text in self.mapping(entry.get("let") or {}, f"{key}.let").items():
                let[str(var)] = self.expression(text, f"{key}.let.{var}")
                self.names(let[str(var)], scope, functions, f"{key}.let.{var}")
                scope = scope | {str(var)}
            when = entry.get("when") or []
            when = [when] if not isinstance(when, list) else when
            conditions = []
            for i, text in enumerate(when):
                conditions.append(self.expression(text, f"{key}.when[{i}]"))
                self.names(conditions[-1], scope, functions, f"{key}.when[{i}]")
            effects = self.effects(entry.get("do"), f"{key}.do", scope, functions, models,
                                   set(config.variables))
            triggers.append(Trigger(str(name), on, let, tuple(conditions), tuple(effects)))
        self.calls(triggers)
        return triggers

    def activation(self, value: Any, key: str, models: set[str]) -> Activation:
        if not isinstance(value, Mapping):
            raise self.error(key, f"must be a mapping with one of: {', '.join(KINDS)}")
        kinds = [k for k in KINDS if k in value]
        if len(kinds) != 1:
            raise self.error(key, f"needs exactly one of {', '.join(KINDS)}; got "
                             f"{', '.join(map(str, value)) or 'none'}")
        kind = kinds[0]
        allowed = {"topic": ("topic", "value"), "service": ("service",),
                   "action": ("action",), "event": ("event", "model")}[kind]
        self.mapping(value, key, allowed)
        source = str(value[kind])
        model = value.get("model")
        if kind == "topic":
            if source not in models:
                raise self.error(f"{key}.topic", f"unknown model '{source}'")
            if "value" not in value:
                raise self.error(f"{key}.value", "missing: when the output activates the "
                                 "trigger (e.g. \"monitor.near\")")
            return Activation(kind, source, value=self.expression(value["value"],
                                                                  f"{key}.value"))
        if model is not None and model not in models:
            raise self.error(f"{key}.model", f"unknown model '{model}'")
        return Activation(kind, source, model=str(model) if model else None)

    def effects(self, value: Any, key: str, scope: set[str], functions: set[str],
                models: set[str], variables: set[str]) -> list[Effect]:
        if not isinstance(value, list) or not value:
            raise self.error(key, "must be a non-empty list of effects "
                             f"({', '.join(EFFECTS)})")
        effects = []
        moved: dict[tuple[str, str], int] = {}
        for i, item in enumerate(value):
            ekey = f"{key}[{i}]"
            if not isinstance(item, Mapping) or len(item) != 1 or next(iter(item)) not in EFFECTS:
                raise self.error(ekey, f"an effect is one of {', '.join(EFFECTS)}; got {item!r}")
            kind, fields = next(iter(item.items()))
            ekey = f"{ekey}.{kind}"
            if kind == "set":
                fields = self.mapping(fields, ekey)
                parsed = {}
                for name, text in fields.items():
                    if name not in variables:
                        raise self.error(f"{ekey}.{name}", "sets an undeclared variable: "
                                         "declare it with its initial value under variables")
                    parsed[str(name)] = self.expression(text, f"{ekey}.{name}")
                    self.names(parsed[str(name)], scope, functions, f"{ekey}.{name}")
                effects.append(Effect(kind, parsed))
                continue
            allowed = {"transfer": ("entity", "attribute", "to"),
                       "notify": ("model", "event", "data"), "call": ("service", "args")}[kind]
            fields = dict(self.mapping(fields, ekey, allowed))
            required = {"transfer": ("entity", "to"), "notify": ("model", "event"),
                        "call": ("service",)}[kind]
            for name in required:
                if name not in fields:
                    raise self.error(f"{ekey}.{name}", "missing")
            for name in sorted(template_names(fields)):
                if name not in scope:
                    raise self.error(ekey, f"refers to undefined variable '${name}'")
            target = fields.get("to") if kind == "transfer" else fields.get("model")
            if isinstance(target, str) and not target.startswith("$") and target not in models:
                raise self.error(f"{ekey}.{'to' if kind == 'transfer' else 'model'}",
                                 f"unknown model '{target}' (models: "
                                 f"{', '.join(sorted(models))})")
            if kind == "transfer" and not str(fields["entity"]).startswith("$"):
                pair = (str(fields["entity"]), str(fields.get("attribute", "pose")))
                if pair in moved:
                    raise self.error(ekey, f"{pair[1]} of {pair[0]} is transferred twice in one "
                                     f"activation (first in effect {moved[pair]}): a cycle")
                moved[pair] = i
            effects.append(Effect(kind, fields))
        return effects

    def names(self, expression: Expression, scope: set[str], functions: set[str],
              key: str) -> None:
        for name in sorted(expression.names - scope):
            raise self.error(key, f"undefined variable '{name}' in '{expression.text}' "
                             f"(defined here: {', '.join(sorted(scope)) or 'none'})")
        for name in sorted(expression.functions - functions):
            raise self.error(key, f"undefined evaluator '{name}' in '{expression.text}' "
                             f"(evaluators: {', '.join(sorted(functions - set(SAFE_FUNCTIONS)))})")

    def calls(self, triggers: list[Trigger]) -> None:
        """Every ``call`` names a service trigger; calls form no cycle."""
        services: dict[str, list[str]] = {}
        for t in triggers:
            if t.on.kind == "service":
                services.setdefault(t.on.source, []).append(t.name)
        graph: dict[str, list[str]] = {}
        for t in triggers:
            for i, effect in enumerate(t.do):
                if effect.kind != "call":
                    continue
                service = str(effect.fields["service"])
                if service not in services:
                    raise self.error(f"triggers.{t.name}.do[{i}].call.service",
                                     f"no trigger is activated by service '{service}'")
                graph.setdefault(t.name, []).extend(services[service])
        state: dict[str, int] = {}

        def visit(node: str, path: list[str]) -> None:
            state[node] = 1
            for nxt in graph.get(node, []):
                if state.get(nxt) == 1:  # on the current path: a cycle
                    cycle = path[path.index(nxt):] + [nxt]
                    raise self.error(f"triggers.{cycle[0]}.do", "calls form a cycle: "
                                     f"{' -> '.join(cycle)}")
                if nxt not in state:
                    visit(nxt, path + [nxt])
            state[node] = 2

        for t in triggers:
            if t.name not in state:
                visit(t.name, [t.name])


def build_conductor(path: str | Path, scene=None, models: Mapping[str, Model] | None = None
                    ) -> tuple[Conductor, EnsembleConfig]:
    """Load the file, build and initialise the conductor (errors name file and key)."""
    config = load_config(path)
    conductor = config.build(models)
    try:
        config.initialise(conductor, scene)
    except ConductorConfigError:
        raise
    except ModelError as e:
        raise ConductorConfigError(config.file, f"models.{e.model}", str(e)) from e
    except ConductorError as e:
        raise ConductorConfigError(config.file, "models", str(e)) from e
    return conductor, config
