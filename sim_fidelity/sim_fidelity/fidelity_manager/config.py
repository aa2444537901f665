"""One YAML file per scene: object types, tree groups, signalers and presets, validated on load.

Layout (see ``config/stack_test.yaml``)::

    object_types:            # optional; override or add to the built-in shape/joint/sensor/script
      crate: {kinds: [model], medium: [dynamics], low: [dynamics, collision]}
    signalers:
      packets: {type: packet, robot: robot, robot_half_extents: [.2, .2, .2],
                half_extents: [.1, .1, .1]}
    trees:
      boxes:                 # a tree group
        signaler: packets
        # full-match regex; its groups make the key (one tree per key)
        objects: [{type: shape, pattern: 'box_(\\d+)'}]
        name: '{group}/{key}'     # optional tree-name template
        anchor: ''                # optional anchor template ('{key}' allowed)
    presets:
      adfi-1: {signalers: {packets: {inflation: 1.0}}}     # parameter overrides per signaler
      hifi: {enabled: false}                               # manager off
    default_preset: adfi-1

Built-in presets (a config may redefine them): ``hifi`` = manager off; ``adfi-1``/``adfi-2``/
``adfi-3`` set ``inflation`` 1.00/0.50/0.01 on every packet signaler. Every error is a
:class:`ConfigError` naming the file and the key path, on load (structure, types, level and lever
names, signaler types and parameters for every preset) and when expanded against a simulator
(patterns that match nothing, bad robot or reference names).
"""
from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ..simulator.protocol import EntityKind, Lever, Simulator
from .errors import ConfigError, ParamError, TreeExpansionError, UnknownNameError
from .objects import BUILTIN_TYPES, ObjectType
from .signalers import ADFI_INFLATION, Signaler, signaler_class
from .signalers.base import check_params
from .trees import ObjectSpec, TreeGroupSpec, TreeSet, expand_group

TOP_KEYS = {"object_types", "signalers", "trees", "presets", "default_preset"}
HIFI = "hifi"


@dataclass(frozen=True)
class Preset:
    """Manager on or off, and parameter overrides per signaler name."""

    enabled: bool = True
    overrides: dict | None = None


def builtin_presets(signalers: dict[str, dict]) -> dict[str, Preset]:
    """``hifi`` and the paper's AdFi presets for the packet signalers of a config."""
    packets = [n for n, s in signalers.items() if s.get("type") == "packet"]
    presets = {HIFI: Preset(enabled=False)}
    for name, inflation in ADFI_INFLATION.items():
        presets[name] = Preset(True, {n: {"inflation": inflation} for n in packets})
    return presets


