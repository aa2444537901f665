"""The model interface (paper 003, Fig. 2): what every member of an ensemble offers the conductor.

Life cycle, driven by the :class:`~sim_fidelity.model_conductor.conductor.Conductor`:

1. **register**: the conductor assigns a unique :attr:`Model.id` and sets :attr:`Model.emit`,
   through which the model notifies the conductor of events (``emit("grasped", {...})``).
2. **parameters**: :meth:`Model.requires` names what the model needs; the conductor resolves each
   :class:`Requirement` (an object's pose or type, another model's id, a config value) and passes
   the values to :meth:`Model.initialise`.
3. **start**, then **step** (simulations predict the next state; observers evaluate predicates on
   the current one) according to the model's :class:`Stepping` mode, and **stop**.
4. **responsibility**: a model *represents* some attributes of some entities
   (:meth:`Model.represents`). For each (entity, attribute) exactly one model *holds* it and
   computes it; every other model that represents it *follows* the holder's value, which the
   conductor passes before each of its steps, all of them in one :meth:`Model.follow_all` (by
   default :meth:`Model.follow` for each). :meth:`Model.take` makes a model the holder, starting
   from the given value; :meth:`Model.release` makes it a follower.
5. **output**: :meth:`Model.output` is the model's cyclic output (published on its topic by the
   ROS adapter); :meth:`Model.read` receives another model's output. The optional keys ``poses``
   (entity -> (7,)) and ``twists`` (entity -> (6,)) are the entities' states; every other key is
   a JSON value. :meth:`Model.input` receives the data source's messages (robot telemetry).

Attribute values: ``pose`` is a ``(7,)`` array ``[x, y, z, qx, qy, qz, qw]`` in the world frame,
``twist`` a ``(6,)`` array ``[vx, vy, vz, wx, wy, wz]``, ``collision`` a bool (does the holder's
geometry of the entity take part in contacts); free-form attributes (``temperature``,
``connected``) take any value a model gives them.
"""
from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

POSE, TWIST, COLLISION = "pose", "twist", "collision"
PHYSICAL_ATTRIBUTES = (POSE, TWIST, COLLISION)


class ModelKind(str, enum.Enum):
    SIMULATION = "simulation"  # predicts the next state
    OBSERVER = "observer"  # evaluates predicates on the current state


class Stepping(str, enum.Enum):
    """How a model is stepped (paper 003, section 3.2)."""

    SERVICE = "service"  # a blocking call per main step: the main model waits for it
    CLOCK = "clock"  # steps on the main model's clock signal; a model that falls behind skips
    FREE = "free"  # no time: runs at its own pace


class RequirementKind(str, enum.Enum):
    POSE = "pose"  # the initial world pose (7,) of the entity named by ``of``
    TYPE = "type"  # the type (model/SDF name) of the entity named by ``of``
    MODEL_ID = "model_id"  # the id the conductor assigned to the model named by ``of``
    VALUE = "value"  # the config value at key ``of`` of the model's ``parameters`` section
    PATH = "path"  # as VALUE, a file path: relative paths resolve against the config file's folder


@dataclass(frozen=True)
class Requirement:
    """One parameter a model needs before it can initialise."""

    kind: RequirementKind
    of: str
    optional: bool = False  # VALUE/PATH only: None when the config does not give it


Emit = Callable[[str, Mapping[str, Any]], None]


def _no_conductor(event: str, data: Mapping[str, Any]) -> None:
    raise RuntimeError(f"event '{event}' emitted by a model that is not registered")


class Model:
    """Base class of every model; subclasses override what they offer (all have defaults except
    :meth:`step`)."""

    kind: ClassVar[ModelKind] = ModelKind.SIMULATION

    def __init__(self, name: str, *, stepping: Stepping = Stepping.SERVICE,
                 period: float | None = None):
        """``period``: the model's own step in seconds (None: the main model's step)."""
        self.name = name
        self.stepping = Stepping(stepping)
        self.period = period
        self.id: int | None = None
        self.emit: Emit = _no_conductor

    # --- initialisation ----------------------------------------------------------------------
    def requires(self) -> Mapping[str, Requirement]:
        """Parameter name -> what the conductor must resolve for it."""
        return {}

    def initialise(self, parameters: Mapping[str, Any]) -> None:
        """Receive the resolved parameters (names as in :meth:`requires`)."""

    def start(self) -> None:
        """Begin running (after every model is initialised)."""

    def stop(self) -> None:
        """End the run; release what the model holds outside the process."""

    # --- time --------------------------------------------------------------------------------
    def step(self, dt: float) -> None:
        """Advance the model by ``dt`` seconds (an observer evaluates its predicates)."""
        raise NotImplementedError(f"{type(self).__name__}.step")

    # --- responsibility ----------------------------------------------------------------------
    def represents(self) -> Mapping[str, frozenset[str]]:
        """Entity -> the attributes of it this model can compute."""
        return {}

    def value(self, entity: str, attribute: str) -> Any:
        """The model's current value of ``attribute`` of ``entity``."""
        raise KeyError(f"{self.name} does not represent {attribute} of {entity}")

    def follow(self, entity: str, attribute: str, value: Any) -> None:
        """Take the holder's current value of an attribute this model represents but does not
        hold (called before each step while another model holds it)."""

    def follow_all(self, values: Sequence[tuple[str, str, Any]]) -> None:
        """Every ``(entity, attribute, value)`` the model follows, at once (what the conductor
        calls after each tick; by default :meth:`follow` for each, in order: a model that can
        apply them together overrides it)."""
        for entity, attribute, value in values:
            self.follow(entity, attribute, value)

    def take(self, entity: str, attribute: str, value: Any) -> None:
        """Become the holder of ``attribute`` of ``entity``, continuing from ``value``."""

    def release(self, entity: str, attribute: str) -> None:
        """Stop computing ``attribute`` of ``entity``; from now on :meth:`follow` supplies it."""

    # --- communication -----------------------------------------------------------------------
    def output(self) -> Mapping[str, Any]:
        """The model's cyclic output (e.g. ``{"grasped": True, "object": "ball"}``)."""
        return {}

    def read(self, model: str, output: Mapping[str, Any]) -> None:
        """Another model's latest cyclic output."""

    def on_event(self, event: str, data: Mapping[str, Any]) -> None:
        """The conductor notifies the model of an event (a trigger's effect)."""

    def input(self, topic: str, message: Mapping[str, Any]) -> None:
        """A message of the ensemble's data source (live or recorded robot data), delivered
        before the step that reaches its time: ``sensor_msgs/JointState`` as ``{"stamp", "name",
        "position", "velocity", "effort"}``, an action annotation as ``{"stamp", "operation",
        "args"}``. Every model receives every message; it ignores what it does not use."""


class Observer(Model):
    """A model that interprets the current state; it holds no physical attribute."""

    kind: ClassVar[ModelKind] = ModelKind.OBSERVER
