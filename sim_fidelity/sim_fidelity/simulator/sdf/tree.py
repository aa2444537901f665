"""The loader's intermediate tree: models, links, joints and frames as written, before emission."""
from __future__ import annotations

from dataclasses import dataclass, field

from .elements import ParsedPose
from .xmltree import Node, version_tuple

DEFAULT_VERSION = "1.11"

@dataclass
class Link:
    node: Node
    name: str
    model: Model
    pose: ParsedPose
    static: bool
    kind: str = "link"

    @property
    def scoped(self) -> str:
        return f"{self.model.scoped}::{self.name}"


@dataclass
class Joint:
    node: Node
    name: str
    model: Model
    type: str
    parent: str
    child: str
    pose: ParsedPose
    kind: str = "joint"
    parent_link: Link | None = None
    child_link: Link | None = None

    @property
    def scoped(self) -> str:
        return f"{self.model.scoped}::{self.name}"


@dataclass
class Frame:
    node: Node
    name: str
    attached_to: str
    pose: ParsedPose
    kind: str = "frame"


@dataclass
class Model:
    node: Node
    name: str
    parent: Model | None
    static: bool
    pose: ParsedPose
    placement: str | None
    self_collide: bool
    kind: str = "model"
    links: dict = field(default_factory=dict)
    joints: dict = field(default_factory=dict)
    frames: dict = field(default_factory=dict)
    models: dict = field(default_factory=dict)
    canonical: str = ""  # as written, resolved lazily

    @property
    def scoped(self) -> str:
        return self.name if self.parent is None else f"{self.parent.scoped}::{self.name}"

    @property
    def version(self) -> tuple[int, int]:
        return version_tuple(self.node.version or DEFAULT_VERSION)

    def entity(self, name: str):
        for d in (self.links, self.joints, self.frames, self.models):
            if name in d:
                return d[name]
        return None

    def tree(self):
        """This model and every nested model, pre-order."""
        yield self
        for m in self.models.values():
            yield from m.tree()