@dataclass
class FidelityConfig:
    """A validated configuration; :meth:`build` expands it against a simulator."""

    file: str
    object_types: dict[str, ObjectType]
    signalers: dict[str, dict]  # name -> raw mapping with "type" and parameters
    groups: list[TreeGroupSpec]
    presets: dict[str, Preset]
    default_preset: str

    # --- loading -------------------------------------------------------------------------------
    @classmethod
    def load(cls, path: str | Path) -> "FidelityConfig":
        """Read and validate a YAML file."""
        path = str(path)
        try:
            text = Path(path).read_text()
        except OSError as e:
            raise ConfigError(path, "", f"cannot read: {e.strerror}") from None
        return cls.from_text(text, path)

    @classmethod
    def from_text(cls, text: str, file: str = "<string>") -> "FidelityConfig":
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as e:
            raise ConfigError(file, "", f"not valid YAML: {e}") from None
        return cls.from_dict(data, file)

    @classmethod
    def from_dict(cls, data: Any, file: str = "<dict>") -> "FidelityConfig":
        v = _Validator(file)
        data = v.mapping(data, "")
        v.no_unknown(data, TOP_KEYS, "")
        types = dict(BUILTIN_TYPES)
        for name, spec in v.mapping(data.get("object_types", {}), "object_types").items():
            types[name] = v.object_type(name, spec, f"object_types.{name}")
        signalers = {n: v.mapping(s, f"signalers.{n}")
                     for n, s in v.mapping(data.get("signalers", {}), "signalers").items()}
        classes = {}
        for name, spec in signalers.items():
            kind = v.typed(spec.get("type"), str, f"signalers.{name}.type", "a signaler type name")
            try:
                classes[name] = signaler_class(kind)
            except UnknownNameError as e:
                raise ConfigError(file, f"signalers.{name}.type", str(e)) from None
        trees = v.mapping(data.get("trees"), "trees")
        if not trees:
            raise ConfigError(file, "trees", "at least one tree group is needed")
        groups = [v.group(g, spec, types, signalers) for g, spec in trees.items()]
        presets = builtin_presets(signalers)
        for name, spec in v.mapping(data.get("presets", {}), "presets").items():
            presets[str(name)] = v.preset(str(name), spec, signalers)
        default = v.typed(data.get("default_preset", HIFI), str, "default_preset", "a preset name")
        if default not in presets:
            raise ConfigError(file, "default_preset", f"unknown preset '{default}' "
                              f"(known: {', '.join(sorted(presets))})")
        config = cls(file, types, signalers, groups, presets, default)
        for preset in presets:  # every preset must give every signaler valid parameters
            for name in signalers:
                config.signaler_params(name, preset, classes[name])
        return config

    # --- resolving and building ----------------------------------------------------------------
    def preset(self, name: str | None) -> Preset:
        name = name or self.default_preset
        if name not in self.presets:
            raise ConfigError(self.file, "presets", f"unknown preset '{name}' "
                              f"(known: {', '.join(sorted(self.presets))})")
        return self.presets[name]

    def signaler_params(self, name: str, preset: str | None,
                        cls: type[Signaler] | None = None) -> dict[str, Any]:
        """Checked parameters of signaler ``name`` under ``preset``."""
        raw = {k: x for k, x in self.signalers[name].items() if k != "type"}
        overrides = (self.preset(preset).overrides or {}).get(name, {})
        where = f"presets.{preset or self.default_preset}.signalers.{name}" if overrides else ""
        cls = cls or signaler_class(self.signalers[name]["type"])
        try:
            return check_params(cls.PARAMS, {**raw, **overrides})
        except ParamError as e:
            key = where if e.key in overrides else f"signalers.{name}"
            raise ConfigError(self.file, f"{key}.{e.key}", str(e)) from None

    def build_trees(self, sim: Simulator) -> TreeSet:
        """Expand the tree groups against the simulator's entities; a pattern whose object type
        needs a lever the simulator has not may match nothing (its trees stay HIGH:
        ``support.py``)."""
        have = sim.features().levers
        optional = frozenset(n for n, t in self.object_types.items() if t.levers - have)
        by_kind: dict[EntityKind, list[str]] = {}

        def entities(kinds: tuple[EntityKind, ...]) -> list[str]:
            for k in kinds:
                if k not in by_kind:
                    by_kind[k] = list(sim.entities(k))
            return [e for k in kinds for e in by_kind[k]]

        trees = []
        for spec in self.groups:
            candidates = {o.type.name: entities(o.type.kinds) for o in spec.objects}
            try:
                trees += expand_group(spec, candidates, optional)
            except TreeExpansionError as e:
                raise ConfigError(self.file, f"trees.{spec.group}.{e.key}", str(e)) from None
        try:
            return TreeSet(trees, list(self.object_types.values()))
        except TreeExpansionError as e:
            raise ConfigError(self.file, "trees", str(e)) from None

    def build_signalers(self, sim: Simulator, trees: TreeSet,
                        preset: str | None) -> dict[str, Signaler]:
        """One signaler per configured name that has trees, with the preset's parameters."""
        out = {}
        for name, spec in self.signalers.items():
            mine = [t for t in trees.trees if t.signaler == name]
            if not mine:
                continue
            cls = signaler_class(spec["type"])
            try:
                out[name] = cls(mine, self.signaler_params(name, preset, cls), sim)
            except ParamError as e:
                key = f"signalers.{name}.{e.key}".rstrip(".")
                raise ConfigError(self.file, key, str(e)) from None
        return out


