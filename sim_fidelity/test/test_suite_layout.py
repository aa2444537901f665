"""The test suite's own layout: no test module imports another test module. What several test
files share (worlds, cases, stand-ins, listeners) lives in a helper module beside them
(``*_cases.py``, ``served_handlers.py``, ...), so running or changing one test file never runs or
breaks another's collection."""
from __future__ import annotations

import ast
from pathlib import Path

TEST_DIR = Path(__file__).resolve().parent


def imported_test_modules(path: Path) -> list[str]:
    """``line: module`` for every import in ``path`` of a module named ``test_*``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                 [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level
                 else [])
        found += [f"{node.lineno}: {n}" for n in names if n.split(".")[0].startswith("test_")]
    return found


def test_no_test_module_imports_another():
    offenders = {p.name: hits for p in sorted(TEST_DIR.glob("*.py"))
                 if (hits := imported_test_modules(p))}
    assert offenders == {}, (f"test modules importing other test modules (move what they share "
                             f"into a helper module): {offenders}")


def test_the_check_sees_both_import_forms(tmp_path):
    sample = tmp_path / "test_sample.py"
    sample.write_text("import os\nimport test_other\n\ndef f():\n"
                      "    from test_more.sub import x\n    from .test_rel import y\n")
    assert imported_test_modules(sample) == ["2: test_other", "5: test_more.sub"]
