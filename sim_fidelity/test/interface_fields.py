"""Check interface packages field for field: a parser of definition text and of reference field
lists ("## kind/Name.ext" headers, then definition lines), a checker of rclpy's generated classes
against parsed definitions, and a round trip through rclpy's CDR serialization (the compiled type
support). Shared by test_interfaces.py and the tests of the fallback packages' reference lists."""
from __future__ import annotations

import importlib
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

PRIMITIVES = {
    "bool", "byte", "char", "float32", "float64", "int8", "uint8", "int16", "uint16",
    "int32", "uint32", "int64", "uint64", "string", "wstring",
}
# How rosidl_generator_py names primitive types (their IDL names) in get_fields_and_field_types().
IDL_NAMES = {"bool": "boolean", "byte": "octet", "char": "uint8", "float32": "float",
             "float64": "double"}
# Sub-types of each interface kind, as rosidl_generator_py names them.
PARTS = {"msg": [None], "srv": ["Request", "Response"], "action": ["Goal", "Result", "Feedback"]}


# A small parser for the reference text: "## kind/Name.ext" headers, then definition lines.

def parse_line(line: str):
    """One definition line -> ("const", type, name, value) or ("field", type, name, default)."""
    const = re.fullmatch(r"(\S+)\s+([A-Z][A-Z0-9_]*)\s*=\s*(\S+)", line)
    if const:
        return ("const", *const.groups())
    field = re.fullmatch(r"(\S+)\s+([a-z][a-z0-9_]*)(?:\s+(\S+))?", line)
    if not field:
        raise ValueError(f"cannot parse definition line {line!r}")
    return ("field", *field.groups())


def parse_definition(text: str) -> list[list[tuple]]:
    """Definition text -> one list of parsed lines per part (split at ---)."""
    parts: list[list[tuple]] = [[]]
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if line == "---":
            parts.append([])
        else:
            parts[-1].append(parse_line(line))
    return parts


def parse_reference(path: Path) -> dict[tuple[str, str], list[list[tuple]]]:
    """Reference file -> {(kind, Name): parts}."""
    sections = re.split(r"^## ", path.read_text(), flags=re.M)[1:]
    out = {}
    for sec in sections:
        header, _, body = sec.partition("\n")
        kind, _, fname = header.strip().partition("/")
        out[(kind, fname.rsplit(".", 1)[0])] = parse_definition(body)
    return out


def expected_type(pkg: str, typ: str) -> str:
    """Definition type -> the string get_fields_and_field_types() reports."""
    m = re.fullmatch(r"(.+?)\[(\d*)\]", typ)
    if m:
        inner = expected_type(pkg, m.group(1))
        return f"sequence<{inner}>" if m.group(2) == "" else f"{inner}[{m.group(2)}]"
    if typ in PRIMITIVES:
        return IDL_NAMES.get(typ, typ)
    if "/" in typ:
        return typ
    return f"{pkg}/{typ}"  # a type of the same package


def typed_value(typ: str, text: str):
    if typ in ("float32", "float64"):
        return float(text)
    if typ == "bool":
        return text.lower() in ("true", "1")
    if typ in ("string", "wstring"):
        return text.strip("'\"")
    return int(text, 0)


def constants_of(cls) -> dict:
    for key, value in type(cls).__dict__.items():
        if key.endswith("__constants"):
            return dict(value)
    raise AssertionError(f"{cls.__name__} has no constants table")


def classes_of(pkg: str, kind: str, name: str) -> list:
    module = importlib.import_module(f"{pkg}.{kind}")
    top = getattr(module, name)
    return [top if part is None else getattr(top, part) for part in PARTS[kind]]


def check_against(pkg: str, kind: str, name: str, parts: list[list[tuple]]) -> None:
    """Assert that the generated classes of one interface match its parsed definition."""
    classes = classes_of(pkg, kind, name)
    assert len(classes) == len(parts), f"{pkg}/{kind}/{name}: {len(parts)} parts expected"
    for cls, lines in zip(classes, parts):
        where = f"{pkg}/{kind}/{cls.__name__}"
        fields = [(n, expected_type(pkg, t)) for k, t, n, _ in lines if k == "field"]
        assert list(cls.get_fields_and_field_types().items()) == fields, where
        consts = {n: typed_value(t, v) for k, t, n, v in lines if k == "const"}
        assert constants_of(cls) == consts, where
        for n, value in consts.items():
            assert getattr(cls, n) == value, f"{where}.{n}"
        # rosidl_generator_py gives the metaclass a NAME__DEFAULT attribute per field default.
        with_default = {n.upper() + "__DEFAULT" for k, _, n, d in lines
                        if k == "field" and d is not None}
        assert {a for a in type(cls).__dict__ if a.endswith("__DEFAULT")} == with_default, where
        instance = cls()
        for k, t, n, default in lines:
            if k == "field" and default is not None:
                assert getattr(instance, n) == typed_value(t, default), f"{where}.{n} default"


def roundtrip(msg):
    from rclpy.serialization import deserialize_message, serialize_message

    data = serialize_message(msg)
    assert isinstance(data, bytes) and len(data) > 4
    back = deserialize_message(data, type(msg))
    assert back == msg
    return back
