"""``simfid example truck-classifier`` and ``simfid example truck-planner``: what paper 000's speed
buys (Sec. 5.3-5.4): the pick-or-sweep classifier of Table 1 (:mod:`~sim_fidelity.truck.classifier`)
and the simulation-based planner of Fig. 8 (:mod:`~sim_fidelity.truck.planner`), look-ahead in HiFi
and AdFi-1 side by side."""
from __future__ import annotations

import argparse
import functools
import json
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Callable

from ..flag_types import count, integer, integers, number, output_folder
from ..ranges import above, at_least

SCENARIOS = ("A", "B", "C")
FRACTIONS = (0.25, 0.5, 1.0)  # of the budget: test accuracy with the data collected by then
# wall seconds of look-ahead per decision: a look-ahead action on A (5-7 s of sim time) costs some
# 22 CPU seconds in HiFi (measured), so a quiet machine explores several per decision in each mode
PLANNER_BUDGET_S = 120.0


def _modes(text: str) -> list[str]:
    from ..fidelity_manager import FidelityConfig
    from ..truck.bench import CONFIG
    from ..truck.errors import TruckError

    known = FidelityConfig.load(CONFIG).presets
    modes = [m.strip() for m in text.split(",") if m.strip()]
    unknown = [m for m in modes if m not in known]
    if unknown or not modes:
        raise TruckError(f"--modes: unknown mode(s) {', '.join(unknown) or '(none)'} (known: "
                         f"{', '.join(known)})")
    return modes


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``truck-classifier`` and ``truck-planner`` to the sub-commands of ``simfid example``."""
    c = subparsers.add_parser("truck-classifier", help="paper 000 Table 1: a pick-or-sweep "
                              "classifier trained from HiFi and AdFi-1 look-ahead")
    c.add_argument("--budget", type=number(above(0)), default=600.0,
                   help="wall seconds of data collection per mode (default 600)")
    c.add_argument("--test-budget", type=number(above(0)),
                   help="wall seconds of HiFi test labels (default: --budget)")
    c.add_argument("--world", default="A", help="training world: a scenario letter or an SDF")
    c.add_argument("--test-world", type=Path, help="test world SDF (default: the scenario's "
                   "generator with --test-seeds, made in the test job)")
    c.add_argument("--test-seeds", type=integers(at_least(1)), default=(1,),
                   help="generator seeds of the test variants, e.g. 1,2,3: the test budget is "
                        "shared among them, one after the other (default 1; the shipped world "
                        "is 0)")
    c.add_argument("--horizon", type=number(at_least(0)), default=None,
                   help="sim seconds after a decision at which each branch's unloaded packets "
                        "are counted, the action followed by the controller's own choices "
                        "(default: 0, at the action's end)")
    c.add_argument("--parallel", action="store_true",
                   help="collect every mode and the test labels at once, one process each (the "
                        "budgets are the same; the machine's cores are shared among them)")
    _common(c, "hifi,adfi-1")
    c.set_defaults(func=run_classifier)

    p = subparsers.add_parser("truck-planner", help="paper 000 Fig. 8: a simulation-based planner "
                              "with HiFi and AdFi-1 look-ahead, executed in HiFi")
    p.add_argument("--budget", type=number(at_least(0)), default=PLANNER_BUDGET_S,
                   help=f"wall seconds of look-ahead per decision (default {PLANNER_BUDGET_S:g}: "
                        "a HiFi look-ahead action on A costs some 22 CPU s, so a quiet machine "
                        "explores several per decision; 0: one sequence)")
    p.add_argument("--duration", type=number(above(0)), default=60.0,
                   help="sim seconds of the executed run per mode (default 60)")
    p.add_argument("--world", default="A", help="a scenario letter or an SDF world")
    p.add_argument("--depth", type=count(), default=2, help="actions per sampled sequence")
    _common(p, "hifi,adfi-1")
    p.set_defaults(func=run_planner)


def _common(p: argparse.ArgumentParser, modes: str) -> None:
    p.add_argument("--modes", default=modes, help=f"look-ahead presets of config/truck.yaml "
                   f"(default {modes})")
    p.add_argument("--seed", type=integer(at_least(0)), default=0, help="controller seed")
    p.add_argument("--max-action", type=number(above(0)), default=40.0,
                   help="sim seconds after which an action is cut off (default 40)")
    p.add_argument("--plots", type=output_folder, help="folder for the PNG figure")
    p.add_argument("--json", action="store_true", help="print the result as one JSON object")


def _world(text: str) -> str:
    from ..truck.robot import world_path

    return str(world_path(text)) if text in SCENARIOS else text


def _test_worlds(args: argparse.Namespace) -> list[tuple[Path, int | None]]:
    """The test variants, each with the generator seed it is made from (None: the one given)."""
    from ..truck.errors import TruckError

    if args.test_world:
        return [(args.test_world, None)]
    if args.world not in SCENARIOS:
        raise TruckError("--test-world: needed with a training world that is no scenario letter")
    folder = Path(tempfile.mkdtemp(prefix="truck_test_"))
    return [(folder / f"truck_{args.world}_seed{seed}.sdf", seed) for seed in args.test_seeds]


def _collect_on(worlds: list[tuple[Path | str, int | None]], scenario: str, *args, **options):
    """One collection job: first the worlds made by the scenario's generator (those with a seed;
    settling takes minutes, so under --parallel it runs in the job's own process, beside the
    others), then :func:`~sim_fidelity.truck.classifier.collect_worlds` on all of them."""
    from ..truck.classifier import collect_worlds
    from ..world_generators.truck import scenario_sdf

    for path, seed in worlds:
        if seed is not None:
            _say(f"generating a test world: scenario {scenario}, seed {seed} -> {path}")
            Path(path).write_text(scenario_sdf(scenario, seed)[0])
    return collect_worlds([path for path, _ in worlds], *args, **options)


def _say(text: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


def run_classifier(args: argparse.Namespace) -> int:
    """Collect per mode, collect the HiFi test labels, train, and report Table 1's columns."""
    from ..fidelity_manager import FidelityConfig
    from ..truck.bench import CONFIG
    from ..truck.classifier import HORIZON_S

    modes, config = _modes(args.modes), FidelityConfig.load(CONFIG)
    horizon = HORIZON_S if args.horizon is None else args.horizon
    world, test_worlds = _world(args.world), _test_worlds(args)
    jobs = {mode: ([(world, None)], mode, args.budget) for mode in modes}
    jobs["test"] = (test_worlds, "hifi", args.test_budget or args.budget)
    for name, (where, preset, budget) in jobs.items():
        _say(f"{name}: collecting in {preset} on {', '.join(str(w) for w, _ in where)} for "
             f"{budget:g} s" + (" (in parallel)" if args.parallel else ""))
    calls = {name: functools.partial(_collect_on, where, args.world, preset, config, budget,
                                     args.seed,
                                     max_action=args.max_action, horizon=horizon,
                                     progress=functools.partial(_tell_sample, name))
             for name, (where, preset, budget) in jobs.items()}
    if args.parallel:
        with ProcessPoolExecutor(len(calls)) as pool:
            futures = {name: pool.submit(call) for name, call in calls.items()}
            done = {name: future.result() for name, future in futures.items()}
    else:
        done = {name: call() for name, call in calls.items()}
    test = done.pop("test")
    rows = {mode: _classifier_row(col, test, args.budget) for mode, col in done.items()}
    result = {"world": world, "test_worlds": [str(w) for w, _ in test_worlds],
              "budget_s": args.budget,
              "horizon_s": horizon, "modes": modes, "seed": args.seed,
              "max_action_s": args.max_action,
              "test": {"samples": len(test.samples), "picks_better": int(test.y.sum()),
                       "decisive": len(test.decisive().samples),
                       "one_class": test.one_class, "wall_s": test.wall,
                       "diverged": test.diverged, "stalled": test.stalled},
              "rows": rows}
    return _finish(result, args, _plot_classifier, _print_classifier)


