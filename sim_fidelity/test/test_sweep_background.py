"""A sweep started in a session of its own under ``nice`` lowers its session's scheduler
autogroup to the same nice value (docs/sweeps.md, "A sweep in the background"); one that shares
a session, is not niced, or has no autogroup in effect leaves the group alone."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sim_fidelity.commands.sweep import lower_autogroup

AUTOGROUP = Path("/proc/self/autogroup")
PROBE = ("from pathlib import Path; from sim_fidelity.commands.sweep import lower_autogroup; "
         "print(lower_autogroup()); print(Path('/proc/self/autogroup').read_text().strip())")


def _autogroup_nice(text: str) -> int | None:
    """The nice value in an autogroup line (``/autogroup-148 nice 0``), None where the kernel
    shows none (the process is still in its default group, e.g. of a session from boot)."""
    return int(text.split()[-1]) if text.strip() else None


def _probe(nice: int, own_session: bool) -> tuple[str, int]:
    lowered, _, group = subprocess.run(
        ["nice", "-n", str(nice), sys.executable, "-c", PROBE], start_new_session=own_session,
        capture_output=True, text=True, timeout=60, check=True).stdout.partition("\n")
    value = _autogroup_nice(group)
    if value is None:
        pytest.skip("no scheduler autogroup in effect for a child process here")
    return lowered.strip(), value


def _own_group_nice() -> int:
    value = _autogroup_nice(AUTOGROUP.read_text()) if AUTOGROUP.exists() else None
    if value is None:  # e.g. a process of the boot session, in the kernel's default group
        pytest.skip("no scheduler autogroup in effect for this process here")
    return value


def test_a_niced_session_leader_lowers_its_group():
    assert _probe(7, own_session=True) == ("7", 7)


def test_a_process_sharing_a_session_or_not_niced_leaves_the_group():
    before = _own_group_nice()
    assert _probe(7, own_session=False) == ("None", before)  # the test's own session: untouched
    assert _own_group_nice() == before
    assert _probe(0, own_session=True)[0] == "None"


def test_where_the_kernel_shows_no_autogroup_nothing_is_written(tmp_path, monkeypatch):
    """A process in its default group reads an empty autogroup file; writing it would fail or
    change a group that does not schedule the process alone, so the sweep leaves it."""
    shown = tmp_path / "autogroup"
    shown.write_text("")
    monkeypatch.setattr(os, "nice", lambda inc: 19)
    monkeypatch.setattr(os, "getsid", lambda pid: os.getpid())
    assert lower_autogroup(shown) is None
    assert shown.read_text() == ""
    shown.write_text("/autogroup-9 nice 0\n")
    assert lower_autogroup(shown) == 19
    assert shown.read_text() == "19"
