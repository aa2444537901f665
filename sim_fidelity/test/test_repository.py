"""The repository stands alone: no file in it cites a file outside it.

Every text file git tracks (or would track: untracked but not ignored) is scanned for the
references a clone could not follow: the design notes the project started from (its measured
facts now live in docs/platform_notes.md), a sibling ``shared`` folder, and absolute paths of
the development machine. A hit fails naming the file and line.
"""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Written so that this file does not match itself.
OUTSIDE = {
    "the design notes outside the repository": re.compile(r"\bDESIGN\.md\b"),
    "a sibling 'shared' folder": re.compile(r"\.\./shared\b"),
    "an absolute path of the development machine": re.compile(r"(?<![\w.])/wor[k]/"),
}


def repository_files() -> list[Path]:
    """Tracked and untracked-but-not-ignored files, relative to the repository root."""
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
                            cwd=ROOT, capture_output=True, check=True).stdout
    return [Path(name) for name in listed.decode().split("\0") if name]


def text_of(path: Path) -> str | None:
    """The file's text, or None for a binary file (a NUL byte) or one gone from the tree."""
    try:
        data = (ROOT / path).read_bytes()
    except FileNotFoundError:  # deleted in the working tree, not yet in the index
        return None
    return None if b"\0" in data[:8192] else data.decode("utf-8", errors="replace")


def test_no_file_cites_anything_outside_the_repository():
    files = repository_files()
    assert Path("README.md") in files and Path("sim_fidelity/package.xml") in files
    hits = []
    for path in files:
        text = text_of(path)
        if text is None:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            hits += [f"{path}:{number}: {what}: {line.strip()}"
                     for what, pattern in OUTSIDE.items() if pattern.search(line)]
    assert not hits, "references outside the repository:\n" + "\n".join(hits)


def test_the_scan_finds_each_kind_of_reference():
    samples = ["see DESIGN" + ".md", "seeds in ../" + "shared/seeds",
               "python at /wor" + "k/main/.venv"]
    for sample, pattern in zip(samples, OUTSIDE.values()):
        assert pattern.search(sample), sample
    assert not any(p.search("docs/platform_notes.md, ./work/x, rework/y") for p in OUTSIDE.values())
