"""The state spec: which topics and fields make the state, action and reward, and the parameters
of node matching, roll-outs and kernels. See ``docs/reality_gap.md`` for the YAML format.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from .errors import SpecError
from .messages import NUMERIC_TYPES, QUATERNION, field_type, typestore

INTERPOLATIONS = ("hold", "linear")
ANGLES = ("roll", "pitch", "yaw")  # of a geometry_msgs/Quaternion field
GEODETIC = ("east", "north", "up")  # of a sensor_msgs/NavSatFix, in a named origin's ENU plane
CONVERSIONS = ANGLES + GEODETIC
NAVSATFIX = "sensor_msgs/msg/NavSatFix"
REWARD_MODES = ("sum", "hold")
DIVERGENCE_TESTS = ("g-test", "paper")  # divergence.py: per-node G-test / paper's roll-out rule
POSE_COMPONENTS = ("x", "y", "z", "roll", "pitch", "yaw")
TWIST_COMPONENTS = ("vx", "vy", "vz", "wx", "wy", "wz")
SENSOR_VALUE = "value"  # the entity is a settable sensor (simulator/sensor_values.py)
APPLY_COMPONENTS = tuple(f"pose.{c}" for c in POSE_COMPONENTS) + tuple(
    f"twist.{c}" for c in TWIST_COMPONENTS) + (SENSOR_VALUE,)
# how long a sensor-value override holds: while kernels fire (released at the first look with
# none active), or for the sampling period f_k predicts (released before the manager's next look)
HOLD_WHILE_ACTIVE, HOLD_PERIOD = "while_active", "period"
HOLDS = (HOLD_WHILE_ACTIVE, HOLD_PERIOD)

DEFAULTS: dict[str, dict[str, Any]] = {
    "sampling": {"rate_hz": 0.5, "interpolation": "hold"},
    "distance": {"eps_c": 0.1},
    "divergence": {"test": "g-test", "fdr": 0.05, "min_probability_gap": None},
    "rollouts": {"count": 100, "max_steps": 200},
    "kernels": {"sigma": None, "activation_threshold": 0.5, "ridge": 1.0, "min_samples": 2},
}


@dataclass(frozen=True)
class GeoPoint:
    """A named origin of the spec's ``origins``: the local ENU plane's origin on WGS-84."""

    latitude: float  # degrees
    longitude: float  # degrees
    altitude: float  # metres above the ellipsoid


@dataclass(frozen=True)
class Source:
    """One scalar read from a topic: ``field`` of ``type`` on ``topic``, optionally converted."""

    name: str
    topic: str
    type: str
    field: str
    convert: str | None = None  # one of CONVERSIONS
    is_bool: bool = False  # bool fields are always sampled with hold
    origin: GeoPoint | None = None  # the ENU plane of a GEODETIC conversion
    periodic: bool = False  # an angle in radians that wraps at +-pi (state components only)


@dataclass(frozen=True)
class ApplyTarget:
    """State component ``index`` is written to ``component`` of ``entity`` in the simulator."""

    index: int
    entity: str
    component: str  # one of APPLY_COMPONENTS; "value": the entity is a settable sensor
    hold: str = HOLD_WHILE_ACTIVE  # value targets: one of HOLDS


@dataclass(frozen=True)
class Spec:
    """A parsed, validated state spec. Build it with :func:`load_spec` or :meth:`from_dict`."""

    state: tuple[Source, ...]
    weights: np.ndarray  # (d,) the w_i of c(s, s')
    action: tuple[Source, ...]
    action_grids: tuple[np.ndarray, ...]  # per component: representative values
    action_edges: tuple[np.ndarray | None, ...]  # per component: bin edges, None for values
    reward: Source | None
    reward_mode: str
    rate_hz: float
    interpolation: str
    eps_c: float
    divergence_test: str  # one of DIVERGENCE_TESTS
    fdr: float | None  # g-test: false-discovery rate of the per-node tests (divergence.py)
    min_probability_gap: float | None  # paper: the differing states' probability gap needed
    rollouts: int
    max_steps: int
    sigma: float
    activation_threshold: float
    ridge: float  # weight of the simulation prior in each kernel's fit, in samples
    min_samples: int
    apply: tuple[ApplyTarget, ...]
    raw: dict  # the normalised dict this spec was built from (defaults filled in)

    @property
    def state_names(self) -> list[str]:
        return [s.name for s in self.state]

    @property
    def periodic(self) -> np.ndarray:
        """``(d,)`` bool: the state components declared ``periodic`` (angles wrapping at +-pi)."""
        return np.array([s.periodic for s in self.state], dtype=bool)

    @property
    def action_names(self) -> list[str]:
        return [a.name for a in self.action]

    @property
    def n_actions(self) -> int:
        return int(np.prod([len(g) for g in self.action_grids]))

    @property
    def hash(self) -> str:
        """sha256 of the normalised spec; kernels files record it."""
        text = json.dumps(self.raw, sort_keys=True, separators=(",", ":"))
        return "sha256:" + hashlib.sha256(text.encode()).hexdigest()

    def action_values(self) -> np.ndarray:
        """``(n_actions, m)`` representative continuous value of every discrete action id."""
        mesh = np.meshgrid(*self.action_grids, indexing="ij")
        return np.stack([g.ravel() for g in mesh], axis=-1)

    def discretise(self, u: np.ndarray) -> np.ndarray:
        """Discrete action ids of continuous actions ``u`` ``(n, m)`` (or one ``(m,)``)."""
        u = np.asarray(u, dtype=float)
        flat = np.atleast_2d(u)
        idx = []
        for j, (grid, edges) in enumerate(zip(self.action_grids, self.action_edges)):
            col = flat[:, j]
            if edges is None:  # nearest listed value
                idx.append(np.abs(col[:, None] - grid[None, :]).argmin(axis=1))
            else:  # bin by edges; values outside fall into the end bins
                idx.append(np.clip(np.searchsorted(edges, col, side="right") - 1, 0,
                                   len(grid) - 1))
        ids = np.ravel_multi_index(tuple(idx), [len(g) for g in self.action_grids])
        return ids if u.ndim == 2 else ids[0]

    @classmethod
    def from_dict(cls, raw: dict, where: str = "<spec>") -> "Spec":
        return _parse(raw, where)


def load_spec(path: str | Path) -> Spec:
    """Read and validate a spec YAML file; raises SpecError naming the file and the entry."""
    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise SpecError(f"cannot read spec {path}: {exc}") from exc
    return _parse(raw, str(path))


# --- parsing -----------------------------------------------------------------------------------

def _fail(where: str, msg: str, topic: str = "", field: str = "") -> SpecError:
    return SpecError(f"spec {where}: {msg}", topic=topic, field=field)


def _number(where: str, section: dict, key: str, kind=float, positive: bool = True):
    value = section[key]
    try:
        out = kind(value)
    except (TypeError, ValueError, OverflowError):
        raise _fail(where, f"'{key}' must be a finite number, got {value!r}") from None
    if (isinstance(out, float) and not np.isfinite(out)) or (positive and not out > 0):
        raise _fail(where, f"'{key}' must be {'> 0' if positive else 'finite'}, got {value!r}")
    return out


def _origins(where: str, raw: Any) -> dict[str, GeoPoint]:
    """The spec's ``origins: {name: {latitude, longitude, altitude}}``."""
    if raw is None:
        return {}
    keys = {"latitude", "longitude", "altitude"}
    if not isinstance(raw, dict) or not all(isinstance(v, dict) and set(v) == keys
                                            for v in raw.values()):
        raise _fail(where, "'origins' must map names to {latitude, longitude, altitude}")
    out = {}
    for name, v in raw.items():
        point = GeoPoint(*(_number(where, v, k, positive=False)
                           for k in ("latitude", "longitude", "altitude")))
        if not (-90 <= point.latitude <= 90 and -180 <= point.longitude <= 180):
            raise _fail(where, f"origin '{name}': latitude or longitude out of range")
        out[str(name)] = point
    return out


