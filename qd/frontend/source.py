"""Parsed source of a Python function with positions that match the user's file.

`inspect.getsource` returns an indented snippet; columns are shifted back so that
error carets land under the right character of the real file.
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import textwrap
from dataclasses import dataclass

from ..errors import QdSyntaxError, SourceLoc


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


_cache: dict[object, FuncSource] = {}


def get_source(fn) -> FuncSource:
    code = getattr(fn, "__code__", None)
    # code objects compare equal across files (co_filename is not part of equality), so two
    # identical functions at the same line of two files would share one entry without the name
    key = (code.co_filename, code) if code is not None else fn
    hit = _cache.get(key)
    if hit is not None:
        return hit
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
    src = FuncSource(file, fdef, raw, hashlib.sha256(raw.encode()).hexdigest()[:16])
    _cache[key] = src
    return src
