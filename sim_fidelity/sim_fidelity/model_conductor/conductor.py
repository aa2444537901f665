"""The Model Conductor (paper 003, section 3.4): orchestrates an ensemble of models in process.

One *tick* of the main model (``step`` seconds of simulated time):

1. the data source's messages up to the current time go to every model (:meth:`Model.input`) and
   action annotations to the triggers;
2. the main model and every SERVICE model step, concurrently (the one whose steps have cost the
   most CPU so far in the conductor's thread, every other in its own persistent
   :class:`ServiceWorker` thread, so no thread wake-up lies on the slowest model's path), and
   the conductor waits for all of them (lock step: MuJoCo's ``mj_step`` releases the GIL, so
   two engines really run in parallel); a SERVICE model with its own ``period`` steps as often
   as its period fits. Right after its own steps, each SERVICE model's values of the pairs it
   holds and others follow are read, in the thread that stepped it, while the others may still
   be stepping (exact: a holder's value does not change between its last step of the tick and
   the next tick; followers receive it only after all steps);
3. the clock ticks: every CLOCK model, each in its own thread, is woken; one still busy with an
   earlier step misses the tick (a *skip*, counted per model) and its time falls behind;
   FREE models step in their own threads at their own pace all along;
4. the holders' values (read in 2) go to the followers (:meth:`Model.follow`), so after each tick
   every model agrees with the holders; outputs are collected and passed to the other models
   (:meth:`Model.read`) and to the listeners (the log);
5. the trigger process handles the tick's signals: models' events, outputs (topic values), action
   annotations and service calls; effects (transfers, notifications, variables) run at once.

Models in threads (CLOCK, FREE) are only ever called from their own thread: the conductor posts
calls to their mailbox (run before their next step) and reads the values and output they publish
after each step, so the main loop never waits for them.
"""
from __future__ import annotations

import math
import queue
import threading
import time as _time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from .errors import ConductorError, ModelError, ResponsibilityError
from .model import (
    PHYSICAL_ATTRIBUTES,
    POSE,
    Model,
    ModelKind,
    Requirement,
    RequirementKind,
    Stepping,
)
from .responsibility import Pair, Responsibilities, Transfer
from .service_worker import ServiceWorker

EPS = 1e-9
MAX_CASCADE = 100  # signals handled in one tick before the conductor calls it a loop
CHOOSE_EVERY = 1000  # ticks between choices of the SERVICE model the conductor's thread steps
# (also after the first 10 and 100 ticks)


@dataclass(frozen=True)
class SceneObject:
    """One object of the initial scene: its type (model/SDF name) and world pose (7,)."""

    type: str = ""
    pose: np.ndarray | None = None


@dataclass(frozen=True)
class Signal:
    """Something the trigger process reacts to."""

    kind: str  # "event", "output", "action" or "call"
    source: str  # the model (event, output), the operation (action) or the trigger (call)
    data: Mapping[str, Any] = field(default_factory=dict)
    time: float = 0.0


class Listener(Protocol):
    """What the conductor reports as it runs (the log bag implements it)."""

    def on_output(self, time: float, model: str, model_id: int,
                  output: Mapping[str, Any]) -> None: ...

    def on_transfer(self, transfer: Transfer) -> None: ...

    def on_event(self, time: float, model: str, event: str, data: Mapping[str, Any]) -> None: ...


class SignalHandler(Protocol):
    """The trigger process (:class:`~sim_fidelity.model_conductor.triggers.TriggerProcess`).
    An attribute ``wants_outputs = False`` spares the conductor passing every output as a
    signal."""

    def handle(self, conductor: "Conductor", signal: Signal) -> None: ...


class DataSource(Protocol):
    """Robot data in time order (:mod:`~sim_fidelity.model_conductor.data_sources`)."""

    def poll(self, until: float) -> list[Any]:
        """Messages (``.time``, ``.topic``, ``.kind``, ``.data``) stamped up to ``until``."""

    def finished(self, now: float) -> bool:
        """True once every message was delivered and the data's time is over."""