def _source(where: str, entry: Any, label: str, allow_convert: bool = True,
            origins: dict[str, GeoPoint] | None = None) -> Source:
    if not isinstance(entry, dict):
        raise _fail(where, f"{label} must be a mapping with topic, type and field")
    geodetic = entry.get("convert") in GEODETIC  # the field may be empty: the message itself
    missing = [k for k in ("topic", "type", "field") if not entry.get(k)
               and not (geodetic and k == "field")]
    if missing:
        raise _fail(where, f"{label} lacks {', '.join(missing)}", topic=entry.get("topic", ""),
                    field=entry.get("field", ""))
    topic, msgtype = str(entry["topic"]), str(entry["type"])
    path = str(entry.get("field") or "")
    try:
        leaf = field_type(msgtype, path) if path else msgtype
        if msgtype not in typestore().fielddefs:
            raise SpecError(f"unknown message type '{msgtype}'")
    except SpecError as exc:
        raise _fail(where, f"{label}: {exc}", topic=topic, field=path) from None
    convert = entry.get("convert")
    origin = None
    if convert is not None:
        if not allow_convert or convert not in CONVERSIONS:
            raise _fail(where, f"{label}: convert must be one of {CONVERSIONS}, got {convert!r}",
                        topic=topic, field=path)
        if geodetic:
            if leaf != NAVSATFIX:
                raise _fail(where, f"{label}: convert '{convert}' needs a {NAVSATFIX} (field "
                            f"empty for the message itself), '{path}' is {leaf}",
                            topic=topic, field=path)
            origin = (origins or {}).get(entry.get("origin"))
            if origin is None:
                raise _fail(where, f"{label}: convert '{convert}' needs 'origin' naming one of "
                            f"the spec's origins {sorted(origins or {})}", topic=topic, field=path)
        elif leaf != QUATERNION:
            raise _fail(where, f"{label}: convert '{convert}' needs a {QUATERNION} field, "
                        f"'{path}' is {leaf}", topic=topic, field=path)
    elif leaf not in NUMERIC_TYPES:
        raise _fail(where, f"{label}: field '{path}' is {leaf}, not a number "
                    "(give a numeric leaf, or convert for quaternions)", topic=topic, field=path)
    return Source(name=str(entry.get("name", path)), topic=topic, type=msgtype, field=path,
                  convert=convert, is_bool=leaf == "bool", origin=origin)


