"""The versioned kernels file: YAML, one kernel per list entry, numbers in flow lists.

The file embeds the normalised spec (so the kernel manager and ``simfid kernels show`` need
nothing else) and its hash, the generation summary and, per kernel, the centre, sigma, support,
divergence distribution and one coefficient matrix per fitted action: row i gives next-state
component i as ``W[i] @ [s_0, ..., s_d-1, 1]``.
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
VERSION = 1


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
    values = spec.action_values()
    doc = {
        "format": FORMAT,
        "version": VERSION,
        "spec_hash": spec.hash,
        "summary": dict(summary),
        "state": spec.state_names,
        "kernels": [{
            "id": i,
            "centre": k.centre.tolist(),
            "sigma": float(k.sigma),
            "support": int(k.support),
            "divergence": {"p_sim": float(k.divergence[0]), "p_phy": float(k.divergence[1])},
            "fits": [{"action": a, "action_value": values[a].tolist(),
                      "samples": int(k.samples[a]), "coefficients": k.fits[a].tolist()}
                     for a in sorted(k.fits)],
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
    d = len(spec.state)
    kernels = []
    try:
        for entry in doc.get("kernels") or []:
            kernel = Kernel(centre=np.asarray(entry["centre"], float), sigma=float(entry["sigma"]),
                            divergence=(float(entry["divergence"]["p_sim"]),
                                        float(entry["divergence"]["p_phy"])),
                            support=int(entry["support"]))
            for fit in entry["fits"]:
                action = int(fit["action"])
                kernel.fits[action] = np.asarray(fit["coefficients"], float)
                kernel.samples[action] = int(fit["samples"])
                if kernel.fits[action].shape != (d, d + 1) or not 0 <= action < spec.n_actions:
                    raise SpecError(f"{where}: kernel {len(kernels)} is malformed: fit for action "
                                    f"{action} has shape {kernel.fits[action].shape}, expected "
                                    f"{(d, d + 1)}")
            if kernel.centre.shape != (d,):
                raise SpecError(f"{where}: kernel {len(kernels)} is malformed: centre has "
                                f"{kernel.centre.shape} components, expected {d}")
            kernels.append(kernel)
    except (KeyError, TypeError, ValueError) as exc:
        raise SpecError(f"{where}: kernel {len(kernels)} is malformed: {exc}") from exc
    return KernelFile(spec, kernels, dict(doc.get("summary") or {}))
