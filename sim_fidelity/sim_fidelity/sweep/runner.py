"""Running a sweep on Ray: a local instance by default, a cluster when an address is given.

Local mode starts a fresh instance (``address="local"``: never one found on the machine) with
one worker per core (or ``workers``), the dashboard off and usage statistics off, every Ray
server bound to 127.0.0.1: Ray replaces a loopback ``_node_ip_address`` by the machine's
routable address unless ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`` is set before it is imported
(then it keeps 127.0.0.1 and its servers listen there only; checked with ``ss -ltnp``, see
docs/sweeps.md), so the runner sets that and refuses to go on if the node's address is not
loopback. Workers get the network rule (``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST``) and ``HOME``.

Scheduling, retries and transport are Ray's: a run that raises is retried once
(``retry_exceptions``); a second failure is recorded with its error. At most ``workers`` runs
are in flight; each finished run is appended to the table at once, so Ctrl-C (dropping the runs
in flight) keeps every finished row. Ray is imported here only.

A Ray worker keeps the code it imported across commits (a cluster's workers, or a long-lived
local instance, outlive the driver that started them): each row carries the commit read by the
worker that ran it (:func:`~.table.code_commit`), and a row whose worker ran another commit than
the driver's is recorded as an error (:func:`stale_code`), its result kept but not counted, so a
rerun with fresh workers runs it again.
"""
from __future__ import annotations

import os
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from .errors import SweepError
from .functions import SweepFunction, get
from .spec import run_key
from .table import TableWriter, code_commit, finished, flatten, machine, now

LOOPBACK = ("127.0.0.1", "::1", "localhost")


def worker_env() -> dict[str, str]:
    """What every Ray worker must have: the network rule and a HOME (rclpy fails without)."""
    return {"ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST", "HOME": os.environ.get("HOME") or "/tmp"}


def import_ray():
    """The ``ray`` module, or an error saying it is missing and how to get it."""
    try:
        import ray
    except ImportError:
        raise SweepError("sweeps run on Ray: the Python package 'ray' is missing (tools/"
                         "bootstrap.sh installs it; or pip install ray)") from None
    return ray