def _periodic(where: str, entry: dict, src: Source, label: str) -> Source:
    """``src`` with the entry's ``periodic`` flag, checked: a YAML boolean, only on a component
    that is an angle in radians able to wrap at +-pi (roll, yaw, or a plain numeric field)."""
    flag = entry.get("periodic", False)
    if not isinstance(flag, bool):
        raise _fail(where, f"{label} '{src.name}': 'periodic' must be true or false, got "
                    f"{flag!r}", topic=src.topic, field=src.field)
    if not flag:
        return src
    what = None
    if src.is_bool:
        what = "a bool"
    elif src.convert == "pitch":
        what = "pitch, which lies in [-pi/2, pi/2] and never wraps"
    elif src.convert in GEODETIC:
        what = f"'{src.convert}', a distance in metres"
    if what:
        raise _fail(where, f"{label} '{src.name}': 'periodic' is for angles in radians that wrap "
                    f"at +-pi (convert roll or yaw, or a numeric field); this one is {what}",
                    topic=src.topic, field=src.field)
    return replace(src, periodic=True)


def _action_grid(where: str, entry: dict, src: Source) -> tuple[np.ndarray, np.ndarray | None]:
    has_values, has_bins = "values" in entry, "bins" in entry
    if has_values == has_bins:
        raise _fail(where, f"action '{src.name}' needs exactly one of 'values' or 'bins'",
                    topic=src.topic, field=src.field)
    key = "values" if has_values else "bins"
    try:
        arr = np.asarray(entry[key], dtype=float)
    except (TypeError, ValueError):
        raise _fail(where, f"action '{src.name}': '{key}' must be a list of numbers",
                    topic=src.topic, field=src.field) from None
    if arr.ndim != 1 or len(arr) < (1 if has_values else 2) or np.any(np.diff(arr) <= 0):
        raise _fail(where, f"action '{src.name}': '{key}' must be a strictly increasing list"
                    + ("" if has_values else " of at least two edges"),
                    topic=src.topic, field=src.field)
    if has_values:
        return arr, None
    return (arr[:-1] + arr[1:]) / 2, arr


