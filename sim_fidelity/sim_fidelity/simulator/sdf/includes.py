"""Pass 1 of the SDF loader: ``<include>`` elements expanded into plain ``<model>`` nodes.

An include's ``<uri>`` resolves through ``model://`` search paths (:mod:`.resolve`); its
``<name>``, ``<pose>``, ``<static>``, ``<placement_frame>`` and ``<plugin>`` children override the
included model's. Included files include in turn; a cycle is an error naming the chain.
"""
from __future__ import annotations

from pathlib import Path

from . import resolve
from .elements import required
from .xmltree import Node, parse


def expand_includes(node: Node, stack: tuple[str, ...], resource_paths: tuple = ()) -> None:
    """Replace every ``<include>`` under ``node`` by the ``<model>`` it names, recursively
    (``stack``: the files being included, to report cycles)."""
    kids = []
    for c in node.children:
        if c.tag == "include":
            c = _load_include(c, stack, resource_paths)
            if c is None:  # an included light (e.g. model://sun): cosmetic
                continue
        elif c.tag == "model":
            expand_includes(c, stack, resource_paths)
        kids.append(c)
    node.children = kids

def _load_include(inc: Node, stack: tuple[str, ...], resource_paths: tuple) -> Node | None:
    """The ``<model>`` node of one include with its overrides applied; None for a light."""
    uri_node = required(inc, "uri")
    if inc.get("merge", "false").strip().lower() in ("true", "1"):
        raise inc.error("<include merge=\"true\"> is not supported")
    path = resolve.resolve_uri(uri_node.text, inc.base_dir, resource_paths)
    if path is None:
        dirs = ", ".join(str(d) for d in resolve.search_dirs(resource_paths))
        raise uri_node.error(f"cannot resolve include uri '{uri_node.text}' "
                             f"(model:// searched in: {dirs})")
    f, why = resolve.model_file(path)
    if f is None:
        raise uri_node.error(f"include uri '{uri_node.text}': {why}")
    f = str(f)
    if f in stack:
        raise inc.error(f"include cycle: {' -> '.join(stack + (f,))}")
    root = parse(Path(f).read_text(), f)
    if root.tag != "sdf":
        raise root.error("the root element of an included file must be <sdf>")
    models = root.findall("model")
    if not models and root.findall("light"):
        return None
    if len(models) != 1:
        raise root.error(f"an included file must hold exactly one <model>, found {len(models)}")
    model = models[0]
    for c in inc.children:  # overrides
        if c.tag == "name":
            if not c.text:
                raise c.error("empty <name>")
            model.attrib["name"] = c.text
        elif c.tag in ("pose", "static"):
            model.children = [k for k in model.children if k.tag != c.tag]
            model.children.insert(0, c)
        elif c.tag == "placement_frame":
            model.attrib["placement_frame"] = c.text
        elif c.tag == "plugin":
            model.children.append(c)
        elif c.tag == "uri" or ":" in c.tag:
            continue
        else:
            raise c.error(f"unknown or unsupported element <{c.tag}> in <include>")
    expand_includes(model, stack + (f,), resource_paths)
    return model
