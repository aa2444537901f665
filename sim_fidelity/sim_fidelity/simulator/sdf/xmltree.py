"""A small XML tree that remembers where each element came from (file, line, SDF version).

``xml.etree`` drops line numbers, so the loader parses with ``xml.parsers.expat`` into
:class:`Node` objects and can name the file, the line and the element in every error.
"""
from __future__ import annotations

import os
import xml.parsers.expat
from xml.sax.saxutils import escape, quoteattr

from ..errors import SdfError


class Node:
    """One XML element: tag, attributes, children, stripped text, and where it came from."""

    __slots__ = ("tag", "attrib", "children", "text", "line", "file", "base_dir", "version")

    def __init__(self, tag: str, attrib: dict | None = None, line: int | None = None,
                 file: str = "<string>", base_dir: str = ".", version: str = ""):
        self.tag = tag
        self.attrib = dict(attrib or {})
        self.children: list[Node] = []
        self.text = ""
        self.line = line
        self.file = file
        self.base_dir = base_dir
        self.version = version

    # --- queries -----------------------------------------------------------------------------
    def find(self, tag: str) -> Node | None:
        for c in self.children:
            if c.tag == tag:
                return c
        return None

    def findall(self, tag: str) -> list[Node]:
        return [c for c in self.children if c.tag == tag]

    def get(self, key: str, default=None):
        return self.attrib.get(key, default)

    def child_text(self, tag: str, default: str | None = None) -> str | None:
        c = self.find(tag)
        return default if c is None else c.text

    def error(self, message: str) -> SdfError:
        return SdfError(message, file=self.file, line=self.line, element=self.tag)

    def walk(self):
        yield self
        for c in self.children:
            yield from c.walk()

    def copy(self) -> Node:
        n = Node(self.tag, self.attrib, self.line, self.file, self.base_dir, self.version)
        n.text = self.text
        n.children = [c.copy() for c in self.children]
        return n

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"<Node {self.tag} {self.attrib} {self.file}:{self.line}>"


def version_tuple(version: str) -> tuple[int, int]:
    try:
        major, minor = version.strip().split(".")[:2]
        return int(major), int(minor)
    except (ValueError, AttributeError):
        return (1, 11)


def parse(text: str, file: str = "<string>", base_dir: str | None = None) -> Node:
    """Parse XML text into a :class:`Node` tree; malformed XML raises :class:`SdfError`."""
    if base_dir is None:
        base_dir = os.path.dirname(os.path.abspath(file)) if file != "<string>" else os.getcwd()
    parser = xml.parsers.expat.ParserCreate()
    stack: list[Node] = []
    root: list[Node] = []
    texts: list[list[str]] = []
    version = [""]

    def start(tag, attrs):
        if not stack and tag == "sdf":
            version[0] = attrs.get("version", "")
        node = Node(tag, attrs, parser.CurrentLineNumber, file, base_dir, version[0])
        if stack:
            stack[-1].children.append(node)
        else:
            root.append(node)
        stack.append(node)
        texts.append([])

    def end(tag):
        node = stack.pop()
        node.text = "".join(texts.pop()).strip()

    def chars(data):
        if texts:
            texts[-1].append(data)

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = chars
    try:
        parser.Parse(text, True)
    except xml.parsers.expat.ExpatError as e:
        where = stack[-1].tag if stack else "xml"
        raise SdfError(f"malformed XML: {xml.parsers.expat.ErrorString(e.code)} "
                       f"(column {e.offset})", file=file, line=e.lineno, element=where) from None
    if not root:
        raise SdfError("empty document", file=file, line=1, element="sdf")
    return root[0]


def to_xml(node: Node, indent: str = "", replace: dict | None = None) -> str:
    """Serialise ``node``. ``replace`` maps ``id(node)`` to a substitute Node (or None to drop)."""
    replace = replace or {}
    if id(node) in replace:
        node = replace[id(node)]
        if node is None:
            return ""
    attrs = "".join(f" {k}={quoteattr(str(v))}" for k, v in node.attrib.items())
    kids = [to_xml(c, indent + "  ", replace) for c in node.children]
    kids = [k for k in kids if k]
    if kids:
        body = "\n".join(kids)
        text = f"{indent}  {escape(node.text)}\n" if node.text else ""
        return f"{indent}<{node.tag}{attrs}>\n{text}{body}\n{indent}</{node.tag}>"
    if node.text:
        return f"{indent}<{node.tag}{attrs}>{escape(node.text)}</{node.tag}>"
    return f"{indent}<{node.tag}{attrs}/>"
