"""A small, safe expression language for trigger preconditions and effects (no ``eval``).

Python syntax, parsed with :mod:`ast` and interpreted node by node over a whitelist: literals
(numbers, strings, ``True``/``False``/``None``, lists, tuples), names, ``a.b`` and ``a[k]`` on
mappings and sequences, arithmetic (``+ - * / // % **``), comparisons (``== != < <= > >= in
not in is is not``), ``and``/``or``/``not`` (short-circuit), ``x if c else y``, and calls of named
functions (evaluators and :data:`SAFE_FUNCTIONS`), positional and keyword arguments. Anything else
(lambdas, comprehensions, attribute access on objects, starred arguments) is refused when parsed.
"""
from __future__ import annotations

import ast
import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .errors import ExpressionError

BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
    ast.Pow: operator.pow}
UNARY: dict[type, Callable[[Any], Any]] = {ast.Not: operator.not_, ast.USub: operator.neg,
                                           ast.UAdd: operator.pos}
COMPARE: dict[type, Callable[[Any, Any], bool]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge, ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b, ast.Is: operator.is_, ast.IsNot: operator.is_not}
SAFE_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "abs": abs, "min": min, "max": max, "len": len, "float": float, "int": int, "str": str,
    "round": round, "bool": bool}
MAX_POWER = 64  # largest exponent of ``**`` (no giant integers from a config)

Call = Callable[[str, list[Any], dict[str, Any]], Any]


@dataclass(frozen=True)
class Expression:
    """A parsed expression: its text, the free names it reads and the functions it calls."""

    text: str
    tree: ast.expr = field(repr=False, compare=False)
    names: frozenset[str] = frozenset()
    functions: frozenset[str] = frozenset()

    def evaluate(self, scope: Mapping[str, Any], call: Call) -> Any:
        """The value, reading names from ``scope`` and calling functions through ``call``."""
        try:
            return _Interpreter(scope, call).visit(self.tree)
        except ExpressionError as e:
            raise ExpressionError(f"{e} (in '{self.text}')") from None
        except (TypeError, ValueError, ArithmeticError, KeyError, IndexError) as e:
            raise ExpressionError(f"{type(e).__name__}: {e} (in '{self.text}')") from None


def constant(value: Any) -> Expression:
    """An expression that is the value itself (a YAML bool or number used as an expression)."""
    tree = ast.Constant(value)
    return Expression(repr(value), tree)


def parse(text: str | bool | int | float) -> Expression:
    """Parse ``text``; ExpressionError for a syntax error or anything outside the language."""
    if isinstance(text, (bool, int, float)):
        return constant(text)
    if not isinstance(text, str) or not text.strip():
        raise ExpressionError(f"an expression must be a non-empty string; got {text!r}")
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as e:
        raise ExpressionError(f"'{text}' is not an expression: {e.msg}") from None
    names: set[str] = set()
    functions: set[str] = set()
    _check(tree, names, functions, text)
    return Expression(text.strip(), tree, frozenset(names), frozenset(functions))


def _check(node: ast.AST, names: set[str], functions: set[str], text: str) -> None:
    """Refuse what the language lacks; collect free names and called functions."""
    if isinstance(node, ast.Call):
        if not isinstance(node.func, ast.Name):
            raise ExpressionError(f"'{text}': only named functions can be called")
        if any(isinstance(a, ast.Starred) for a in node.args) or \
                any(k.arg is None for k in node.keywords):
            raise ExpressionError(f"'{text}': starred arguments are not allowed")
        functions.add(node.func.id)
        for child in [*node.args, *(k.value for k in node.keywords)]:
            _check(child, names, functions, text)
        return
    if isinstance(node, ast.Name):
        names.add(node.id)
        return
    allowed = (ast.Constant, ast.Attribute, ast.Subscript, ast.BoolOp, ast.UnaryOp, ast.BinOp,
               ast.Compare, ast.IfExp, ast.List, ast.Tuple, ast.Load, ast.And, ast.Or,
               *BINARY, *UNARY, *COMPARE)
    if not isinstance(node, allowed):
        raise ExpressionError(f"'{text}': {type(node).__name__} is not allowed in an expression")
    if isinstance(node, ast.Constant) and not isinstance(node.value, (str, int, float, bool,
                                                                      type(None))):
        raise ExpressionError(f"'{text}': constant {node.value!r} is not allowed")
    for child in ast.iter_child_nodes(node):
        _check(child, names, functions, text)


class _Interpreter:
    def __init__(self, scope: Mapping[str, Any], call: Call):
        self.scope, self.call = scope, call

    def visit(self, node: ast.AST) -> Any:
        return getattr(self, f"visit_{type(node).__name__}")(node)

    def visit_Constant(self, node: ast.Constant) -> Any:
        return node.value

    def visit_Name(self, node: ast.Name) -> Any:
        if node.id not in self.scope:
            raise ExpressionError(f"undefined name '{node.id}'")
        return self.scope[node.id]

    def visit_Attribute(self, node: ast.Attribute) -> Any:
        return _item(self.visit(node.value), node.attr)

    def visit_Subscript(self, node: ast.Subscript) -> Any:
        return _item(self.visit(node.value), self.visit(node.slice))

    def visit_BoolOp(self, node: ast.BoolOp) -> Any:
        value: Any = None
        for child in node.values:
            value = self.visit(child)
            if isinstance(node.op, ast.And) and not value:
                return value
            if isinstance(node.op, ast.Or) and value:
                return value
        return value

    def visit_UnaryOp(self, node: ast.UnaryOp) -> Any:
        return UNARY[type(node.op)](self.visit(node.operand))

    def visit_BinOp(self, node: ast.BinOp) -> Any:
        left, right = self.visit(node.left), self.visit(node.right)
        if isinstance(node.op, ast.Pow) and isinstance(right, (int, float)) \
                and abs(right) > MAX_POWER:
            raise ExpressionError(f"exponent {right} is larger than {MAX_POWER}")
        return BINARY[type(node.op)](left, right)

    def visit_Compare(self, node: ast.Compare) -> Any:
        left = self.visit(node.left)
        for op, comparator in zip(node.ops, node.comparators):
            right = self.visit(comparator)
            if not COMPARE[type(op)](left, right):
                return False
            left = right
        return True

    def visit_IfExp(self, node: ast.IfExp) -> Any:
        return self.visit(node.body) if self.visit(node.test) else self.visit(node.orelse)

    def visit_List(self, node: ast.List) -> Any:
        return [self.visit(e) for e in node.elts]

    def visit_Tuple(self, node: ast.Tuple) -> Any:
        return tuple(self.visit(e) for e in node.elts)

    def visit_Call(self, node: ast.Call) -> Any:
        args = [self.visit(a) for a in node.args]
        kwargs = {k.arg: self.visit(k.value) for k in node.keywords}
        return self.call(node.func.id, args, kwargs)


def _item(container: Any, key: Any) -> Any:
    """``container.key`` / ``container[key]`` for mappings and sequences only."""
    if isinstance(container, Mapping):
        if key not in container:
            raise ExpressionError(f"no key {key!r} (keys: {', '.join(map(str, container))})")
        return container[key]
    if isinstance(container, Sequence) and not isinstance(container, str) and \
            isinstance(key, int):
        return container[key]
    raise ExpressionError(f"cannot take {key!r} of a {type(container).__name__}")