def _classifier_row(col, test, budget: float) -> dict:
    """Table 1's columns for one mode's collection; accuracies are None (and ``one_class`` names
    the label) when its labels, or the test's, are all one action: no classifier then."""
    from ..truck.classifier import accuracy, train

    row = {"samples": len(col.samples), "picks_better": int(col.y.sum()),
           "collection_wall_s": col.wall, "sim_s": col.sim_time,
           "rtf": col.sim_time / max(col.wall, 1e-9), "one_class": col.one_class,
           "diverged": col.diverged, "stalled": col.stalled,
           "fit_s": None, "training_accuracy": None, "test_accuracy": None,
           "test_accuracy_decisive": None,
           "test_accuracy_at": {f"{f:g}": _accuracy_at(col, f * budget, test)
                                for f in FRACTIONS}}
    if col.one_class or not col.samples:
        return row
    started = time.perf_counter()
    model = train(col)
    row["fit_s"] = time.perf_counter() - started
    row["training_accuracy"] = accuracy(model, col)
    row["test_accuracy"] = accuracy(model, test)
    decisive = test.decisive()  # ties only say which action was quicker
    if decisive.samples:
        row["test_accuracy_decisive"] = accuracy(model, decisive)
    return row


def _print_classifier(result: dict) -> None:
    test = result["test"]
    print(f"training world {result['world']}, test world(s) {', '.join(result['test_worlds'])} "
          f"({test['samples']} HiFi labels, {test['picks_better']} pick, {test['decisive']} not "
          f"ties{'; %d stuck run(s) restarted' % test['stalled'] if test['stalled'] else ''}); "
          f"{result['budget_s']:g} s of collection per mode, counts "
          f"{result['horizon_s']:g} s after each decision (0: at the action's end)")
    if test["one_class"]:
        print(f"the test labels are all '{test['one_class']}': one class, accuracy on them "
              "measures nothing")
    print(f"{'mode':8} {'samples':>7} {'pick':>5} {'RTF':>6} {'train acc':>9} {'test acc':>8} "
          f"{'not ties':>8}   " + "  ".join(f"test@{f:g}B" for f in FRACTIONS))
    for mode, r in result["rows"].items():
        head = f"{mode:8} {r['samples']:7d} {r['picks_better']:5d} {r['rtf']:6.3f} "
        if r["test_accuracy"] is None:
            why = (f"one class ('{r['one_class']}'): no classifier, no accuracy"
                   if r["one_class"] else "no samples: no classifier")
            print(head + why)
            continue
        print(head + f"{r['training_accuracy']:9.2f} {r['test_accuracy']:8.2f} "
              f"{_acc(r['test_accuracy_decisive'])[1:]}   "
              + "  ".join(_acc(r["test_accuracy_at"][f"{f:g}"]) for f in FRACTIONS))


