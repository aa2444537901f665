"""Judge many mutants in one process (the child tools/mutation.py starts for ``fork = false``
targets): run in mutmut's copy (``build/mutation/<target>/mutants``), it reads a JSON list of
``[mutant, [test ids]]`` pairs and, for each, switches mutmut's trampolines to that mutant
(``MUTANT_UNDER_TEST``, read on every call) and runs its tests with ``pytest.main``, appending
``<mutant> <pytest exit code>`` to the output file as each ends. No fork: rclpy hangs in a
process forked after it was used. The parent restarts it past a mutant that hangs.

    python tools/mutation_batch.py <jobs.json> <results.txt>
"""
from __future__ import annotations

import json
import os
import sys

BASELINE = ""  # no mutant: the original code, whose tests must pass


def main(jobs_path: str, out_path: str) -> int:
    sys.path.insert(0, os.getcwd())  # the copy's sim_fidelity first, as ``python -m`` does
    import pytest
    jobs = json.loads(open(jobs_path).read())
    with open(out_path, "a") as out:
        for mutant, tests in jobs:
            os.environ["MUTANT_UNDER_TEST"] = mutant
            rc = int(pytest.main(["-x", "-q", "-p", "no:cacheprovider", *tests]))
            out.write(f"{mutant or '-'} {rc}\n")
            out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