def _divergence(where: str, norm: dict, given: dict) -> tuple[str, float | None, float | None]:
    """The divergence test and its one parameter: ``g-test`` with ``fdr`` in (0, 1), or
    ``paper`` with ``min_probability_gap`` in (0, 1]; the other test's key is an error. Leaves
    ``norm["divergence"]`` holding the test (unless the default) and its parameter only."""
    test = norm["divergence"]["test"]
    if test not in DIVERGENCE_TESTS:
        raise _fail(where, f"divergence.test must be one of {DIVERGENCE_TESTS}, got {test!r}")
    own, other = ("fdr", "min_probability_gap") if test == "g-test" else (
        "min_probability_gap", "fdr")
    if other in given:
        raise _fail(where, f"divergence.{other} does not apply to test '{test}' (it takes "
                    f"'{own}')")
    if test == "paper" and own not in given:
        raise _fail(where, "divergence test 'paper' needs 'min_probability_gap' in (0, 1]: "
                    "how much more likely a differing state must be under one transition "
                    "function than under the other")
    value = _number(where, norm["divergence"], own)
    if test == "g-test" and not value < 1:
        raise _fail(where, f"divergence.fdr must be in (0, 1), got {value!r}")
    if test == "paper" and not value <= 1:
        raise _fail(where, f"divergence.min_probability_gap must be in (0, 1], got {value!r}")
    # the default test stays implicit: specs from before the choice keep their hash (kernels files)
    norm["divergence"] = {own: value} if test == "g-test" else {"test": test, own: value}
    return test, (value if own == "fdr" else None), (value if own != "fdr" else None)