class _Validator:
    """Structural checks that raise ConfigError with the file and key path."""

    def __init__(self, file: str):
        self.file = file

    def fail(self, key: str, message: str) -> ConfigError:
        return ConfigError(self.file, key, message)

    def typed(self, value: Any, kind: type, key: str, what: str) -> Any:
        if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
            raise self.fail(key, f"expected {what}, got {value!r}")
        return value

    def mapping(self, value: Any, key: str) -> dict:
        if value is None and key:
            raise self.fail(key, "missing (expected a mapping)")
        return self.typed(value, dict, key, "a mapping")

    def no_unknown(self, data: dict, known: set[str], key: str) -> None:
        unknown = sorted(str(k) for k in set(data) - known)
        if unknown:
            where = f"{key}.{unknown[0]}" if key else unknown[0]
            raise self.fail(where, f"unknown key (known: {', '.join(sorted(known))})")

    def regex(self, value: Any, key: str) -> re.Pattern:
        self.typed(value, str, key, "a regex string")
        try:
            return re.compile(value)
        except re.error as e:
            raise self.fail(key, f"bad regex {value!r}: {e}") from None

    def levers(self, value: Any, key: str) -> frozenset[Lever]:
        names = self.typed(value, list, key, "a list of lever names")
        try:
            return frozenset(Lever[str(n).upper()] for n in names)
        except KeyError as e:
            raise self.fail(key, f"unknown lever {e.args[0]!r} (known: "
                                 f"{', '.join(x.name.lower() for x in Lever)})") from None

    def object_type(self, name: str, spec: Any, key: str) -> ObjectType:
        spec = self.mapping(spec, key)
        self.no_unknown(spec, {"kinds", "medium", "low"}, key)
        kinds = self.typed(spec.get("kinds"), list, f"{key}.kinds", "a list of entity kinds")
        try:
            kinds = tuple(EntityKind(str(k).lower()) for k in kinds)
        except ValueError as e:
            raise self.fail(f"{key}.kinds", f"{e} (known: "
                                            f"{', '.join(k.value for k in EntityKind)})") from None
        return ObjectType(name, self.levers(spec.get("medium", []), f"{key}.medium"),
                          self.levers(spec.get("low", []), f"{key}.low"), kinds)

    def group(self, group: str, spec: Any, types: dict[str, ObjectType],
              signalers: dict[str, dict]) -> TreeGroupSpec:
        key = f"trees.{group}"
        spec = self.mapping(spec, key)
        self.no_unknown(spec, {"signaler", "objects", "name", "anchor"}, key)
        signaler = self.typed(spec.get("signaler"), str, f"{key}.signaler", "a signaler name")
        if signaler not in signalers:
            defined = ", ".join(sorted(signalers)) or "none"
            raise self.fail(f"{key}.signaler", f"no signaler '{signaler}' under 'signalers' "
                                               f"(defined: {defined})")
        objects = self.typed(spec.get("objects"), list, f"{key}.objects", "a list of objects")
        if not objects:
            raise self.fail(f"{key}.objects", "a tree group needs at least one object")
        specs = []
        for i, obj in enumerate(objects):
            okey = f"{key}.objects[{i}]"
            obj = self.mapping(obj, okey)
            self.no_unknown(obj, {"type", "pattern"}, okey)
            type_name = self.typed(obj.get("type"), str, f"{okey}.type", "an object type name")
            if type_name not in types:
                raise self.fail(f"{okey}.type", f"unknown object type '{type_name}' "
                                                f"(known: {', '.join(sorted(types))})")
            pattern = self.regex(obj.get("pattern"), f"{okey}.pattern")
            specs.append(ObjectSpec(types[type_name], pattern))
        name = self.typed(spec.get("name", "{group}/{key}"), str, f"{key}.name", "a name template")
        anchor = self.typed(spec.get("anchor", ""), str, f"{key}.anchor", "an anchor template")
        for field, template in (("name", name), ("anchor", anchor)):
            try:
                template.format(group=group, key="k")
            except (KeyError, IndexError, ValueError) as e:
                raise self.fail(f"{key}.{field}", f"bad template {template!r}: only {{group}} and "
                                                  f"{{key}} are allowed ({e})") from None
        return TreeGroupSpec(group, tuple(specs), signaler, name, anchor)

    def preset(self, name: str, spec: Any, signalers: dict[str, dict]) -> Preset:
        key = f"presets.{name}"
        spec = self.mapping(spec, key)
        self.no_unknown(spec, {"enabled", "signalers"}, key)
        enabled = self.typed(spec.get("enabled", True), bool, f"{key}.enabled", "true or false")
        overrides = self.mapping(spec.get("signalers", {}), f"{key}.signalers")
        for sig, params in overrides.items():
            if sig not in signalers:
                raise self.fail(f"{key}.signalers.{sig}", f"no signaler '{sig}' under 'signalers'")
            if "type" in self.mapping(params, f"{key}.signalers.{sig}"):
                raise self.fail(f"{key}.signalers.{sig}.type", "a preset cannot change the type")
        return Preset(enabled, copy.deepcopy(overrides))


__all__ = ["ConfigError", "FidelityConfig", "HIFI", "Preset"]