@dataclass
class Member:
    """The conductor's record of one registered model."""

    model: Model
    id: int
    main: bool
    parameters: dict[str, Any]
    time: float = 0.0  # the model's own simulated time
    steps: int = 0
    cpu: float = 0.0  # CPU seconds of the threads that ran its steps (SERVICE models)
    skips: int = 0  # clock ticks missed (CLOCK models)
    due: int = 0  # clock ticks accounted for (CLOCK models)
    held: tuple[Pair, ...] = ()
    exported: tuple[Pair, ...] = ()  # held pairs that other models follow
    worker: ServiceWorker | None = None  # a SERVICE model stepped in its own thread
    values: dict[Pair, Any] = field(default_factory=dict)  # held values after the latest step
    # threaded models only:
    mailbox: "queue.SimpleQueue[Callable[[], None]]" = field(default_factory=queue.SimpleQueue)
    output: Mapping[str, Any] = field(default_factory=dict)
    output_seq: int = 0  # increases with every published output
    sent_seq: int = -1  # the last output passed on
    thread: threading.Thread | None = None
    error: BaseException | None = None

    @property
    def name(self) -> str:
        return self.model.name

    @property
    def threaded(self) -> bool:
        return not self.main and self.model.stepping != Stepping.SERVICE


@dataclass(frozen=True)
class ModelReport:
    name: str
    id: int
    stepping: str
    main: bool
    steps: int
    skips: int
    time: float  # the model's simulated time at the end
    lag: float  # the main model's time minus the model's (CLOCK models fall behind)
    cpu: float  # CPU seconds its steps took (SERVICE models; 0 for the others)


@dataclass(frozen=True)
class RunReport:
    time: float  # simulated seconds
    wall: float  # seconds
    ticks: int
    models: tuple[ModelReport, ...]
    transfers: tuple[Transfer, ...]
    events: int
    messages: int  # data-source messages delivered

    @property
    def real_time_factor(self) -> float:
        return self.time / self.wall if self.wall > 0 else math.inf

    def as_dict(self) -> dict[str, Any]:
        return {"time": self.time, "wall": self.wall, "ticks": self.ticks,
                "real_time_factor": self.real_time_factor, "events": self.events,
                "messages": self.messages,
                "models": [m.__dict__ for m in self.models],
                "transfers": [t.__dict__ for t in self.transfers]}


