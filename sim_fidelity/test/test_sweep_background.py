"""A sweep started in a session of its own under ``nice`` lowers its session's scheduler
autogroup to the same nice value (docs/sweeps.md, "A sweep in the background"); one that shares
a session, is not niced, or has no autogroup in effect leaves the group alone."""
from __future__ import annotations

import os
import subprocess
import sys

from sim_fidelity.commands.sweep import lower_autogroup

PROBE = ("from pathlib import Path; from sim_fidelity.commands.sweep import lower_autogroup; "
         "print(lower_autogroup()); print(Path('/proc/self/autogroup').read_text().strip())")
# a session leader, not niced: runs PROBE itself, then PROBE niced in a child sharing its session,
# then reads its group again
LEADER = ("import subprocess, sys; probe = sys.argv[1]; "
          "subprocess.run([sys.executable, '-c', probe], check=True); "
          "subprocess.run(['nice', '-n', '7', sys.executable, '-c', probe], check=True); "
          "print(open('/proc/self/autogroup').read().strip())")


def _autogroup_nice(text: str) -> int | None:
    """The nice value in an autogroup line (``/autogroup-148 nice 0``), None where the kernel
    shows none (the process is still in its default group, e.g. of a session from boot)."""
    return int(text.split()[-1]) if text.strip() else None


def _in_a_new_session(*command: str) -> list[str]:
    """The output lines of ``command`` run as the leader of a session of its own, which the
    kernel gives an autogroup of its own (whatever group the test itself runs in)."""
    return subprocess.run(list(command), start_new_session=True, capture_output=True, text=True,
                          timeout=60, check=True).stdout.splitlines()


def test_a_niced_session_leader_lowers_its_group():
    lowered, group = _in_a_new_session("nice", "-n", "7", sys.executable, "-c", PROBE)
    assert (lowered, _autogroup_nice(group)) == ("7", 7)


def test_a_process_sharing_a_session_or_not_niced_leaves_the_group():
    leader, leader_group, child, child_group, leader_after = _in_a_new_session(
        sys.executable, "-c", LEADER, PROBE)
    assert leader == "None" and _autogroup_nice(leader_group) == 0  # not niced: untouched
    assert child == "None"  # niced, but not the session's leader
    assert child_group == leader_group == leader_after  # one group, still at nice 0


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
