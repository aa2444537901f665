"""Every Python file in the repository passes ``ruff check`` with the repository's ruff.toml."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUFF = Path(sys.executable).parent / "ruff"  # installed into the venv by tools/bootstrap.sh


def test_ruff_check_passes():
    assert RUFF.is_file(), f"{RUFF} is missing: run tools/bootstrap.sh (ruff is in its PYDEPS)"
    done = subprocess.run([str(RUFF), "check", "--config", str(ROOT / "ruff.toml"),
                           "--no-cache", "--output-format", "concise", str(ROOT)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, f"ruff check found problems:\n{done.stdout}{done.stderr}"
