"""The sweep table: JSON Lines, one row per finished run (or failed run), appended as each run
finishes, so an interrupted sweep keeps every row it had and a rerun skips them.

A row: ``run`` (the run key: function and parameters), ``function``, ``params``, ``result`` (the
function's dict, nested dicts flattened to dotted keys; null when it failed), ``error`` (null,
or the exception's type and message after Ray's one retry), ``seconds`` (wall time of the run),
``git`` (the commit of the code the run's worker imported, and whether the tree had changes),
``machine`` (where it ran), ``workers`` (runs going on at once in the sweep: timings are
comparable only within that).
The latest row of a run counts. Rows are matched to runs by their parameters with the function's
current defaults filled in (:func:`row_key`), so a parameter added to a function later (whose
default keeps the old behaviour) does not make the rows written before it run again.
"""
from __future__ import annotations

import datetime
import functools
import json
import os
import platform
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterable

from .errors import SweepError
from .functions import FUNCTIONS
from .spec import run_key


def flatten(result: dict[str, Any], drop: Iterable[str] = (), prefix: str = "") -> dict[str, Any]:
    """Nested dicts as dotted keys (``atr.Design``); the keys in ``drop`` left out."""
    out: dict[str, Any] = {}
    for key, value in result.items():
        if key in drop:
            continue
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(flatten(value, (), f"{name}."))
        else:
            out[name] = value
    return out


def git_commit() -> dict[str, Any]:
    """The commit of the code being run and whether tracked files differ from it (None outside a
    git checkout)."""
    here = Path(__file__).resolve().parent

    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(["git", "-C", str(here), *args], capture_output=True, text=True,
                                  timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    return {"commit": commit,
            "dirty": bool(git("status", "--porcelain", "--untracked-files=no")) if commit else None}


@functools.cache
def code_commit() -> dict[str, Any]:
    """:func:`git_commit` read once per process, the first time it is asked: the commit of the
    code this process imported (a process, a Ray worker above all, keeps the modules it imported
    whatever is committed after)."""
    return git_commit()


def machine() -> dict[str, Any]:
    """Where this process runs: host name, platform, cores, Python."""
    return {"host": socket.gethostname(), "platform": platform.platform(), "cpus": os.cpu_count(),
            "python": platform.python_version()}


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def read_rows(path: str | Path) -> list[dict[str, Any]]:
    """Every row of the table at ``path`` (none if it does not exist yet). A last line cut short
    (a writer killed mid-line) is left out with a warning; any other bad line is an error naming
    the file and line."""
    path = Path(path)
    if not path.exists():
        return []
    try:
        text = path.read_text()
    except OSError as e:
        raise SweepError(f"sweep table {path}: cannot read ({e.strerror})") from None
    lines = text.split("\n")
    rows = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            if not isinstance(row, dict) or "run" not in row or "params" not in row:
                raise ValueError("not a row (needs 'run' and 'params')")
        except ValueError as e:
            if number == len(lines):  # no newline after it: the write was cut short
                print(f"warning: {path}:{number}: incomplete last line left out", file=sys.stderr)
                continue
            raise SweepError(f"sweep table {path}:{number}: {e}") from None
        rows.append(row)
    return rows


def row_key(row: dict[str, Any]) -> str:
    """The run key of ``row``, its parameters completed by its function's current defaults: a row
    written before a parameter was added matches the run at that parameter's default."""
    function = FUNCTIONS.get(row.get("function"))
    return run_key(row.get("function"), {**(function.defaults if function else {}),
                                         **row["params"]})


def latest(rows: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The last row of every run (:func:`row_key`), in the order the runs first appeared."""
    out: dict[str, dict[str, Any]] = {}
    for row in rows:
        out[row_key(row)] = row
    return out


def finished(path: str | Path) -> set[str]:
    """Run keys whose latest row succeeded: a rerun skips these (failed ones run again)."""
    return {k for k, row in latest(read_rows(path)).items() if row.get("error") is None}


class TableWriter:
    """Appends rows to a table, each written and flushed to disk whole before the next."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        cut = self.path.exists() and self.path.stat().st_size and \
            not self.path.read_bytes().endswith(b"\n")
        self._file = open(self.path, "a")
        if cut:  # a line cut short stays apart from the rows that follow
            self._file.write("\n")

    def append(self, row: dict[str, Any]) -> None:
        self._file.write(json.dumps(row, default=str) + "\n")
        self._file.flush()
        os.fsync(self._file.fileno())

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> TableWriter:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