def _tell_sample(name: str, s) -> None:
    from ..truck.classifier import LABELS

    _say(f"{name}: sample at {s.ready:.0f} s: pick {s.pick.removed} in {s.pick.sim_time:.1f} s, "
         f"sweep {s.sweep.removed} in {s.sweep.sim_time:.1f} s -> {LABELS[s.label]}")


def _acc(value: float | None) -> str:
    return f"{'-':>9}" if value is None else f"{value:9.2f}"


def _accuracy_at(col, wall: float, test) -> float | None:
    """Test accuracy of a model trained on the samples collected within ``wall`` seconds (None
    without a classifier: no samples, or one class, then or in the test)."""
    from ..truck.classifier import accuracy, train

    early = col.until(wall)
    if not early.samples or early.one_class or not test.samples:
        return None
    return accuracy(train(early), test)


def run_planner(args: argparse.Namespace) -> int:
    """Plan and execute per mode; report nodes explored per budget and the unload rate."""
    from ..fidelity_manager import FidelityConfig
    from ..truck.bench import CONFIG
    from ..truck.planner import Planner, execute

    modes, config = _modes(args.modes), FidelityConfig.load(CONFIG)
    world = _world(args.world)
    rows, runs = {}, {}
    for mode in modes:
        _say(f"planning with {mode} look-ahead on {world}: {args.budget:g} s per decision, "
             f"{args.duration:g} s executed in hifi")
        planner = Planner(world, mode, config, args.budget, args.depth, seed=args.seed,
                          max_action=args.max_action)
        strategy = execute(world, planner, args.duration, config, args.seed,
                           progress=lambda d, t, m=mode: _say(
                               f"{m}: t = {t:.1f} s: {d.chosen} after {d.nodes} nodes "
                               f"({d.sequences} sequences"
                               + (f", {d.diverged} diverged" if d.diverged else "")
                               + f") in {d.wall:.0f} s"))
        if strategy.diverged:
            _say(f"{mode}: the executed run ended at t = {strategy.sim_time:.1f} s: "
                 f"{strategy.diverged}")
        planned = [d for d in strategy.decisions if d.nodes]
        rows[mode] = {"decisions": len(strategy.decisions), "planned": len(planned),
                      "nodes": strategy.nodes,
                      "nodes_per_decision": strategy.nodes / max(len(planned), 1),
                      "wall_per_node_s": sum(d.wall for d in planned) / max(strategy.nodes, 1),
                      "sim_s": strategy.sim_time, "unloaded": strategy.unloaded,
                      "removed": strategy.removed, "rate_per_hour": strategy.rate_per_hour,
                      "wall_s": strategy.wall,
                      "diverged_sequences": sum(d.diverged for d in strategy.decisions),
                      "diverged": strategy.diverged}
        runs[mode] = [{"time": d.time, "chosen": str(d.chosen), "nodes": d.nodes,
                       "sequences": d.sequences, "wall_s": d.wall, "values": d.values,
                       "diverged": d.diverged}
                      for d in strategy.decisions]
    result = {"world": world, "budget_s": args.budget, "duration_s": args.duration,
              "depth": args.depth, "modes": modes, "seed": args.seed,
              "max_action_s": args.max_action, "rows": rows, "decisions": runs}
    return _finish(result, args, _plot_planner, _print_planner)


