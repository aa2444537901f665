"""Where the package's data folders (``config``, ``worlds``, ``models``) are.

From a source checkout (or an editable install) they are beside the package; in an installed ROS 2
package they are in its ament share directory (``setup.py`` installs them there).
"""
from __future__ import annotations

from pathlib import Path

SOURCE_ROOT = Path(__file__).resolve().parents[1]


def data_dir(kind: str) -> Path:
    """The folder ``kind`` (``config``, ``worlds`` or ``models``)."""
    source = SOURCE_ROOT / kind
    if source.is_dir():
        return source
    try:
        from ament_index_python.packages import PackageNotFoundError, get_package_share_directory
        return Path(get_package_share_directory("sim_fidelity")) / kind
    except (ImportError, PackageNotFoundError):
        raise FileNotFoundError(f"no '{kind}' folder beside the package ({source}) and no "
                                "installed share/sim_fidelity") from None
