"""The registry of sweep functions: what ``function:`` in a sweep spec may name.

A sweep function takes keyword parameters (those of its grid and its fixed ones) and returns a
dict of results (nested dicts are flattened by the table). Each entry names its target as
``module:function`` under :mod:`sim_fidelity`, imported only when the function is called or
checked, so listing the registry loads neither MuJoCo nor rosbags. ``simfid bench truck`` and
``simfid bench physics`` call the same entries (:func:`call`), one code path for a quick local
check and a whole protocol on Ray.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from .errors import SweepError


def resolve(target: str) -> Any:
    """The attribute named by ``module:attr`` relative to the :mod:`sim_fidelity` package."""
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(f"sim_fidelity.{module}"), attr)


@dataclass(frozen=True)
class SweepFunction:
    """One sweep function: its target, its parameters and how its rows group."""

    name: str
    target: str  # module:function under sim_fidelity
    summary: str
    required: tuple[str, ...]
    defaults: Mapping[str, Any]
    replicate: str  # the parameter numbering repeats (a seed, a trial): groups are formed without
    timings: tuple[str, ...] = ()  # result keys that are wall-clock timings
    choices: Mapping[str, str | tuple] = field(default_factory=dict)  # allowed values, or where
    # they are (module:ATTR)
    table_drop: tuple[str, ...] = ()  # result keys too large for the table (per-second traces)
    cpus_param: str | None = None  # the parameter saying how many cores one run occupies
    headline: tuple[str, ...] = ()  # result keys the report shows by default (empty: all)

    @property
    def params(self) -> tuple[str, ...]:
        return (*self.required, *self.defaults)

    def allowed(self, param: str) -> tuple | None:
        spec = self.choices.get(param)
        return tuple(resolve(spec)) if isinstance(spec, str) else spec

    def complete(self, given: Mapping[str, Any], where: str) -> dict[str, Any]:
        """``given`` with the defaults filled in; an unknown, missing or disallowed parameter is
        an error naming ``where`` (the spec file and key)."""
        unknown = sorted(set(given) - set(self.params))
        if unknown:
            raise SweepError(f"{where}: function '{self.name}' has no parameter "
                             f"{', '.join(unknown)} (parameters: {', '.join(self.params)})")
        missing = [p for p in self.required if p not in given]
        if missing:
            raise SweepError(f"{where}: function '{self.name}' needs {', '.join(missing)} "
                             f"(in grid or params)")
        params = {**self.defaults, **given}
        for name, value in params.items():
            allowed = self.allowed(name)
            if allowed is not None and value not in allowed:
                raise SweepError(f"{where}: {name} = {value!r} is not one of "
                                 f"{', '.join(map(str, allowed))}")
        return params

    def cpus(self, params: Mapping[str, Any]) -> int:
        """Cores one run with ``params`` occupies (Ray schedules that many per task)."""
        return max(1, int(params.get(self.cpus_param, 1))) if self.cpus_param else 1

    def __call__(self, params: Mapping[str, Any], **extra: Any) -> dict[str, Any]:
        """Run once with ``params`` (``extra``: in-process only, e.g. a progress bar)."""
        fn: Callable[..., dict[str, Any]] = resolve(self.target)
        return fn(**params, **extra)


TRUCK_TIMINGS = ("wall", "rtf", "step_wall", "manager_wall", "manager_us_per_tick",
                 "manager_overhead_pct")

FUNCTIONS: dict[str, SweepFunction] = {f.name: f for f in (
    SweepFunction("truck", "truck.bench:run_once",
                  "one truck-unloading run of one mode (paper 000; simfid bench truck)",
                  required=("scenario", "mode", "seed"),
                  defaults={"duration": 60.0, "tick_period": 0.04, "still": None,
                            "medium": None},
                  replicate="seed",
                  timings=TRUCK_TIMINGS,
                  choices={"scenario": ("A", "B", "C"), "mode": "truck.bench:MODES",
                           "still": (None, "steps", "ticks"),
                           "medium": (None, "all", "near")},
                  table_drop=("samples", "phases"),
                  headline=("unloaded", "rate_per_hour", "rtf", "manager_overhead_pct")),
    SweepFunction("physics", "physics_bench.timing:trial",
                  "one physics step-time trial of one setting (paper 002; simfid bench physics)",
                  required=("world", "threads", "trial"),
                  defaults={"mode": "islands", "duration": 10.0, "batch": 1}, replicate="trial",
                  timings=("mean", "min", "max"), choices={"mode": "physics_bench.timing:MODES"},
                  cpus_param="threads", headline=("mean", "min")),
    SweepFunction("oned", "sweep.adapters:oned",
                  "paper 001's 1-D example, every phase of one seed (simfid example oned)",
                  required=("seed",), defaults={"missions": 1000, "episodes": None},
                  replicate="seed", headline=("atr.Design", "atr.Deploy", "atr.Kernels",
                                              "atr.Redes/K", "atr.Redeploy", "gap_reproduced")),
    SweepFunction("ackermann", "sweep.adapters:ackermann",
                  "paper 001's Ackermann waypoint course, every phase of one seed "
                  "(simfid example ackermann)",
                  required=("seed",), defaults={"missions": 50}, replicate="seed",
                  headline=("atr.Design", "atr.Deploy", "atr.Kernels", "atr.Redes/K",
                            "atr.Redeploy")),
    SweepFunction("kernels", "sweep.adapters:kernels",
                  "kernel generation on one planted gap, scored (simfid bench kernels)",
                  required=("seed",),
                  defaults={"dims": 1, "shape": "slow", "noise": 0.03, "transitions": 20_000},
                  replicate="seed", timings=("seconds",),
                  headline=("kernels", "precision", "recall", "support", "seconds"),
                  choices={"dims": (1, 2), "shape": "reality_gap.planted:SHAPES"}),
    SweepFunction("probe", "sweep.adapters:probe",
                  "a trivial run (square x, maybe sleep or fail) to check a sweep set-up",
                  required=("x",), defaults={"seed": 0, "seconds": 0.0, "fail": "never",
                                             "marker": ""},
                  replicate="seed", choices={"fail": ("never", "once", "always")},
                  headline=("y",)),
)}


def get(name: str, where: str = "function") -> SweepFunction:
    """The registered function ``name``; unknown: an error listing the known ones."""
    try:
        return FUNCTIONS[name]
    except KeyError:
        raise SweepError(f"{where}: unknown sweep function '{name}' (known: "
                         f"{', '.join(FUNCTIONS)})") from None


def call(name: str, params: Mapping[str, Any], **extra: Any) -> dict[str, Any]:
    """Run the registered function ``name`` once, in this process, its defaults filled in."""
    fn = get(name)
    return fn(fn.complete(params, f"sweep function '{name}'"), **extra)
