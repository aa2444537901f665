"""DDS domains for processes a test or a benchmark starts, each taken by an exclusive lock file so
that no other run on the machine (other sessions' test suites and benchmarks) uses it meanwhile:
a server of another run in the same domain would answer in place of this run's."""
from __future__ import annotations

import fcntl
import itertools
import os
import tempfile
from pathlib import Path

DOMAINS = range(101, 230)  # for started servers
PROCESS_DOMAINS = range(20, 100)  # a test process's own default (its in-process nodes)
HELD_AT_MOST = 24  # per process: the latest ones (a module's servers), room for five runs
LOCKS = Path(tempfile.gettempdir()) / "sim_fidelity_test_domains"
_held: list[int] = []  # domains this process holds, oldest first
_locks: dict[int, int] = {}  # domain -> the open descriptor of its lock file
_start = itertools.count((os.getpid() * 7) % len(DOMAINS))


def _take(domain: int) -> bool:
    """Whether this process now holds ``domain``'s lock (kept open in ``_locks``)."""
    LOCKS.mkdir(exist_ok=True)
    fd = os.open(LOCKS / f"{domain}.lock", os.O_CREAT | os.O_RDWR, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return False
    _locks[domain] = fd
    return True


def process_domain() -> int:
    """The default DDS domain of this process (a test process's in-process nodes), one of
    PROCESS_DOMAINS that no other process of this machine holds (two pytest workers, other runs);
    held until the process ends. When all are held, one chosen by the process id (shared)."""
    first = os.getpid() % len(PROCESS_DOMAINS)
    for i in range(len(PROCESS_DOMAINS)):
        domain = PROCESS_DOMAINS[(first + i) % len(PROCESS_DOMAINS)]
        if domain in _locks or _take(domain):
            return domain
    return PROCESS_DOMAINS[first]


def next_domain() -> int:
    """A DDS domain that no other process of this machine's runs holds. Each is taken with an
    exclusive lock file, kept for the next HELD_AT_MOST domains this process takes (released
    when it ends); when every free one is taken, this process's own oldest comes back (or,
    holding none, one of them at random)."""
    first = next(_start)
    for i in range(len(DOMAINS)):
        domain = DOMAINS[(first + i) % len(DOMAINS)]
        if domain in _locks or not _take(domain):
            continue
        _held.append(domain)
        if len(_held) > HELD_AT_MOST:  # long done: let other runs have it
            os.close(_locks.pop(_held.pop(0)))
        return domain
    if not _held:  # other runs hold them all: share one, as chance gives it
        return DOMAINS[first]
    _held.append(_held.pop(0))  # all taken: the oldest of ours (its test has ended)
    return _held[-1]
