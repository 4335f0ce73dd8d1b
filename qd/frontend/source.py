"""Parsed source of a Python function with positions that match the user's file.

`inspect.getsource` returns an indented snippet; columns are shifted back so that
error carets land under the right character of the real file. Also what else a function
says about itself before it is lowered: its annotations and its closure's values.
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import textwrap
import typing
from dataclasses import dataclass

from ..errors import QdError, QdSyntaxError, SourceLoc


@dataclass
class FuncSource:
    file: str
    tree: ast.FunctionDef
    text: str
    digest: str

    def loc(self, node: ast.AST | None) -> SourceLoc | None:
        if node is None or not hasattr(node, "lineno"):
            return None
        end_col = node.end_col_offset if getattr(node, "end_lineno", node.lineno) == node.lineno else None
        return SourceLoc(self.file, node.lineno, node.col_offset, end_col)


# Keyed by the identity of the code object, not by its equality: code objects compare equal
# across files and across an edit that only changes a local annotation (a `importlib.reload`
# in a notebook), and either would hand back the other function's text and file name. The
# entry holds the code object, so its id cannot be reused while the entry exists.
_cache: dict[int, tuple[object, FuncSource]] = {}


def get_source(fn) -> FuncSource:
    """The parsed source of `fn`, read once per function object's code."""
    code = getattr(fn, "__code__", None)
    key = code if code is not None else fn
    hit = _cache.get(id(key))
    if hit is not None and hit[0] is key:
        return hit[1]
    try:
        lines, start = inspect.getsourcelines(fn)
        file = inspect.getsourcefile(fn) or "<unknown>"
    except (OSError, TypeError) as e:
        raise QdSyntaxError(f"cannot read the source of {getattr(fn, '__qualname__', fn)!r}: {e}") from None
    raw = "".join(lines)
    indent = len(lines[0]) - len(lines[0].lstrip())
    text = textwrap.dedent(raw)
    tree = ast.parse(text)
    ast.increment_lineno(tree, start - 1)
    if indent:
        for node in ast.walk(tree):
            if hasattr(node, "col_offset"):
                node.col_offset += indent
                if getattr(node, "end_col_offset", None) is not None:
                    node.end_col_offset += indent
    fdef = tree.body[0]
    if not isinstance(fdef, (ast.FunctionDef, ast.AsyncFunctionDef)):
        raise QdSyntaxError(f"{fn!r} is not a function definition")
    # the digest covers where the text is too: a moved function has stale error locations
    src = FuncSource(file, fdef, raw, hashlib.sha256(f"{file}\n{start}\n{raw}".encode()).hexdigest()[:16])
    _cache[id(key)] = (key, src)
    return src


def type_hints(fn) -> dict:
    """The evaluated annotations of `fn`; a refused annotation raises with its location."""
    try:
        return typing.get_type_hints(fn, include_extras=True)
    except QdError as e:  # a refused annotation (postponed, so evaluated only now)
        if getattr(fn, "__annotations__", None) and any(isinstance(a, str) for a in fn.__annotations__.values()):
            return dict(fn.__annotations__)  # the caller evaluates them one by one, locating the bad one
        if e.loc is not None:
            raise
        try:
            src = get_source(fn)
            loc = src.loc(src.tree)
        except QdError:
            loc = None
        raise type(e)(e.message, loc) from None
    except Exception:
        return dict(getattr(fn, "__annotations__", {}))


def free_vars(fn) -> dict:
    """The values of `fn`'s closure cells (an empty cell is left out)."""
    out = {}
    code = fn.__code__
    for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
        try:
            out[name] = cell.cell_contents
        except ValueError:
            pass
    return out
