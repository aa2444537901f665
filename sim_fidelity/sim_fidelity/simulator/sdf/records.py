"""What the SDF loader hands to the engine: a MuJoCo spec plus the SDF entities it came from.

Naming contract between loader and engine (so the engine never guesses):

* a link is a MuJoCo body named by its scoped name (``model::link``); a root link of a non-static
  model carries a free joint named ``<link>::__free__``;
* an SDF joint of one degree of freedom is a MuJoCo joint named by its scoped name; a universal
  joint is two hinges named ``<joint>::axis`` and ``<joint>::axis2``; a ball joint is one ball
  joint; a fixed joint has no MuJoCo joint (the child body is nested without one);
* a ``<collision>`` is a geom named ``<link>::<collision>`` in ``collision_group``; a ``<visual>``
  is a geom named ``<link>::<visual>::visual`` in ``visual_group`` with
  ``contype = conaffinity = 0``;
* links of static models are bodies without joints (welded to the world).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

COLLISION_GROUP = 0
VISUAL_GROUP = 1
FREE_JOINT_SUFFIX = "::__free__"


@dataclass
class LinkRecord:
    name: str  # scoped, == MuJoCo body name
    model: str  # scoped name of the model that owns it
    free: bool  # has a free joint (a root link of a non-static model)
    collisions: list[str] = field(default_factory=list)  # MuJoCo geom names


@dataclass
class JointRecord:
    name: str  # scoped
    model: str
    type: str  # SDF type: revolute, continuous, prismatic, ball, fixed, universal, ...
    parent: str  # scoped link name, or "world"
    child: str  # scoped link name
    mj_joints: list[str] = field(default_factory=list)  # MuJoCo joint names (empty for fixed)
    effort: float = float("inf")  # <axis><limit><effort> (inf: no limit; SDF's -1)
    velocity: float = float("inf")  # <axis><limit><velocity> (inf: no limit)


@dataclass
class SensorRecord:
    name: str  # scoped: <link>::<sensor>
    type: str  # SDF sensor type (contact, ray, gpu_lidar, imu, camera, ...)
    parent: str  # scoped link name
    pose: np.ndarray  # (7,) in the link frame, xyzw
    update_rate: float = 0.0
    always_on: bool = False
    topic: str = ""
    xml: str = ""  # the <sensor> element as text, for type-specific parameters


@dataclass
class PluginRecord:
    name: str  # scoped: <parent>::<plugin name>, or the plugin name for world plugins
    filename: str
    parent: str  # scoped model/link/sensor name, or "" for the world
    xml: str = ""  # the <plugin> element as text


@dataclass
class ModelRecord:
    name: str  # scoped
    parent: str  # enclosing model, or "" for top-level
    static: bool
    pose: np.ndarray  # (7,) model frame in the world at load time, xyzw
    canonical_link: str  # scoped link name ("" for a model without links)
    # scoped names, own links only (not nested models')
    links: list[str] = field(default_factory=list)
    joints: list[str] = field(default_factory=list)
    models: list[str] = field(default_factory=list)  # directly nested models
    sdf: str = ""  # standalone <sdf><model> text (includes resolved), for respawning a static copy


@dataclass
class LoadedWorld:
    """A world (or the models spawned into one) ready for the engine to compile."""

    name: str
    source: str  # file path or "<string>"
    spec: object  # mujoco.MjSpec; typed loosely so importing this module needs no MuJoCo
    step_size: float = 0.001
    gravity: np.ndarray = field(default_factory=lambda: np.array([0.0, 0.0, -9.8]))
    # kept metadata: solver iters, sor, island_threads, ...
    physics: dict = field(default_factory=dict)
    models: dict[str, ModelRecord] = field(default_factory=dict)
    links: dict[str, LinkRecord] = field(default_factory=dict)
    joints: dict[str, JointRecord] = field(default_factory=dict)
    sensors: dict[str, SensorRecord] = field(default_factory=dict)
    plugins: dict[str, PluginRecord] = field(default_factory=dict)
    resource_paths: tuple = ()  # extra model:// search folders, reused by add_models