def _print_planner(result: dict) -> None:
    print(f"world {result['world']}: {result['budget_s']:g} s of look-ahead per decision, "
          f"{result['duration_s']:g} s executed in hifi")
    print(f"{'look-ahead':10} {'decisions':>9} {'nodes':>6} {'nodes/dec':>9} {'s/node':>7} "
          f"{'unloaded':>8} {'rate [1/h]':>10} {'removed':>7}")
    for mode, r in result["rows"].items():
        print(f"{mode:10} {r['decisions']:9d} {r['nodes']:6d} {r['nodes_per_decision']:9.1f} "
              f"{r['wall_per_node_s']:7.1f} {r['unloaded']:8d} {r['rate_per_hour']:10.0f} "
              f"{r['removed']:7d}")


def _finish(result: dict, args: argparse.Namespace, plot: Callable[[dict, Path], Path],
            show: Callable[[dict], None]) -> int:
    """The commands' common tail: the command line and the figure into ``result``, then
    ``result`` as one JSON object (``--json``) or as ``show`` prints it, with the plot's path."""
    result["command"] = " ".join(["simfid", *sys.argv[1:]])
    if args.plots:
        result["plots"] = [str(plot(result, args.plots))]
    if args.json:
        print(json.dumps(result))
        return 0
    show(result)
    for path in result.get("plots", []):
        print(f"plot {path}")
    return 0


def _plot_classifier(result: dict, folder: Path) -> Path:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for mode, r in result["rows"].items():
        at = r["test_accuracy_at"]
        label = f"{mode}: one class ({r['one_class']}), no classifier" if r["one_class"] else mode
        ax.plot([float(f) * result["budget_s"] for f in at],
                [float("nan") if v is None else v for v in at.values()], "o-", label=label)
    ax.set_xlabel("wall seconds of data collection")
    ax.set_ylabel(f"test accuracy ({result['test']['samples']} HiFi labels)")
    ax.set_ylim(-0.05, 1.05)
    ax.set_title("pick-or-sweep classifier (paper 000, Table 1)")
    ax.legend()
    fig.tight_layout()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "truck_classifier.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _plot_planner(result: dict, folder: Path) -> Path:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    modes = list(result["rows"])
    left.bar(modes, [result["rows"][m]["nodes_per_decision"] for m in modes])
    left.set_ylabel(f"simulated actions per decision ({result['budget_s']:g} s budget)")
    right.bar(modes, [result["rows"][m]["rate_per_hour"] for m in modes])
    right.set_ylabel(f"unload rate in hifi [packets/h] ({result['duration_s']:g} s run)")
    fig.suptitle("simulation-based planner (paper 000, Fig. 8): look-ahead fidelity")
    fig.tight_layout()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "truck_planner.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
