"""A sweep started in a session of its own under ``nice`` lowers its session's scheduler
autogroup to the same nice value (docs/sweeps.md, "A sweep in the background"); one that shares
a session, or is not niced, leaves the group alone."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not Path("/proc/self/autogroup").exists(),
                                reason="no scheduler autogroups on this kernel")

PROBE = ("from sim_fidelity.commands.sweep import lower_autogroup; "
         "print(lower_autogroup()); print(open('/proc/self/autogroup').read().split()[-1])")


def _probe(nice: int, own_session: bool) -> tuple[str, int]:
    out = subprocess.run(["nice", "-n", str(nice), sys.executable, "-c", PROBE],
                         start_new_session=own_session, capture_output=True, text=True,
                         timeout=60, check=True).stdout.split()
    return out[0], int(out[1])


def own_group_nice() -> int:
    return int(Path("/proc/self/autogroup").read_text().split()[-1])


def test_a_niced_session_leader_lowers_its_group():
    assert _probe(7, own_session=True) == ("7", 7)


def test_a_process_sharing_a_session_or_not_niced_leaves_the_group():
    before = own_group_nice()
    assert _probe(7, own_session=False) == ("None", before)  # the test's own session: untouched
    assert own_group_nice() == before
    assert _probe(0, own_session=True)[0] == "None"
