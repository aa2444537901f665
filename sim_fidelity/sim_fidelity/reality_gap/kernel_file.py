"""The versioned kernels file: YAML, one kernel per list entry, numbers in flow lists.

The file embeds the normalised spec (so the kernel manager and ``simfid kernels show`` need
nothing else) and its hash, the generation summary and, per kernel, the centre, the member
nodes of its region, sigma, support, divergence distribution and the transfer matrix: row i
gives next-state component i as ``W[i] @ [s_0, ..., s_d-1, u_0, ..., u_m-1, 1]``.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import yaml

from .errors import SpecError
from .kernels import Kernel
from .spec import Spec

FORMAT = "sim_fidelity/kernels"
VERSION = 2  # 2: kernels cover regions, one transfer over state and action


class _Dumper(yaml.SafeDumper):
    """Lists of scalars in flow style (one line each), everything else block style."""


def _represent_list(dumper: yaml.SafeDumper, data: list) -> yaml.Node:
    flow = all(not isinstance(x, (list, dict)) for x in data)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=flow)


_Dumper.add_representer(list, _represent_list)


@dataclass
class KernelFile:
    spec: Spec
    kernels: list[Kernel]
    summary: dict


def save_kernels(path: str | Path, spec: Spec, kernels: list[Kernel], summary: dict) -> Path:
    """Write the kernels file (overwrites ``path``)."""
    doc = {
        "format": FORMAT,
        "version": VERSION,
        "spec_hash": spec.hash,
        "summary": dict(summary),
        "state": spec.state_names,
        "inputs": spec.state_names + spec.action_names + ["1"],
        "kernels": [{
            "id": i,
            "centre": k.centre.tolist(),
            "members": k.members.tolist(),
            "sigma": float(k.sigma),
            "support": int(k.support),
            "divergence": {"p_sim": float(k.divergence[0]), "p_phy": float(k.divergence[1])},
            "samples": int(k.samples),
            "transfer": k.transfer.tolist(),
        } for i, k in enumerate(kernels)],
        "spec": spec.raw,
    }
    path = Path(path)
    path.write_text(yaml.dump(doc, Dumper=_Dumper, sort_keys=False, width=120))
    return path


def load_kernels(path: str | Path) -> KernelFile:
    """Read a kernels file; raises SpecError naming the file and what is wrong."""
    where = str(path)
    try:
        doc = yaml.safe_load(Path(path).read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise SpecError(f"cannot read kernels file {where}: {exc}") from exc
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise SpecError(f"{where} is not a kernels file (format '{FORMAT}' expected)")
    if doc.get("version") != VERSION:
        raise SpecError(f"{where}: kernels format version {doc.get('version')!r} is not "
                        f"supported (this reader knows version {VERSION})")
    spec = Spec.from_dict(doc.get("spec"), where=f"{where} (embedded spec)")
    if spec.hash != doc.get("spec_hash"):
        raise SpecError(f"{where}: the embedded spec does not match spec_hash (edited?)")
    d, width = len(spec.state), len(spec.state) + len(spec.action) + 1
    kernels = []
    try:
        for entry in doc.get("kernels") or []:
            kernel = Kernel(centre=np.asarray(entry["centre"], float),
                            members=np.asarray(entry["members"], float).reshape(-1, d),
                            sigma=float(entry["sigma"]),
                            divergence=(float(entry["divergence"]["p_sim"]),
                                        float(entry["divergence"]["p_phy"])),
                            support=int(entry["support"]),
                            transfer=np.asarray(entry["transfer"], float),
                            samples=int(entry["samples"]))
            if kernel.transfer.shape != (d, width) or kernel.centre.shape != (d,) \
                    or not len(kernel.members):
                raise SpecError(f"{where}: kernel {len(kernels)} is malformed: centre "
                                f"{kernel.centre.shape}, transfer {kernel.transfer.shape}, "
                                f"{len(kernel.members)} members; expected ({d},), "
                                f"{(d, width)}, at least one")
            kernels.append(kernel)
    except (KeyError, TypeError, ValueError) as exc:
        raise SpecError(f"{where}: kernel {len(kernels)} is malformed: {exc}") from exc
    return KernelFile(spec, kernels, dict(doc.get("summary") or {}))