@contextmanager
def ray_session(workers: int | None = None, address: str | None = None) -> Iterator[int]:
    """Ray ready for tasks; yields how many runs go on at once. A session already open in this
    process is used as it is (and left open); one started here is shut down on exit."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # nothing phones home
    if address is None:
        os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"  # node address stays 127.0.0.1
    ray = import_ray()
    started = not ray.is_initialized()
    if started:
        env = {"env_vars": worker_env()}
        if address is None:
            ray.init(address="local", _node_ip_address="127.0.0.1", include_dashboard=False,
                     num_cpus=workers or os.cpu_count() or 1, runtime_env=env,
                     log_to_driver=False, logging_level="warning")
            node = ray.util.get_node_ip_address()
            if node not in LOOPBACK:
                ray.shutdown()
                raise SweepError(f"local Ray took the address {node}, not loopback; was ray "
                                 "imported before the sweep runner set "
                                 "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0?")
        else:
            ray.init(address=address, runtime_env=env, log_to_driver=False,
                     logging_level="warning")
    try:
        yield workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
    finally:
        if started:
            ray.shutdown()


def execute(name: str, params: dict[str, Any]) -> dict[str, Any]:
    """One run, in a Ray worker: the row's result part (flattened), wall time, where it ran and
    the commit of the code this worker imported (read before its first run imports the
    function)."""
    git = code_commit()
    fn = get(name)
    started, t0 = now(), time.perf_counter()
    result = fn(params)
    return {"result": flatten(result, fn.table_drop), "seconds": time.perf_counter() - t0,
            "started": started, "machine": machine(), "git": git}


def stale_code(worker: dict[str, Any] | None, driver: dict[str, Any]) -> str | None:
    """The error of a row whose worker ran other code than the driver's (commit, or a clean
    against a changed tree), or None; a worker outside a git checkout cannot be told apart."""
    if not worker or worker.get("commit") is None or worker == driver:
        return None

    def name(git: dict[str, Any]) -> str:
        dirty = " (dirty)" if git.get("dirty") else ""
        return f"{(git.get('commit') or 'no checkout')[:12]}{dirty}"
    return (f"StaleCode: the worker ran commit {name(worker)}, the driver is at {name(driver)}: a "
            "Ray worker kept code imported before a commit (restart Ray: 'ray stop', then "
            "'ray start ...' on each machine); the result is kept in the row, not counted")


@dataclass
class SweepOutcome:
    """How a sweep ended: runs done, failed (after the retry), skipped (already in the table)."""

    done: int = 0
    failed: int = 0
    skipped: int = 0
    workers: int = 0


def _error(e: BaseException) -> str:
    cause = getattr(e, "cause", None) or e
    return f"{type(cause).__name__}: {cause}".strip()


def run_sweep(function: SweepFunction, runs: list[dict[str, Any]], out: str | Path,
              workers: int | None = None, address: str | None = None,
              progress: bool = True) -> SweepOutcome:
    """Run every one of ``runs`` (complete parameter dicts) not yet in the table ``out``;
    append a row per run as it finishes. KeyboardInterrupt drops the runs in flight and
    propagates, the finished rows kept."""
    from tqdm import tqdm

    have = finished(out)
    todo: dict[str, dict[str, Any]] = {}
    for params in runs:
        key = run_key(function.name, params)
        if key not in have:
            todo.setdefault(key, params)
    outcome = SweepOutcome(skipped=len({run_key(function.name, p) for p in runs}) - len(todo))
    if not todo:
        return outcome
    git = code_commit()
    with ray_session(workers, address) as concurrency:
        ray = import_ray()
        outcome.workers = concurrency
        task = ray.remote(max_retries=1, retry_exceptions=True)(execute)
        queue = list(todo.items())
        inflight: dict[Any, tuple[str, dict[str, Any]]] = {}
        bar = tqdm(total=len(queue), file=sys.stderr, disable=not progress, unit="run",
                   bar_format="{desc}{n_fmt}/{total_fmt} done{postfix} "
                              "[{elapsed}<{remaining}]")
        bar.set_description_str(f"{function.name} on {concurrency} workers: ")
        with TableWriter(out) as table, bar:
            try:
                while queue or inflight:
                    while queue and len(inflight) < concurrency:
                        key, params = queue.pop(0)
                        cpus = min(function.cpus(params), concurrency)
                        inflight[task.options(num_cpus=cpus).remote(function.name, params)] = \
                            (key, params)
                    ready, _ = ray.wait(list(inflight), num_returns=1, timeout=1.0)
                    for ref in ready:
                        key, params = inflight.pop(ref)
                        row = {"run": key, "function": function.name, "params": params}
                        try:
                            row.update(ray.get(ref))
                            row["error"] = stale_code(row["git"], git)
                        except Exception as e:  # noqa: BLE001 - recorded in the row
                            row.update(result=None, error=_error(e), started=None, seconds=None,
                                       machine=None, git=git)
                        if row["error"] is None:
                            outcome.done += 1
                        else:
                            outcome.failed += 1
                        table.append({**row, "workers": concurrency})
                        bar.set_postfix_str(f"{outcome.failed} failed, "
                                            f"{len(queue) + len(inflight)} remaining",
                                            refresh=False)
                        bar.update(1)
            except KeyboardInterrupt:
                # the runs in flight end with Ray's shutdown (local) or with this driver's job
                # (cluster); ray.cancel(force=True) here raced a run finishing at that moment
                # and aborted the driver (Ray 2.60: "Tried to complete task that was not pending")
                print(f"\nsweep interrupted: {outcome.done} done, {outcome.failed} failed, "
                      f"{len(inflight)} in flight dropped, {len(queue)} not started; the table "
                      f"keeps every finished row", file=sys.stderr)
                raise
    return outcome