def _parse(raw: Any, where: str) -> Spec:
    if not isinstance(raw, dict):
        raise _fail(where, "the spec must be a YAML mapping")
    unknown = set(raw) - {"state", "action", "reward", "apply", "origins", *DEFAULTS}
    if unknown:
        raise _fail(where, f"unknown section(s) {sorted(unknown)}")
    norm: dict[str, Any] = {}
    for section, defaults in DEFAULTS.items():
        given = raw.get(section) or {}
        if not isinstance(given, dict):
            raise _fail(where, f"section '{section}' must be a mapping")
        extra = set(given) - set(defaults)
        if extra:
            raise _fail(where, f"section '{section}' has unknown key(s) {sorted(extra)}")
        norm[section] = {**defaults, **given}

    states = raw.get("state")
    if not isinstance(states, list) or not states:
        raise _fail(where, "'state' must be a non-empty list of fields")
    origins = _origins(where, raw.get("origins"))
    state = tuple(_periodic(where, e, _source(where, e, f"state[{i}]", origins=origins),
                            f"state[{i}]") for i, e in enumerate(states))
    weights = np.array([_number(where, e, "weight", positive=False) if "weight" in e else 1.0
                        for e in states])
    if np.any(weights < 0) or not np.any(weights > 0):
        raise _fail(where, "state weights must be >= 0 and at least one > 0")
    actions = raw.get("action")
    if not isinstance(actions, list) or not actions:
        raise _fail(where, "'action' must be a non-empty list of fields")
    action = tuple(_source(where, e, f"action[{i}]", allow_convert=False)
                   for i, e in enumerate(actions))
    for i, e in enumerate(actions):
        if "periodic" in e:
            raise _fail(where, f"action[{i}]: 'periodic' is for state components (actions are "
                        "binned or listed values)", topic=action[i].topic, field=action[i].field)
    grids = [_action_grid(where, e, s) for e, s in zip(actions, action)]
    for label, group in (("state", state), ("action", action)):
        names = [s.name for s in group]
        if len(set(names)) != len(names):
            raise _fail(where, f"{label} names must be unique, got {names}")

    reward, reward_mode = None, "sum"
    if raw.get("reward") is not None:
        reward = _source(where, raw["reward"], "reward", allow_convert=False)
        reward_mode = raw["reward"].get("mode", "sum")
        if reward_mode not in REWARD_MODES:
            raise _fail(where, f"reward mode must be one of {REWARD_MODES}",
                        topic=reward.topic, field=reward.field)

    sampling = norm["sampling"]
    if sampling["interpolation"] not in INTERPOLATIONS:
        raise _fail(where, f"sampling.interpolation must be one of {INTERPOLATIONS}, got "
                    f"{sampling['interpolation']!r}")
    eps_c = _number(where, norm["distance"], "eps_c")
    kern = norm["kernels"]
    sigma = eps_c if kern["sigma"] is None else _number(where, kern, "sigma")
    threshold = _number(where, kern, "activation_threshold")
    if threshold >= 1:
        raise _fail(where, "kernels.activation_threshold must be in (0, 1)")
    test, fdr, gap = _divergence(where, norm, raw.get("divergence") or {})
    ridge = _number(where, kern, "ridge")

    names = [s.name for s in state]
    targets = []
    applies = raw.get("apply") or []
    if not isinstance(applies, list):
        raise _fail(where, "'apply' must be a list of {state, entity, component}")
    for i, entry in enumerate(applies):
        if not isinstance(entry, dict) or entry.get("state") not in names:
            raise _fail(where, f"apply[{i}]: 'state' must name a state component {names}")
        if entry.get("component") not in APPLY_COMPONENTS or not entry.get("entity"):
            raise _fail(where, f"apply[{i}]: needs 'entity' and a 'component' in "
                        f"{APPLY_COMPONENTS}")
        hold = entry.get("hold", HOLD_WHILE_ACTIVE)
        if hold not in HOLDS or (hold != HOLD_WHILE_ACTIVE
                                 and entry["component"] != SENSOR_VALUE):
            raise _fail(where, f"apply[{i}]: 'hold' is for 'value' targets and must be one of "
                        f"{HOLDS}, got {hold!r}")
        targets.append(ApplyTarget(names.index(entry["state"]), str(entry["entity"]),
                                   entry["component"], hold))

    norm.update({
        "state": [{"name": s.name, "topic": s.topic, "type": s.type, "field": s.field,
                   **({"convert": s.convert} if s.convert else {}),
                   **({"origin": e["origin"]} if s.origin else {}),
                   **({"periodic": True} if s.periodic else {}), "weight": float(w)}
                  for s, w, e in zip(state, weights, states)],
        "action": [{"name": a.name, "topic": a.topic, "type": a.type, "field": a.field,
                    **({"values": g.tolist()} if e is None else {"bins": e.tolist()})}
                   for a, (g, e) in zip(action, grids)],
        "reward": None if reward is None else {"topic": reward.topic, "type": reward.type,
                                               "field": reward.field, "mode": reward_mode},
        "apply": [{"state": names[t.index], "entity": t.entity, "component": t.component,
                   **({"hold": t.hold} if t.hold != HOLD_WHILE_ACTIVE else {})}
                  for t in targets],
    })
    norm["kernels"]["sigma"] = sigma
    if origins:
        norm["origins"] = {k: vars(v) for k, v in origins.items()}
    return Spec(state=state, weights=weights, action=action,
                action_grids=tuple(g for g, _ in grids), action_edges=tuple(e for _, e in grids),
                reward=reward, reward_mode=reward_mode,
                rate_hz=_number(where, sampling, "rate_hz"),
                interpolation=sampling["interpolation"], eps_c=eps_c,
                divergence_test=test, fdr=fdr, min_probability_gap=gap,
                rollouts=_number(where, norm["rollouts"], "count", int),
                max_steps=_number(where, norm["rollouts"], "max_steps", int),
                sigma=sigma, activation_threshold=threshold, ridge=ridge,
                min_samples=_number(where, kern, "min_samples", int),
                apply=tuple(targets), raw=norm)
