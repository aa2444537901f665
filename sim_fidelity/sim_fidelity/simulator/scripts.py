"""Script plugins: Python step hooks that SDF ``<plugin filename="...">`` entries attach to a world.

A script class is registered under its plugin filename in the entry-point group
``sim_fidelity.scripts`` (``setup.py``). Every engine keeps a :class:`Scripts`, which makes one
instance per top-level model and filename, over all that model's plugins of that filename:

1. ``cls.prepare(world, plugins)`` (optional), before the MuJoCo spec compiles, adds what the
   script needs in the model (e.g. inactive weld constraints);
2. ``cls(engine, model, plugins)`` once the engine is built (or the model spawned);
3. ``instance(engine)`` after every physics step, in ascending ``cls.step_order`` (default 0),
   then in the world's plugin order (the engine's :class:`~.hooks.StepHooks` run the
   :class:`Scripts`, which runs its instances);
4. ``instance.recompiled(engine, body_map)`` after every later recompile (spawn or delete):
   indices into the model are stale, ``body_map[old_id]`` is a body's new id (-1: deleted);
   instances of a deleted model are dropped;
5. ``instance.reset(engine)`` after the engine reset its state: back to the start;
6. ``instance.ros_endpoints()`` (optional): the topics ``sim_server`` serves for the script, as
   plain descriptions (:class:`Subscription`, :class:`Publication`), so scripts import no ROS.

The bodies of a model that runs a script never sleep: scripts act on them between steps.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from typing import Any, Callable, Iterable, Iterator, Protocol

import mujoco
import numpy as np

from .errors import UnknownEntityError
from .hooks import StepHooks
from .sdf.records import LoadedWorld

ENTRY_POINT_GROUP = "sim_fidelity.scripts"


class ScriptHost(Protocol):
    """What scripts see of the engine that runs them (the engine imports this module, not the
    other way round)."""

    world: LoadedWorld
    model: mujoco.MjModel
    hooks: StepHooks


class Script(Protocol):
    def __call__(self, engine: ScriptHost) -> None: ...
    def recompiled(self, engine: ScriptHost, body_map: np.ndarray) -> None: ...
    def reset(self, engine: ScriptHost) -> None: ...


@dataclass(frozen=True)
class Subscription:
    """A topic a script listens to; ``callback(engine, msg)`` runs under the engine lock."""

    topic: str
    type: str  # ROS type name, e.g. "std_msgs/msg/Bool"
    callback: Callable[[ScriptHost, Any], None]


@dataclass(frozen=True)
class Publication:
    """A topic a script publishes at the server's state rate; ``fields(engine)`` (under the
    engine lock) gives the message fields; a ``stamp`` field, if the type has one, is sim time."""

    topic: str
    type: str
    fields: Callable[[ScriptHost], dict]


@functools.cache
def registry() -> dict[str, EntryPoint]:
    """Plugin filename -> entry point of its script class."""
    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def top_model(scoped: str) -> str:
    """The top-level model of a scoped entity name ('' for the world)."""
    return scoped.split("::", 1)[0]


def movable_models(world: LoadedWorld, own: str) -> list[str]:
    """Top-level models other than ``own`` whose canonical link moves freely, sorted by name."""
    return sorted(n for n, r in world.models.items() if not r.parent and n != own
                  and r.canonical_link and world.links[r.canonical_link].free)


class Scripts:
    """The script instances of one engine, kept in step with its spawns, deletes and resets."""

    def __init__(self) -> None:
        self._instances: dict[tuple[str, str], Script] = {}  # (model, filename) -> instance
        self._pending: dict[tuple[str, str], tuple[type, list[str]]] = {}

    def __iter__(self) -> Iterator[Script]:
        return iter(self._instances.values())

    def __len__(self) -> int:
        return len(self._instances)

    def get(self, model: str, filename: str) -> Script:
        try:
            return self._instances[(model, filename)]
        except KeyError:
            raise UnknownEntityError(f"{model}::{filename}", "no such script; scripts: "
                                     f"{sorted(self._instances) or 'none'}") from None

    def prepare(self, world: LoadedWorld, plugins: Iterable[str]) -> None:
        """Group the registered plugins among ``plugins`` and let their classes edit the spec."""
        groups: dict[tuple[str, str], list[str]] = {}
        for name in plugins:
            rec = world.plugins[name]
            if rec.filename in registry():
                groups.setdefault((top_model(rec.parent), rec.filename), []).append(name)
        for key, names in groups.items():
            cls = registry()[key[1]].load()
            if hasattr(cls, "prepare"):
                cls.prepare(world, names)
            self._pending[key] = (cls, names)

    def discard_pending(self) -> None:
        """Forget what ``prepare`` grouped but ``attach`` did not build (a spawn that failed)."""
        self._pending.clear()

    def attach(self, engine: ScriptHost) -> None:
        """Instantiate the prepared scripts on the compiled engine and hook them to its steps."""
        for key, (cls, names) in self._pending.items():
            self._instances[key] = cls(engine, key[0], names)
        self._pending.clear()
        self._order()
        self._keep_awake(engine)
        if self._instances:
            engine.hooks.add(self)

    def recompiled(self, engine: ScriptHost, body_map: np.ndarray) -> None:
        for key in [k for k in self._instances if k[0] and k[0] not in engine.world.models]:
            del self._instances[key]
        for script in self._instances.values():
            script.recompiled(engine, body_map)
        self._keep_awake(engine)
        if not self._instances:
            engine.hooks.remove(self)

    def reset(self, engine: ScriptHost) -> None:
        for script in self._instances.values():
            script.reset(engine)

    def __call__(self, engine: ScriptHost) -> None:
        for script in self._instances.values():
            script(engine)

    def _order(self) -> None:
        keys = sorted(self._instances, key=lambda k: getattr(self._instances[k], "step_order", 0))
        self._instances = {k: self._instances[k] for k in keys}

    def _keep_awake(self, engine: ScriptHost) -> None:
        m, models = engine.model, {k[0] for k in self._instances if k[0]}
        bodies = [m.body(n).id for n, r in engine.world.links.items()
                  if top_model(r.model) in models]
        trees = np.unique(m.body_treeid[bodies]) if bodies else np.zeros(0, int)
        m.tree_sleep_policy[trees[trees >= 0]] = int(mujoco.mjtSleepPolicy.mjSLEEP_NEVER)
