"""The executions of Table 2, planned per seed: what the robot does, the initial scene, and the
ground-truth label, which derives from the plan (never from a simulation).

* **grasp and drop** (:data:`GRASP_SUCCESSES` + :data:`GRASP_FAILURES`): take the ball from the
  stand, lift it, carry it over the container, open the hand. Successful plans release it above
  the container's opening; failed ones release it too early (on the way, above the table) or
  beside the container (the release point misses the opening by more than the ball's radius).
  Label ``in(container, ball)``.
* **insertion** (:data:`INSERTIONS`): holding the DIP, insert it into the SPU's socket. The SPU's
  pose was localised with an error (:data:`LOCALISATION_SIGMA` per horizontal axis); the scene
  the robot (and every replay) knows is the localised one. The real connector's chamfer and the
  compliant controller absorb an error up to :data:`CAPTURE_TOLERANCE`: within it the probe is
  guided into the real socket (label ``connected(dip, spu)`` true), beyond it the probe stops on
  the SPU's top face (false).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...world_generators import conductor_scenarios as cs
from ...world_generators.conductor_scene import TABLE_TOP

GRASP_SUCCESSES, GRASP_FAILURES, INSERTIONS = 5, 5, 5
STAND_POSITION = np.array([0.0, -0.25, TABLE_TOP])
CONTAINER_X, CONTAINER_Y = (0.22, 0.30), (-0.30, -0.20)  # m: where containers stand
RELEASE_ABOVE_RIM = 0.09  # m: the ball's centre above the rim when released
EARLY_FRACTION = (0.15, 0.45)  # of the carry, where an early release happens
SPU_POSITION = np.array([0.0, -0.25, TABLE_TOP])
LOCALISATION_SIGMA = 0.008  # m per horizontal axis
CAPTURE_TOLERANCE = 0.010  # m: lateral error the real connector and controller absorb
FAILURES = ("early", "beside")


@dataclass(frozen=True)
class Execution:
    """One planned execution: ``kind`` ``grasp_drop`` or ``insertion``; ``variant`` ``success``,
    ``early`` or ``beside`` (grasp) or ``insert``; ``scene`` object -> ``{"type", "pose"}`` as the
    replays get it; ``label`` the ground truth; ``plan`` the numbers the motion is made from."""

    name: str
    kind: str
    variant: str
    scene: dict[str, dict[str, Any]]
    label: dict[str, Any]
    plan: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "variant": self.variant,
                "scene": self.scene, "label": self.label, "plan": self.plan}


def _obj(kind: str, position: np.ndarray) -> dict[str, Any]:
    return {"type": kind, "pose": [round(float(v), 6) for v in position] + [0.0, 0.0, 0.0, 1.0]}


def container_reach(kind: str) -> float:
    """Largest horizontal distance from the container's centre at which a falling ball still
    drops into the opening (inner half extent minus the ball's radius, smallest side)."""
    return min(cs.CONTAINERS[kind].inner()) - cs.BALL_RADIUS


def container_outside(kind: str) -> float:
    """Smallest distance from the centre at which a falling ball misses the container whole."""
    c = cs.CONTAINERS[kind]
    half = c.size[0] if c.shape == "round" else float(np.hypot(*c.size) / 2)
    return half + cs.BALL_RADIUS


def grasp_execution(index: int, variant: str, kind: str, rng: np.random.Generator) -> Execution:
    container = np.array([rng.uniform(*CONTAINER_X), rng.uniform(*CONTAINER_Y), TABLE_TOP])
    stand = STAND_POSITION + [rng.uniform(-0.01, 0.01), rng.uniform(-0.01, 0.01), 0.0]
    ball = stand + [0.0, 0.0, cs.ball_rest_height()]
    top = TABLE_TOP + cs.CONTAINERS[kind].height
    release_z = top + RELEASE_ABOVE_RIM
    if variant == "success":
        r = rng.uniform(0.0, 0.5) * container_reach(kind)
    elif variant == "beside":
        r = container_outside(kind) + rng.uniform(0.02, 0.05)
    else:
        r = 0.0
    angle = rng.uniform(np.pi / 4, 3 * np.pi / 4)  # toward the robot, where the arm reaches
    release = container + [r * np.cos(angle), r * np.sin(angle), 0.0]
    release[2] = release_z
    plan: dict[str, Any] = {"release": [round(float(v), 6) for v in release],
                            "container": kind}
    if variant == "early":
        plan["early_fraction"] = round(float(rng.uniform(*EARLY_FRACTION)), 4)
    scene = {"stand": _obj("stand", stand), "ball": _obj("ball", ball),
             "container": _obj(kind, container)}
    label = {"predicate": "in(container, ball)", "value": variant == "success"}
    return Execution(f"grasp_{index:02d}", "grasp_drop", variant, scene, label, plan)


def insertion_execution(index: int, rng: np.random.Generator) -> Execution:
    true_spu = SPU_POSITION + [rng.uniform(-0.01, 0.01), rng.uniform(-0.01, 0.01), 0.0]
    error = np.r_[rng.normal(0.0, LOCALISATION_SIGMA, 2), 0.0]
    believed = true_spu + error
    lateral = float(np.linalg.norm(error[:2]))
    plan = {"true_spu": [round(float(v), 6) for v in true_spu],
            "localisation_error": [round(float(v), 6) for v in error[:2]],
            "lateral_error": round(lateral, 6), "capture_tolerance": CAPTURE_TOLERANCE}
    scene = {"spu": _obj("spu", believed), "dip": _obj("dip", np.zeros(3))}  # dip: set by the
    # recording (the grasp settles before it starts)
    label = {"predicate": "connected(dip, spu)", "value": lateral <= CAPTURE_TOLERANCE}
    return Execution(f"insertion_{index:02d}", "insertion", "insert", scene, label, plan)


def plan_executions(seed: int = 0, grasps: int = GRASP_SUCCESSES + GRASP_FAILURES,
                    insertions: int = INSERTIONS) -> list[Execution]:
    """The executions of one data set: grasps alternate success and failure (failures alternate
    early and beside); the successes and the failures each cycle through every container kind
    in a seeded order (the failures one kind further on)."""
    rng = np.random.default_rng(seed)
    kinds = list(rng.permutation(list(cs.CONTAINERS)))
    out = []
    for i in range(grasps):
        variant = "success" if i % 2 == 0 else FAILURES[(i // 2) % 2]
        kind = kinds[(i // 2 + i % 2) % len(kinds)]
        out.append(grasp_execution(i, variant, str(kind), rng))
    out += [insertion_execution(i, rng) for i in range(insertions)]
    return out
