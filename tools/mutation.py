"""Mutation testing of the core rule modules (``make mutation``; not part of the test suite).

For each target of tools/mutation.toml: copy the package folder (sim_fidelity/) into
build/mutation/<target>/ (so the shared working tree is never touched), write mutmut's
configuration there (only the target's modules are mutated; only its fast test files run),
run ``mutmut run`` with one worker, and print the score and the surviving mutants.
Scores go to build/mutation/scores.json; docs/testing.md records them by hand with date and
commit.

    python tools/mutation.py                 # every target
    python tools/mutation.py signalers ...   # the named targets
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import tomllib
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "sim_fidelity"
OUT = ROOT / "build" / "mutation"
COPIED = ("sim_fidelity", "test", "config", "worlds", "models", "resource", "package.xml",
          "setup.py")
BESIDE = ("docs",)
HANG_S = 180.0  # a mutant whose tests give no verdict in this long is a timeout (killed)
TIMEOUT_RC = -1  # repository folders some tests read from beside the package folder


def load_targets(path: Path = ROOT / "tools" / "mutation.toml") -> dict[str, dict]:
    """The targets table: name -> {"modules": [...], "tests": [...]}."""
    return tomllib.loads(path.read_text())["targets"]


def prepare(name: str, target: dict) -> Path:
    """A fresh copy of the package folder with mutmut's [mutmut] section in its setup.cfg."""
    missing = [p for p in target["modules"] + target["tests"]
               if not (PACKAGE / p.split("::")[0]).exists()]
    if missing:
        raise SystemExit(f"tools/mutation.toml: target {name!r} names missing file(s): {missing}")
    work = OUT / name
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "mutants")
    for item in COPIED:
        src = PACKAGE / item
        if src.is_dir():
            shutil.copytree(src, work / item, ignore=ignore)
        else:
            shutil.copy2(src, work / item)
    # mutmut runs the tests in <work>/mutants/: a test's parents[2] is <work>, as the
    # repository root is for the package folder
    for item in BESIDE:
        shutil.copytree(ROOT / item, work / item, ignore=ignore)
    lines = lambda key, values: f"{key} =\n" + "".join(f"    {v}\n" for v in values)  # noqa: E731
    (work / "setup.cfg").write_text(
        "[mutmut]\nsource_paths = sim_fidelity\n"
        + lines("only_mutate", target["modules"])
        + lines("also_copy", [c for c in COPIED if c != "sim_fidelity"])
        + lines("pytest_add_cli_args_test_selection", target["tests"])
        + lines("pytest_add_cli_args", ["-p", "no:cacheprovider"])
        # not fork-safe: mutmut only generates the mutants and maps the tests (its forked runs
        # are cut short); judge_in_processes then runs each mutant
        + ("" if target.get("fork", True)
           else "timeout_constant = 0.5\ntimeout_multiplier = 0.1\n"))
    return work


def statuses(work: Path) -> dict[str, str]:
    """Every mutant of the last run in ``work``: name -> status (killed, survived, ...)."""
    listing = subprocess.run([sys.executable, "-m", "mutmut", "results", "--all", "true"],
                             cwd=work, capture_output=True, text=True, check=True).stdout
    pairs = (line.strip().rpartition(": ") for line in listing.splitlines() if ": " in line)
    return {name: status for name, _, status in pairs}


def module_of(mutant: str) -> str:
    """``pkg.mod.xǁClassǁmethod__mutmut_3`` or ``pkg.mod.x_func__mutmut_3`` -> ``pkg.mod``."""
    return mutant.split(".x", 1)[0] if ".xǁ" in mutant else mutant.rsplit(".x_", 1)[0]


def score(counts: dict[str, int]) -> float:
    """Killed (a timeout counts as killed) over all mutants the tests ran against."""
    caught = counts.get("killed", 0) + counts.get("timeout", 0)
    judged = caught + counts.get("survived", 0)
    return caught / judged if judged else float("nan")


def tests_of(work: Path) -> dict[str, list[str]]:
    """mutmut's map from a function (``pkg.mod.xǁClassǁmethod``) to the tests that reach it."""
    stats = json.loads((work / "mutants" / "mutmut-stats.json").read_text())
    return {f: sorted(tests) for f, tests in stats["tests_by_mangled_function_name"].items()}


