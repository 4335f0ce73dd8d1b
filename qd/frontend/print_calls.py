"""`print(...)` inside kernels, as quadrants has it: the arguments joined by `sep` and ended by
`end`, numbers (compile-time or not) formatted by the device's printf (f32 as `%f`, f64 as `%.12f`,
integers in full), other compile-time values and those inside f-strings formatted by Python, vectors and
matrices as `[a, b]` and `[[a, b], \\n[c, d]]`. f-strings and `str.format` with a format spec (`{x:.3f}`)
hand the spec to printf for run-time values.

The result is an `ir.Print`: text pieces and `(expression, conversion)` pairs in order, where
the conversion is the printf directive for that value (`codegen` adds the length modifier its
type needs). Parsing the spec here gives a bad spec its location.

`qd.static_print(...)` is Python's print while the code is compiled, with quadrants' text for a
value known only at run time. Its output is kept with the instantiation (`ir.Inst.prints`, its
callees' included), so a func instantiation lowered once prints at every call compiled later,
as quadrants, which traces each call, prints it.
"""

from __future__ import annotations

import ast
import io
import re
import string
import sys
from typing import TYPE_CHECKING

from ..core import dtypes as _dt
from ..core import ir
from ..core.errors import QdStaticError, QdTypeError
from .kinds import RUNTIME, kind_of, known
from .values import CT, TupleV

if TYPE_CHECKING:
    from .lowering import Lowering

__all__ = ["lower_print", "replay_static_prints", "static_print"]

# a format spec printf can take for one value: flags, width, precision and a conversion letter
_SPEC = re.compile(r"^(?P<flags>[-+ #0]*)(?P<width>\d*)(?:\.(?P<prec>\d+))?(?P<conv>[dieEfFgGxXo]?)$")
_INT_CONV = set("dixXo")
_FLOAT_CONV = set("eEfFgG")


def lower_print(low: Lowering, node: ast.Call) -> None:
    """Emit the `ir.Print` of a `print(...)` call statement."""
    sep, end = " ", "\n"
    for kw in node.keywords:
        if kw.arg not in ("sep", "end"):
            raise QdTypeError(f"print() inside a kernel takes sep= and end= only, not {kw.arg or '**'}=",
                              low.loc(kw.value))
        v = low.expr(kw.value)
        if not isinstance(known(v), str):
            raise QdTypeError(f"print({kw.arg}=...) must be a compile-time string", low.loc(kw.value))
        if kw.arg == "sep":
            sep = v.value
        else:
            end = v.value
    parts: list = []
    for i, a in enumerate(node.args):
        if isinstance(a, ast.Starred):
            raise QdTypeError("print(*args) is not supported inside kernels", low.loc(a))
        if i:
            parts.append(sep)
        parts.extend(_pieces(low, a))
    parts.append(end)
    low.emit(ir.Print(low.loc(node), _merged(parts)))


def _pieces(low: Lowering, node) -> list:
    if isinstance(node, ast.JoinedStr):
        out: list = []
        for v in node.values:
            if isinstance(v, ast.Constant):
                out.append(str(v.value))
            else:
                out.extend(_formatted(low, v))
        return out
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format"
            and isinstance(node.func.value, ast.Constant) and isinstance(node.func.value.value, str)):
        return _str_format(low, node)
    return _value(low, low.expr(node), node, None)


def _formatted(low: Lowering, v: ast.FormattedValue) -> list:
    spec = None
    if v.format_spec is not None:
        pieces = v.format_spec.values if isinstance(v.format_spec, ast.JoinedStr) else [v.format_spec]
        if all(isinstance(p, ast.Constant) for p in pieces):
            spec = "".join(str(p.value) for p in pieces)
        else:
            raise QdTypeError("a format spec inside a kernel must be a compile-time string", low.loc(v))
    value = low.expr(v.value)
    if known(value) is not RUNTIME:
        conv = {115: str, 114: repr, 97: ascii}.get(v.conversion, lambda x: x)
        return [format(conv(value.value), spec or "")]
    return _value(low, value, v.value, spec)


def _str_format(low: Lowering, node: ast.Call) -> list:
    """`"x = {}, y = {:.2f}".format(x, y)`: automatic and numbered fields, each with an optional
    spec (no attribute or index lookups inside the braces)."""
    text = node.func.value.value
    if node.keywords:
        raise QdTypeError("str.format() inside a kernel takes positional arguments only", low.loc(node))
    args = node.args
    out: list = []
    auto = 0
    for literal, fname, spec, conversion in string.Formatter().parse(text):
        if literal:
            out.append(literal)
        if fname is None:
            continue
        if conversion:
            raise QdTypeError("str.format() conversions (!r, !s) are not supported inside kernels", low.loc(node))
        if fname == "":
            index, auto = auto, auto + 1
        elif fname.isdigit():
            index = int(fname)
        else:
            raise QdTypeError(f"str.format() field {{{fname}}} is not supported inside kernels: use {{}} or "
                              "{0}", low.loc(node))
        if index >= len(args):
            raise QdTypeError(f"str.format(): no argument for field {index}", low.loc(node))
        value = low.expr(args[index])
        if known(value) is not RUNTIME:
            out.append(format(value.value, spec or ""))
        else:
            out.extend(_value(low, value, args[index], spec or None))
    return out


