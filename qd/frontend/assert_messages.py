"""The message of a kernel `assert`: a compile-time text, or a template of run-time values.

quadrants formats an assert's message when the assert fails, from the values the failing
thread had: an f-string (`f"bad {x}"`), `"...".format(...)` and `"..." % (...)`. A compile-time
piece is formatted now (`str` of the value, as quadrants' `str.format` does); a run-time scalar
becomes an argument the failing check stores in the status block (`codegen.checks.assertion`),
printed as quadrants prints it (`runtime.status.format_assert`: integers in decimal, floats as
their shortest text). As in quadrants, an f-string's format spec and conversion of a run-time
value are ignored (`{x:.2f}` prints `x` as `{x}` does), and `%d` / `%f` print the same way; any
other `%` spec is applied to the value (quadrants' runtime refuses them). Vectors and matrices
cannot be formatted (quadrants: "Unsupported data type").

The template is `str.format` text whose fields are the arguments in order (`{0}`, or `{0:%.3f}`
for a `%` spec), literal braces doubled; `None` arguments mean a plain message.
"""

from __future__ import annotations

import ast
import re
import string
from typing import TYPE_CHECKING

from ..core import ir
from ..core.errors import QdSyntaxError, QdTypeError
from .kinds import RUNTIME, known
from .values import MatV

if TYPE_CHECKING:
    from .lowering import Lowering

_PERCENT = re.compile(r"%(?:%|[-+ #0]*\d*(?:\.\d+)?[diouxXeEfFgGcrsa])")


class Template:
    """A message being built: literal text and run-time arguments."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.args: list[ir.Expr] = []

    def text(self, s: str) -> None:
        self.parts.append(s.replace("{", "{{").replace("}", "}}"))

    def value(self, low: Lowering, v, node, spec: str = "") -> None:
        """Append the value `v` of `node`: its text now if known, else a field."""
        k = known(v)
        if k is not RUNTIME:
            self.text(spec % k if spec.startswith("%") else format(k, spec))
            return
        if isinstance(v, MatV):
            raise QdTypeError("an assert message cannot format a vector or matrix: format its components",
                              low.loc(node))
        e = low.scalar(v, node)
        self.parts.append(f"{{{len(self.args)}{':' + spec if spec.startswith('%') else ''}}}")
        self.args.append(e)


def lower_message(low: Lowering, msg: ast.expr) -> tuple[str, list[ir.Expr] | None]:
    """(message, None) for a compile-time message; (template, arguments) for one that formats
    run-time values."""
    t = Template()
    if isinstance(msg, ast.JoinedStr):
        for piece in msg.values:
            if isinstance(piece, ast.Constant):
                t.text(str(piece.value))
            else:
                v = low.expr(piece.value)
                spec = ""
                if piece.format_spec is not None and known(v) is not RUNTIME:  # a run-time value's is ignored
                    spec = "".join(str(known(low.expr(p.value))) if isinstance(p, ast.FormattedValue) else p.value
                                   for p in piece.format_spec.values)
                t.value(low, v, piece.value, spec)
    elif (isinstance(msg, ast.Call) and isinstance(msg.func, ast.Attribute) and msg.func.attr == "format"
          and isinstance(msg.func.value, ast.Constant) and isinstance(msg.func.value.value, str)):
        _format_call(low, msg, t)
    elif (isinstance(msg, ast.BinOp) and isinstance(msg.op, ast.Mod) and isinstance(msg.left, ast.Constant)
          and isinstance(msg.left.value, str)):
        _percent(low, msg, t)
    else:
        m = low.expr(msg)
        if known(m) is RUNTIME:
            raise QdTypeError("an assert message must be a compile-time value, an f-string, \"...\".format(...) or "
                              "\"...\" % (...)", low.loc(msg))
        return str(known(m)), None
    if not t.args:
        return string.Formatter().vformat("".join(t.parts), (), {}), None
    return "".join(t.parts), t.args


def _format_call(low: Lowering, node: ast.Call, t: Template) -> None:
    if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
        raise QdSyntaxError("`*args` / `**kwargs` in an assert message's format()", low.loc(node))
    pos = [(low.expr(a), a) for a in node.args]
    kw = {k.arg: (low.expr(k.value), k.value) for k in node.keywords}
    auto = 0
    try:
        fields = list(string.Formatter().parse(node.func.value.value))
    except ValueError as e:
        raise QdSyntaxError(f"bad format string in an assert message: {e}", low.loc(node.func.value)) from None
    for literal, name, spec, _conversion in fields:
        t.text(literal)
        if name is None:
            continue
        if name == "":
            name, auto = str(auto), auto + 1
        try:
            v, at = pos[int(name)] if name.isdigit() else kw[name]
        except (IndexError, KeyError):
            raise QdTypeError(f"the assert message's format() has no argument {name!r}", low.loc(node)) from None
        t.value(low, v, at, spec if known(v) is not RUNTIME else "")


def _percent(low: Lowering, node: ast.BinOp, t: Template) -> None:
    items = node.right.elts if isinstance(node.right, ast.Tuple) else [node.right]
    values = [(low.expr(a), a) for a in items]
    text = node.left.value
    at = 0
    for m in _PERCENT.finditer(text):
        t.text(text[at:m.start()])
        at = m.end()
        spec = m.group()
        if spec == "%%":
            t.text("%")
            continue
        if not values:
            raise QdTypeError("not enough arguments for the assert message's format string", low.loc(node))
        v, a = values.pop(0)
        # quadrants prints `%d` and `%f` as it prints f-string fields; other specs are Python's
        t.value(low, v, a, "" if spec in ("%d", "%f", "%s") and known(v) is RUNTIME else spec)
    t.text(text[at:])
    if values:
        raise QdTypeError("not all arguments converted in the assert message's format string", low.loc(node))