def judge_in_processes(work: Path, target: dict, found: dict[str, str]) -> dict[str, str]:
    """Each mutant judged in mutmut's copy by pytest runs in a child process of its own
    (tools/mutation_batch.py: one process judges mutant after mutant, switching mutmut's
    trampolines by ``MUTANT_UNDER_TEST``), never in a fork: for tests that start rclpy, which
    hangs in a process forked after it was used, as mutmut's own runs are. As mutmut does, only
    the tests that reach the mutated function run (the target's test files if mutmut mapped
    none). The original code's tests run first and must pass. A mutant whose tests give no
    verdict within ``HANG_S`` is a timeout; the child is restarted past it."""
    mapped = tests_of(work)
    todo = [m for m, status in sorted(found.items()) if status != "no tests"]
    jobs = [(m, mapped.get(m.rsplit("__mutmut_", 1)[0]) or target["tests"]) for m in todo]
    out = work / "judged.txt"
    out.write_text("")
    verdicts: dict[str, int] = {}
    pending = [("", target["tests"])] + jobs  # the baseline first
    while pending:
        (work / "jobs.json").write_text(json.dumps(pending))
        child = subprocess.Popen(
            [sys.executable, str(ROOT / "tools" / "mutation_batch.py"), str(work / "jobs.json"),
             str(out)], cwd=work / "mutants", stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
        seen, last = len(verdicts), time.monotonic()
        while child.poll() is None and time.monotonic() - last < HANG_S:
            time.sleep(1.0)
            lines = out.read_text().splitlines()
            verdicts = {name: int(rc) for name, rc in (line.split() for line in lines)}
            if len(verdicts) > seen:
                if "-" in verdicts and verdicts["-"] != 0:
                    child.kill()
                    raise SystemExit(f"the original code fails its tests (pytest exit "
                                     f"{verdicts['-']}) in {work / 'mutants'}")
                seen, last = len(verdicts), time.monotonic()
                if len(verdicts) % 25 == 0:
                    print(f"[mutation]   {len(verdicts) - 1}/{len(jobs)} judged", flush=True)
        if child.poll() is None:  # hung on the next mutant: a timeout, go on past it
            child.kill()
            child.wait()
        lines = out.read_text().splitlines()
        verdicts = {name: int(rc) for name, rc in (line.split() for line in lines)}
        pending = [(m, t) for m, t in pending if (m or "-") not in verdicts]
        if pending and pending[0][0] == "":
            raise SystemExit(f"the original code's tests did not finish in {work / 'mutants'}")
        if pending:  # the child died or hung on this one
            with out.open("a") as f:
                f.write(f"{pending[0][0]} {TIMEOUT_RC}\n")
            verdicts[pending[0][0]] = TIMEOUT_RC
            pending = pending[1:]
    judged = {m: ("timeout" if verdicts[m] == TIMEOUT_RC else
                  "survived" if verdicts[m] == 0 else "killed") for m in todo}
    print(f"[mutation]   {len(todo)}/{len(todo)} judged", flush=True)
    return {**{m: s for m, s in found.items() if s == "no tests"}, **judged}


def run(name: str, target: dict) -> dict:
    """Run mutmut on one target; returns per-module counts, scores and survivors."""
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True, check=False).stdout.strip() or "?"
    started = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    work = prepare(name, target)
    print(f"[mutation] {name} at {commit} (working tree copied {started}): "
          f"{', '.join(target['modules'])}", flush=True)
    with (work / "mutmut.log").open("w") as log:
        subprocess.run([sys.executable, "-m", "mutmut", "run", "--max-children", "1"], cwd=work,
                       stdout=log, stderr=subprocess.STDOUT, check=False)
    all_statuses = statuses(work)
    if not target.get("fork", True):
        all_statuses = judge_in_processes(work, target, all_statuses)
    modules: dict[str, dict] = {}
    for mutant, status in sorted(all_statuses.items()):
        entry = modules.setdefault(module_of(mutant), {"counts": {}, "survivors": []})
        entry["counts"][status] = entry["counts"].get(status, 0) + 1
        if status == "survived":
            entry["survivors"].append(mutant)
    for function in target.get("focus", []):  # a rule inside a larger module, scored apart
        cls, _, name = function.rpartition(".")
        mark = f"xǁ{cls}ǁ{name}__mutmut_" if cls else f"x_{name}__mutmut_"
        counts: dict[str, int] = {}
        for mutant, status in all_statuses.items():
            if mark in mutant:
                counts[status] = counts.get(status, 0) + 1
        names = [m for m in all_statuses if mark in m]
        if not names:
            raise SystemExit(f"tools/mutation.toml: target {name!r}: no mutant of {function!r}")
        modules[f"{module_of(names[0])}:{function}"] = {
            "counts": counts, "survivors": [m for m in names if all_statuses[m] == "survived"]}
    for module, entry in modules.items():
        entry.update(score=score(entry["counts"]), commit=commit, started=started)
        counts = ", ".join(f"{n} {k}" for k, n in sorted(entry["counts"].items()))
        print(f"[mutation]   {module}: {entry['score']:.1%} killed ({counts})", flush=True)
        for s in entry["survivors"]:
            print(f"      survived: {s}")
    print(f"[mutation] inspect one: cd {work.relative_to(ROOT)} && mutmut show <name>", flush=True)
    return modules


def main(argv: list[str]) -> int:
    targets = load_targets()
    unknown = [n for n in argv if n not in targets]
    if unknown:
        print(f"unknown target(s) {unknown}; known: {', '.join(targets)}", file=sys.stderr)
        return 2
    results = {m: r for n in (argv or targets) for m, r in run(n, targets[n]).items()}
    OUT.mkdir(parents=True, exist_ok=True)
    scores = OUT / "scores.json"
    previous = json.loads(scores.read_text()) if scores.exists() else {}
    scores.write_text(json.dumps({**previous, **results}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