def _value(low: Lowering, v, node, spec: str | None) -> list:
    """The pieces that print value `v`: its kind's (a tuple, a vector, a compile-time value),
    else the one printf piece of a run-time scalar."""
    pieces = kind_of(v).print_pieces(low, v, node, spec)
    return pieces if pieces is not None else [scalar_piece(low, v, node, spec)]


def bracketed(low: Lowering, items, node, spec: str | None) -> list:
    """`[a, b, c]`: the pieces of a list of values."""
    out: list = ["["]
    for i, item in enumerate(items):
        out.extend(([", "] if i else []) + _value(low, item, node, spec))
    return out + ["]"]


def matrix_pieces(low: Lowering, v, node, spec: str | None) -> list:
    """A vector as `[a, b]`, a matrix as `[[a, b], \\n[c, d]]`."""
    rows = [v.entries] if v.ndim == 1 else [v.entries[r * v.m:(r + 1) * v.m] for r in range(v.n)]
    out: list = ["["]
    for r, row in enumerate(rows):
        if r:
            out.append(", \n")
        if v.ndim == 2:
            out.append("[")
        for c, e in enumerate(row):
            if c:
                out.append(", ")
            out.append(scalar_piece(low, e, node, spec))
        if v.ndim == 2:
            out.append("]")
    out.append("]")
    return out


def scalar_piece(low: Lowering, v, node, spec: str | None) -> tuple:
    e = low.scalar(v, node)
    if e.dtype.is_bool:
        e = low.cast(e, low.cfg.default_ip)
    if spec is None:
        return (e, "")
    m = _SPEC.match(spec)
    conv = m.group("conv") if m else None
    if m is None or (conv and conv not in (_FLOAT_CONV if e.dtype.is_float else _INT_CONV)):
        raise QdTypeError(f"format spec {spec!r} cannot print a {e.dtype} value inside a kernel (printf "
                          "specs only: flags, width, .precision and one of d i x X o for integers, "
                          "e f g for floats)", low.loc(node))
    return (e, spec)


def _merged(parts: list) -> list:
    out: list = []
    for p in parts:
        if isinstance(p, str) and out and isinstance(out[-1], str):
            out[-1] += p
        elif not (isinstance(p, str) and not p):
            out.append(p)
    return out


# ---------------------------------------------------------------- qd.static_print


class _Shown:
    """A value as `qd.static_print` shows it where quadrants' text differs from qd's repr: a value
    known only at run time (`<qd.Expr>`), a dtype (`f32`)."""

    def __init__(self, text: str):
        self.text = text

    def __repr__(self) -> str:
        return self.text


_RUN_TIME = _Shown("<qd.Expr>")


def _shown(v):
    if isinstance(v, TupleV):
        return tuple(_shown(item) for item in v.items)
    value = known(v)
    if value is RUNTIME:
        return _RUN_TIME
    return _Shown(value.name) if isinstance(value, _dt.DType) else value


def _write(file, text: str) -> None:
    (sys.stdout if file is None else file).write(text)


def static_print(low: Lowering, node: ast.Call, args: list, kwargs: dict) -> CT:
    """`qd.static_print(*values, sep=..., end=..., file=...)`: printed now, while the instantiation
    is lowered, so once per compile of a kernel variant and once per call of a func compiled in
    it; a disk-cache hit lowers nothing and prints nothing, as in quadrants."""
    options = {}
    for name, v in kwargs.items():
        if known(v) is RUNTIME:
            raise QdStaticError(f"the {name}= of qd.static_print must be a compile-time value", low.loc(node))
        options[name] = v.value
    file = options.pop("file", None)
    options.pop("flush", None)
    buffer = io.StringIO()
    try:
        print(*(_shown(a) for a in args), **options, file=buffer)
    except (TypeError, ValueError) as e:
        raise QdTypeError(f"qd.static_print: {e}", low.loc(node)) from None
    text = buffer.getvalue()
    _write(file, text)
    low.inst.prints.append((file, text))
    return CT(None)


def replay_static_prints(low: Lowering, callee: ir.Inst, lowered_now: bool) -> None:
    """A call of `callee` compiled into the instantiation being lowered: its static prints become
    the caller's too, and are printed again when the callee was lowered for an earlier call."""
    if not lowered_now:
        for file, text in callee.prints:
            _write(file, text)
    low.inst.prints.extend(callee.prints)
