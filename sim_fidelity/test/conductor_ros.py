"""Start the model conductor's nodes as real processes for the ROS tests of the conductor."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from ros_processes import REPO


def start(module: str, name: str, params: dict, domain: int, log: Path) -> subprocess.Popen:
    """``python -m module --ros-args -r __node:=name -p k:=v ...`` in ``domain``; string values
    are passed quoted, so YAML text stays a string parameter."""
    args = [sys.executable, "-m", module, "--ros-args", "-r", f"__node:={name}"]
    for k, v in params.items():
        value = (str(v).lower() if isinstance(v, bool) else
                 f"'{v}'" if isinstance(v, str) else str(v))
        args += ["-p", f"{k}:={value}"]
    env = dict(os.environ, ROS_DOMAIN_ID=str(domain), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST",
               PYTHONUNBUFFERED="1")
    return subprocess.Popen(args, env=env, cwd=REPO, stdout=log.open("w"), stderr=subprocess.STDOUT)


def start_model_node(name: str, model: str, domain: int, log: Path,
                     arguments: str = "") -> subprocess.Popen:
    """A ``model_node`` named ``name`` hosting ``model`` (a config model type)."""
    params = {"model": model, **({"arguments": arguments} if arguments else {})}
    return start("sim_fidelity.model_conductor.ros.model_node", name, params, domain, log)


def start_conductor(config: Path, domain: int, output: Path, name: str = "model_conductor",
                    **params) -> subprocess.Popen:
    """A ``model_conductor`` node on ``config``, its output to the file ``output``."""
    return start("sim_fidelity.model_conductor.ros.node", name,
                 {"config": str(config), **params}, domain, output)
