"""conftest.py's CI rule: with CI=true a skipped test or module fails (unless marked optional);
without it, skips stay skips. Checked by running pytest on a scratch test folder."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SCRATCH_TESTS = {
    "test_needs_module.py": "import pytest\npytest.importorskip('no_such_module_for_ci')\n"
                            "def test_never_runs():\n    pass\n",
    "test_needs_things.py": "import pytest\n\ndef test_needs_a_thing():\n"
                            "    pytest.skip('needs a thing')\n\n@pytest.mark.optional\n"
                            "def test_optional():\n    pytest.skip('optional thing')\n\n"
                            "def test_fine():\n    pass\n",
}


def outcome(tmp_path: Path, ci: str) -> str:
    for name, text in SCRATCH_TESTS.items():
        (tmp_path / name).write_text(text)
    shutil.copy(Path(__file__).with_name("conftest.py"), tmp_path / "conftest.py")
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    if ci:
        env["CI"] = ci
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider",
                           "--continue-on-collection-errors", str(tmp_path)], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=120)
    return done.stdout


@pytest.mark.parametrize("ci", ["true", "1"])
def test_skips_fail_in_ci_except_optional_ones(tmp_path, ci):
    out = outcome(tmp_path, ci)
    assert "FAILED test_needs_things.py::test_needs_a_thing - CI=true" in out, out
    assert "ERROR test_needs_module.py - CI=true" in out, out
    assert "SKIPPED [1] test_needs_things.py" in out and "optional thing" in out, out
    assert "PASSED test_needs_things.py::test_fine" in out, out


def test_skips_stay_skips_outside_ci(tmp_path):
    out = outcome(tmp_path, "")
    assert "1 passed, 3 skipped" in out and "FAILED" not in out and "ERROR" not in out, out