class Conductor:
    """Registers models, resolves their parameters, allocates responsibilities and runs them.

    ``step``: the main model's tick in seconds (the main model's ``period`` wins when set);
    ``realtime``: pace ticks to the wall clock (live data); ``base_dir``: where relative PATH
    parameters resolve; ``free_interval``: wall seconds a FREE model pauses between steps;
    ``parallel``: step the SERVICE models of a tick concurrently (False: one after another, which
    saves the thread hand-off, some tens of microseconds a tick, for models that hold the GIL).
    """

    def __init__(self, *, step: float = 0.01, twist_follows_pose: bool = True,
                 realtime: bool = False, base_dir: str | Path | None = None,
                 free_interval: float = 0.001, parallel: bool = True):
        if not step > 0:
            raise ConductorError(f"the conductor's step must be positive; got {step}")
        self.step_size = float(step)
        self.realtime = realtime
        self.base_dir = Path(base_dir) if base_dir else Path.cwd()
        self.free_interval = free_interval
        self.parallel = parallel
        self.responsibilities = Responsibilities(twist_follows_pose=twist_follows_pose)
        self.variables: dict[str, Any] = {}
        self.listeners: list[Listener] = []
        self.handler: SignalHandler | None = None
        self.time = 0.0
        self.ticks = 0
        self.events = 0
        self.messages = 0
        self._members: dict[str, Member] = {}
        self._next_id = 1
        self._signals: queue.SimpleQueue[Signal] = queue.SimpleQueue()
        self._scene: dict[str, SceneObject] = {}
        self._initial: dict[Pair, str] = {}
        self._service: list[Member] = []  # the SERVICE models; the last steps in this thread
        self._clock = threading.Condition()
        self._running = False
        self._stop = threading.Event()
        self._initialised = False
        self._plan: list[tuple[Pair, Member, list[Member]]] = []
        self._feeds: list[tuple[Member, list[tuple[Pair, Member]]]] = []  # follower, its sources
        self._readers: list[Member] = []

    # ------------------------------------------------------------------ registration
    def register(self, model: Model, *, main: bool = False,
                 parameters: Mapping[str, Any] | None = None) -> int:
        """Add a model; returns the unique id assigned to it (also set as ``model.id``)."""
        if self._initialised:
            raise ConductorError(f"cannot register '{model.name}': the ensemble is initialised")
        if model.name in self._members:
            raise ConductorError(f"a model named '{model.name}' is registered already")
        if main and self.main_member is not None:
            raise ConductorError(f"'{model.name}' cannot be the main model: "
                                 f"'{self.main_member.name}' is")
        if main and model.stepping != Stepping.SERVICE:
            raise ConductorError(f"the main model '{model.name}' times the others: it is stepped "
                                 f"by the conductor (SERVICE), not {model.stepping.value}")
        member = Member(model, self._next_id, main, dict(parameters or {}))
        self._next_id += 1
        self._members[model.name] = member
        model.id = member.id
        model.emit = self._emitter(model.name)
        return member.id

    def _emitter(self, name: str) -> Callable[[str, Mapping[str, Any]], None]:
        def emit(event: str, data: Mapping[str, Any]) -> None:
            self._signals.put(Signal("event", name, {"event": event, **dict(data)}))
        return emit

    @property
    def main_member(self) -> Member | None:
        return next((m for m in self._members.values() if m.main), None)

    @property
    def main(self) -> Model:
        member = self.main_member
        if member is None:
            raise ConductorError("the ensemble has no main model")
        return member.model

    @property
    def models(self) -> dict[str, Model]:
        return {n: m.model for n, m in self._members.items()}

    def model(self, name: str) -> Model:
        return self.member(name).model

    def member(self, name: str) -> Member:
        try:
            return self._members[name]
        except KeyError:
            raise ConductorError(f"no model named '{name}' (models: "
                                 f"{', '.join(self._members) or 'none'})") from None

    def add_listener(self, listener: Listener) -> None:
        """Report to ``listener`` from now on, after telling it the responsibility changes so far
        (the initial allocation), so a log made after initialisation is complete."""
        for change in self.responsibilities.log:
            listener.on_transfer(change)
        self.listeners.append(listener)

    # ------------------------------------------------------------------ initialisation
    def initialise(self, scene: Mapping[str, SceneObject] | None = None,
                   responsibilities: Mapping[Pair, str] | None = None) -> None:
        """Resolve every model's parameters and initialise it (a model needing another's pose
        waits until that one is initialised), then allocate responsibilities (config overrides,
        else the main model) and start the scene's objects from their given poses."""
        if self._initialised:
            raise ConductorError("the ensemble is initialised already")
        main = self.main_member
        if main is None:
            raise ConductorError("the ensemble has no main model: register one with main=True")
        if main.model.period:
            self.step_size = float(main.model.period)
        self._scene = dict(scene or {})
        pending = list(self._members.values())
        while pending:
            left = []
            for member in pending:
                values = self._resolve(member)
                if values is None:
                    left.append(member)
                    continue
                try:
                    member.model.initialise(values)
                except ConductorError:
                    raise
                except Exception as e:
                    raise ModelError(member.name, f"initialise failed: "
                                     f"{type(e).__name__}: {e}") from e
                represents = member.model.represents()
                if member.model.kind == ModelKind.OBSERVER:
                    physical = sorted(f"{a} of {e}" for e, attrs in represents.items()
                                      for a in attrs if a in PHYSICAL_ATTRIBUTES)
                    if physical:
                        raise ModelError(member.name, "an observer holds no physical attribute; "
                                         f"it represents {', '.join(physical)}")
                self.responsibilities.declare(member.name, represents)
            if len(left) == len(pending):
                self._unresolved(left)
            pending = left
        for member in self._members.values():
            member.time = 0.0
        changes = self.responsibilities.allocate(main.name, dict(responsibilities or {}))
        self._initial = self.responsibilities.holders()
        for change in changes:
            self._apply_initial(change)
        for name, obj in self._scene.items():
            if obj.pose is None:
                continue
            holder = self.responsibilities.holder(name, POSE)
            if holder is None:
                raise ResponsibilityError(
                    f"scene object '{name}' has a pose but no model represents its pose "
                    f"(entities with a pose: {', '.join(sorted(self._posed())) or 'none'})")
            self.member(holder).model.take(name, POSE, np.asarray(obj.pose, float))
        self._update_held()
        self._initialised = True
        self._propagate()
        for change in changes:
            self._tell(lambda listener, c=change: listener.on_transfer(c))

    def _posed(self) -> list[str]:
        return [e for e in self.responsibilities.entities()
                if self.responsibilities.holder(e, POSE) is not None]

    def _resolve(self, member: Member) -> dict[str, Any] | None:
        """The model's parameters, or None while one depends on a model not yet initialised."""
        values: dict[str, Any] = {}
        for key, req in member.model.requires().items():
            found = self._resolve_one(member, key, req)
            if found is _LATER:
                return None
            values[key] = found
        return values

    def _resolve_one(self, member: Member, key: str, req: Requirement) -> Any:
        kind = RequirementKind(req.kind)
        if kind in (RequirementKind.VALUE, RequirementKind.PATH):
            if req.of not in member.parameters:
                if req.optional:
                    return None
                raise ModelError(member.name, f"parameter '{key}' needs the config value "
                                 f"'{req.of}', which its parameters do not give")
            value = member.parameters[req.of]
            if kind == RequirementKind.PATH:
                value = str(self.base_dir / Path(str(value)).expanduser())
            return value
        if kind == RequirementKind.MODEL_ID:
            return self.member(req.of).id
        obj = self._scene.get(req.of)
        if kind == RequirementKind.TYPE:
            if obj is None or not obj.type:
                raise ModelError(member.name, f"parameter '{key}' needs the type of '{req.of}', "
                                 "which the scene does not give")
            return obj.type
        if obj is not None and obj.pose is not None:
            return np.asarray(obj.pose, float)
        ready = self.responsibilities.representers(req.of, POSE)  # initialised models only
        if ready:
            return np.asarray(self._members[ready[0]].model.value(req.of, POSE), float)
        return _LATER

    def _unresolved(self, members: list[Member]) -> None:
        for member in members:
            for key, req in member.model.requires().items():
                if RequirementKind(req.kind) == RequirementKind.POSE and \
                        self._resolve_one(member, key, req) is _LATER:
                    raise ModelError(member.name, f"parameter '{key}' needs the pose of "
                                     f"'{req.of}': it is not in the scene and no other model "
                                     "represents it")
        raise ModelError(members[0].name, "parameters could not be resolved")

    def _apply_initial(self, change: Transfer) -> None:
        """The holder takes the pair starting from the main model's value where the main model
        represents it (its world), else from its own."""
        entity, attribute, holder = change.entity, change.attribute, change.to_model
        main = self.main_member
        source = (main if main.name in self.responsibilities.representers(entity, attribute)
                  else self.member(holder))
        self.member(holder).model.take(entity, attribute, source.model.value(entity, attribute))
        for follower in self.responsibilities.followers(entity, attribute):
            self.member(follower).model.release(entity, attribute)

    def _update_held(self) -> None:
        """What each member holds, and the follow plan: (pair, holder, followers) for every pair
        some model follows (rebuilt on every change of holder)."""
        table = self.responsibilities.holders()
        for member in self._members.values():
            member.held = tuple(p for p, m in table.items() if m == member.name)
        self._plan = [(pair, self._members[holder],
                       [self._members[f] for f in self.responsibilities.followers(*pair)])
                      for pair, holder in table.items()]
        self._plan = [step for step in self._plan if step[2]]
        for member in self._members.values():
            member.exported = tuple(pair for pair, holder, _ in self._plan if holder is member)
        feeds: dict[str, tuple[Member, list[tuple[Pair, Member]]]] = {}
        for pair, holder, followers in self._plan:
            for follower in followers:
                feeds.setdefault(follower.name, (follower, []))[1].append((pair, holder))
        self._feeds = list(feeds.values())

    # ------------------------------------------------------------------ running
    def start(self) -> None:
        """Start every model and the threads of the CLOCK and FREE models."""
        if not self._initialised:
            self.initialise()
        if self._running:
            return
        self._stop.clear()
        self._readers = [m for m in self._members.values()  # models that use read()
                         if type(m.model).read is not Model.read]
        for member in self._members.values():
            member.model.start()
            if member.threaded:
                self._publish(member)
        self._service = sorted((m for m in self._members.values() if not m.threaded),
                               key=lambda m: m.main)  # until measured: the main model inline
        if self.parallel and len(self._service) > 1:
            for member in self._service:
                member.worker = ServiceWorker(member.name,
                                              lambda n, m=member: self._step_and_read(m, n))
        for member in self._members.values():
            if member.threaded:
                target = (self._clock_loop if member.model.stepping == Stepping.CLOCK
                          else self._free_loop)
                member.thread = threading.Thread(target=target, args=(member,), daemon=True,
                                                 name=f"model-{member.name}")
                member.thread.start()
        self._running = True

    def tick(self) -> None:
        """One step of the main model (see the module's description)."""
        if not self._running:
            self.start()
        self._check_threads()
        target = (self.ticks + 1) * self.step_size  # no drift from summing steps
        inline = self._service[-1]
        try:
            for member in self._service:
                n = self._steps_due(member, target)
                if n and member.worker is not None and member is not inline:
                    member.worker.start(n)
                else:
                    self._step_and_read(member, n)
        finally:  # every worker's steps end before any error leaves the tick
            error = self._wait_workers()
        if error is not None:
            raise error
        self.time = target
        self.ticks += 1
        if self.ticks % CHOOSE_EVERY == 0 or self.ticks in (10, 100):
            self._choose_inline()
        with self._clock:
            self._clock.notify_all()
        self._propagate(read=False)
        self._exchange_outputs()
        self._handle_signals()

    def _choose_inline(self) -> None:
        """Step the SERVICE model whose steps have cost the most CPU so far in the conductor's own
        thread from now on: the others' workers start and finish within its steps, so the tick
        waits for no wake-up of a thread. CPU, not wall time: on a loaded machine a short step
        in a worker that is preempted takes longer in wall time than the long one (a model that
        waits for another process costs little CPU and stays in a worker: one wake-up more on
        its wait)."""
        slowest = max(self._service, key=lambda m: m.cpu)
        if slowest is not self._service[-1]:
            self._service.remove(slowest)
            self._service.append(slowest)

    @property
    def inline_model(self) -> str | None:
        """The SERVICE model the conductor's own thread steps (None before :meth:`start`)."""
        return self._service[-1].name if self._service else None

    def _wait_workers(self) -> BaseException | None:
        """Wait for every started worker; the first error one raised (None if none did)."""
        error = None
        for member in self._service:
            if member.worker is not None:
                try:
                    member.worker.wait()  # at once when it was not started
                except BaseException as e:
                    error = error or e
        return error

    def _steps_due(self, member: Member, target: float) -> int:
        period = self._period(member)
        return int(math.floor((target - member.time) / period + EPS))

    def _period(self, member: Member) -> float:
        return float(member.model.period) if member.model.period else self.step_size

    def _step_and_read(self, member: Member, n: int) -> None:
        """Step a SERVICE model ``n`` times, then read its values of the pairs others follow
        (in the thread that stepped it)."""
        period = self._period(member)
        cpu = _time.thread_time()
        for _ in range(n):
            try:
                member.model.step(period)
            except Exception as e:
                raise ModelError(member.name, f"step failed at t = {member.time:.4f} s: "
                                 f"{type(e).__name__}: {e}") from e
            member.steps += 1
            member.time = member.steps * period
        member.cpu += _time.thread_time() - cpu
        values = member.values
        for pair in member.exported:
            values[pair] = member.model.value(*pair)

    def _clock_loop(self, member: Member) -> None:
        period = self._period(member)
        try:
            while not self._stop.is_set():
                with self._clock:
                    due = int(math.floor(self.time / period + EPS))
                    while due <= member.due and not self._stop.is_set():
                        self._clock.wait(0.1)
                        due = int(math.floor(self.time / period + EPS))
                if self._stop.is_set():
                    break
                member.skips += due - member.due - 1
                member.due = due
                self._run_mailbox(member)
                member.model.step(period)
                member.steps += 1
                member.time = member.steps * period
                self._publish(member)
        except BaseException as e:  # reported by the conductor's thread
            member.error = e

    def _free_loop(self, member: Member) -> None:
        dt = float(member.model.period or 0.0)
        try:
            while not self._stop.is_set():
                self._run_mailbox(member)
                member.model.step(dt)
                member.time += dt
                member.steps += 1
                self._publish(member)
                self._stop.wait(self.free_interval)
        except BaseException as e:
            member.error = e

    def _run_mailbox(self, member: Member) -> None:
        box = member.mailbox
        while True:
            try:
                call = box.get_nowait()
            except queue.Empty:
                return
            call()

    def _publish(self, member: Member) -> None:
        """A threaded model's values of what it holds and its output, after a step."""
        model = member.model
        member.values = {p: model.value(*p) for p in member.held}
        member.output = model.output()
        member.output_seq += 1

    def _check_threads(self) -> None:
        for member in self._members.values():
            if member.error is not None:
                error, member.error = member.error, None
                self.stop()
                raise ModelError(member.name, f"{type(error).__name__}: {error}") from error

    def _call(self, member: Member, method: str, *args: Any) -> None:
        """Call a model method: at once, or through the mailbox of a threaded model."""
        fn = getattr(member.model, method)
        if member.threaded and self._running:
            member.mailbox.put(lambda: fn(*args))
        else:
            fn(*args)

    def _value(self, member: Member, pair: Pair) -> Any:
        if member.threaded and self._running:
            if pair not in member.values:  # taken since its last step
                raise ResponsibilityError(f"'{member.name}' has not stepped since it took "
                                          f"{pair[1]} of {pair[0]}")
            return member.values[pair]
        return member.model.value(*pair)

    def _propagate(self, read: bool = True) -> None:
        """The holders' values to each follower, all of a follower's in one ``follow_all``
        (``read=False``: the SERVICE holders' values read right after their steps of this
        tick)."""
        for follower, sources in self._feeds:
            values = []
            for pair, member in sources:
                if member.threaded and self._running:
                    if pair not in member.values:
                        continue
                    value = member.values[pair]
                elif read:
                    value = member.model.value(*pair)
                else:
                    value = member.values[pair]
                values.append((pair[0], pair[1], value))
            if values:
                self._call(follower, "follow_all", values)

    def _exchange_outputs(self) -> None:
        """Outputs to the models that read them, the listeners and the topic triggers; nothing is
        computed when none of them wants outputs."""
        to_handler = self.handler is not None and getattr(self.handler, "wants_outputs", True)
        if not (self.listeners or to_handler or self._readers):
            return
        outputs = []
        for member in self._members.values():
            if member.threaded:
                if member.output_seq == member.sent_seq:
                    continue
                member.sent_seq = member.output_seq
                outputs.append((member, member.time, member.output))
            else:
                outputs.append((member, member.time, member.model.output()))
        for member, when, output in outputs:
            for other in self._readers:
                if other is not member:
                    self._call(other, "read", member.name, output)
            self._tell(lambda listener, m=member, t=when, o=output:
                       listener.on_output(t, m.name, m.id, o))
            if to_handler:
                self._signals.put(Signal("output", member.name, output, self.time))

    def _handle_signals(self) -> None:
        if self._signals.empty():  # most ticks: nothing to handle
            return
        handled = 0
        while True:
            try:
                signal = self._signals.get_nowait()
            except queue.Empty:
                return
            handled += 1
            if handled > MAX_CASCADE:
                raise ConductorError(f"more than {MAX_CASCADE} signals in one tick at t = "
                                     f"{self.time:.4f} s: triggers activate each other in a loop "
                                     f"(last: {signal.kind} {signal.source})")
            if signal.kind == "event":
                self.events += 1
                data = {k: v for k, v in signal.data.items() if k != "event"}
                self._tell(lambda listener, s=signal, d=data:
                           listener.on_event(self.time, s.source, s.data["event"], d))
            if self.handler is not None:
                self.handler.handle(self, Signal(signal.kind, signal.source, signal.data,
                                                 self.time))

    def _tell(self, call: Callable[[Listener], None]) -> None:
        for listener in self.listeners:
            call(listener)

    # ------------------------------------------------------------------ whole runs
    def run(self, duration: float | None = None, source: DataSource | None = None) -> RunReport:
        """Tick until ``duration`` seconds of simulated time passed, the recorded data ended, or
        :meth:`request_stop` was called (from any thread); then stop. Needs a duration or a
        source."""
        if duration is None and source is None:
            raise ConductorError("run needs a duration or a data source that ends")
        self.start()
        end = self.time + duration if duration is not None else math.inf
        wall0 = _time.perf_counter()
        sim0 = self.time
        try:
            while not self._stop.is_set() and self.time + EPS < end:
                if source is not None:
                    if source.finished(self.time):
                        break
                    self.deliver(source.poll(self.time + EPS))
                if self.realtime:
                    ahead = (self.time - sim0) - (_time.perf_counter() - wall0)
                    if ahead > 0:
                        self._stop.wait(ahead)
                self.tick()
            self._stop.set()  # a model thread that failed in the last tick is reported too
            for member in self._members.values():
                if member.thread is not None:
                    member.thread.join()
            self._check_threads()
        finally:
            wall = _time.perf_counter() - wall0
            self.stop()
        return self.report(wall)

    def deliver(self, messages: Iterable[Any]) -> None:
        """Data-source messages to every model; action annotations also to the triggers."""
        for message in messages:
            self.messages += 1
            for member in self._members.values():
                self._call(member, "input", message.topic, message.data)
            if message.kind == "action":
                self._signals.put(Signal("action", message.data["operation"], message.data,
                                         message.time))
        self._handle_signals()

    def request_stop(self) -> None:
        """Ask a running :meth:`run` to end after the current tick (thread safe)."""
        self._stop.set()

    def stop(self) -> None:
        """Stop the threads and every model."""
        self._stop.set()
        with self._clock:
            self._clock.notify_all()
        for member in self._members.values():
            if member.thread is not None:
                member.thread.join()
                member.thread = None
            if member.model.stepping == Stepping.CLOCK and not member.main:
                due = int(math.floor(self.time / self._period(member) + EPS))
                member.skips += max(0, due - member.due)  # ticks it never got to
                member.due = max(due, member.due)
        for member in self._service:
            if member.worker is not None:
                member.worker.close()
                member.worker = None
        if self._running:
            self._running = False
            for member in self._members.values():
                self._run_mailbox(member)
                member.model.stop()

    def report(self, wall: float = 0.0) -> RunReport:
        main_time = self.time
        models = tuple(ModelReport(m.name, m.id, m.model.stepping.value, m.main, m.steps,
                                   m.skips, m.time,
                                   main_time - m.time if m.model.stepping != Stepping.FREE
                                   else 0.0, m.cpu)
                       for m in self._members.values())
        return RunReport(self.time, wall, self.ticks, models,
                         tuple(self.responsibilities.log), self.events, self.messages)

    # ------------------------------------------------------------------ reconfiguration
    def transfer(self, entity: str, attribute: str, to_model: str, cause: str = "call"
                 ) -> list[Transfer]:
        """Make ``to_model`` the holder of the pair (and of ``twist`` with ``pose``), starting
        from the current holder's value; logged."""
        self.member(to_model)
        pairs = self.responsibilities.plan(entity, attribute, to_model)
        values = [self._value(self._members[self.responsibilities.holder(*p)], p) for p in pairs]
        changes = []
        for pair, value in zip(pairs, values):
            holder = self.responsibilities.holder(*pair)
            self._call(self._members[holder], "release", *pair)
            self._call(self._members[to_model], "take", pair[0], pair[1], value)
            changes.append(self.responsibilities.move(pair[0], pair[1], to_model, self.time,
                                                      cause))
        self._update_held()
        for change in changes:
            self._tell(lambda listener, c=change: listener.on_transfer(c))
        return changes

    def notify(self, model: str, event: str, data: Mapping[str, Any] | None = None) -> None:
        """Tell a model of an event (a trigger's effect)."""
        self._call(self.member(model), "on_event", event, dict(data or {}))
        self._tell(lambda listener: listener.on_event(self.time, model, event, dict(data or {})))

    def call(self, trigger: str, args: Mapping[str, Any] | None = None) -> None:
        """Activate a trigger declared ``on: {service: ...}`` (thread safe: handled at the end of
        the current tick, or at once when the ensemble is not running)."""
        self._signals.put(Signal("call", trigger, dict(args or {}), self.time))
        if not self._running:
            self._handle_signals()

    # ------------------------------------------------------------------ the evaluators' view
    def holder(self, entity: str, attribute: str) -> str | None:
        return self.responsibilities.holder(entity, attribute)

    def entities(self) -> list[str]:
        return self.responsibilities.entities()

    def held(self, model: str) -> list[Pair]:
        return self.responsibilities.held_by(model)

    def initially_held(self, model: str) -> list[Pair]:
        return [p for p, m in self._initial.items() if m == model]

    def pose(self, entity: str) -> np.ndarray | None:
        """The entity's world pose: its holder's value, else any model that can tell it (a link
        of a simulated robot, say); None if no model can."""
        holder = self.responsibilities.holder(entity, POSE)
        if holder is not None:
            return np.asarray(self._value(self._members[holder], (entity, POSE)), float)
        for member in sorted(self._members.values(), key=lambda m: not m.main):
            if member.threaded:
                continue
            try:
                return np.asarray(member.model.value(entity, POSE), float)
            except (KeyError, LookupError):
                continue
        return None

    def output(self, model: str) -> Mapping[str, Any]:
        """The model's latest output."""
        member = self.member(model)
        return member.output if member.threaded else member.model.output()


class _Later:
    """Marks a parameter that another model's initialisation will resolve."""


_LATER = _Later()
