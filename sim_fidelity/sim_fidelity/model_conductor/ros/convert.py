"""Conversions between the model interface's Python values and its ROS messages.

Attribute values, parameters, model outputs and events travel as JSON inside the messages
(``sim_fidelity_interfaces/msg/AttributeValues``, ``ModelOutput``, ``ModelEvent``); numpy arrays
become lists on the way out, and ``pose``/``twist`` values become ``(7,)``/``(6,)`` arrays again on
the way in. An output's ``poses`` and ``twists`` (entity -> array) go into the typed fields of
``ModelOutput``, everything else into its ``values_json``.
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from sim_fidelity_interfaces.msg import AttributeValues, ModelEvent, ModelOutput

from ...simulator.ros.convert import pose_array, pose_msg, time_msg, twist_array, twist_msg
from ..model import POSE, TWIST

AttributeValue = tuple[str, str, Any]  # (entity, attribute, value)


def _plain(value: Any) -> Any:
    """JSON's fallback for numpy arrays and scalars."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def to_json(value: Any) -> str:
    """``value`` as JSON text; numpy arrays as lists."""
    return json.dumps(value, default=_plain)


def from_json(text: str, what: str, default: Any = None) -> Any:
    """Parse JSON ``text`` ("" gives ``default``); a ValueError naming ``what`` if it is not."""
    if not text:
        return default
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"{what}: not JSON ({e})") from None


def attribute_value(attribute: str, value: Any) -> Any:
    """A value as received: ``pose`` and ``twist`` as float arrays, anything else unchanged."""
    return np.asarray(value, float) if attribute in (POSE, TWIST) else value


def values_msg(values: Iterable[AttributeValue]) -> AttributeValues:
    entities, attributes, plain = [], [], []
    for entity, attribute, value in values:
        entities.append(entity)
        attributes.append(attribute)
        plain.append(value)
    return AttributeValues(entities=entities, attributes=attributes, values_json=to_json(plain))


def values_of(msg: AttributeValues) -> list[AttributeValue]:
    values = from_json(msg.values_json, "values_json", [])
    if not isinstance(values, list) or not (len(values) == len(msg.entities)
                                            == len(msg.attributes)):
        raise ValueError(f"AttributeValues: {len(msg.entities)} entities, "
                         f"{len(msg.attributes)} attributes, values_json {msg.values_json!r}")
    return [(e, a, attribute_value(a, v)) for e, a, v in zip(msg.entities, msg.attributes, values)]


def output_msg(model: str, model_id: int, time: float, output: Mapping[str, Any]) -> ModelOutput:
    """A model's cyclic output as a ModelOutput at simulated ``time``."""
    poses: Mapping[str, Any] = output.get("poses", {})
    twists: Mapping[str, Any] = output.get("twists", {})
    entities = list(poses)
    if twists and set(twists) != set(entities):
        raise ValueError(f"output of {model}: twists of {sorted(twists)} but poses of "
                         f"{sorted(entities)} (give a twist for every pose, or none)")
    rest = {k: v for k, v in output.items() if k not in ("poses", "twists")}
    return ModelOutput(stamp=time_msg(time), model=model, model_id=model_id, entities=entities,
                       poses=[pose_msg(poses[e]) for e in entities],
                       twists=[twist_msg(twists[e]) for e in entities] if twists else [],
                       values_json=to_json(rest))


def output_of(msg: ModelOutput) -> dict[str, Any]:
    """A ModelOutput as the output mapping the model gave (``poses``/``twists`` present only when
    the message has entities)."""
    output = dict(from_json(msg.values_json, f"output of {msg.model}", {}))
    if msg.entities:
        output["poses"] = {e: pose_array(p) for e, p in zip(msg.entities, msg.poses)}
        if msg.twists:
            output["twists"] = {e: twist_array(t) for e, t in zip(msg.entities, msg.twists)}
    return output


def event_msg(model: str, time: float, event: str, data: Mapping[str, Any]) -> ModelEvent:
    return ModelEvent(stamp=time_msg(time), model=model, event=event, data_json=to_json(data))


def event_of(msg: ModelEvent) -> tuple[str, dict[str, Any]]:
    return msg.event, dict(from_json(msg.data_json, f"event {msg.event}", {}))


def with_arrays(output: Mapping[str, Any]) -> dict[str, Any]:
    """An output parsed from JSON with its ``poses`` and ``twists`` as arrays again."""
    out = dict(output)
    for key in ("poses", "twists"):
        if key in out:
            out[key] = {e: np.asarray(v, float) for e, v in out[key].items()}
    return out
