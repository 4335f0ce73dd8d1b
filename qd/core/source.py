"""Parsed source of a Python function with positions that match the user's file.

`inspect.getsource` returns an indented snippet; columns are shifted back so that
error carets land under the right character of the real file. Also what else a function
says about itself before it is lowered: its annotations and its closure's values.
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import linecache
import textwrap
import typing
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from .errors import QdError, QdSyntaxError, SourceLoc


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
# entry holds a weak reference to the code object and goes when the code does (before its id
# can be reused): code executed again (a reloaded module, kernels made from generated source)
# must not keep every earlier copy of itself and its source alive.
_cache: dict[int, tuple[Callable[[], object], FuncSource]] = {}


def _remember(key, src: FuncSource) -> None:
    k = id(key)

    def gone(ref) -> None:
        if _cache.get(k, (None,))[0] is ref:
            del _cache[k]

    try:
        ref = weakref.ref(key, gone)
    except TypeError:  # an object without weak references: held, so its id stays its own
        def ref(key=key):
            return key
    _cache[k] = (ref, src)


# file -> (its lines as linecache has them, {first line of a def or its decorators: FunctionDef});
# parsing a module once costs less than reading each of its functions' blocks one by one
_files: dict[str, tuple[list[str], dict[int, ast.AST]]] = {}


_trees: dict[str, tuple[str, ast.Module]] = {}  # file -> (text, its parse): the last text parsed per file


def parsed_module(text: str, file: str) -> ast.Module | None:
    """The parse of `text`, the contents of `file`, or None if it does not parse; the last
    parse of each file is kept, so reading a module's functions and re-checking a disk-cache
    entry against the same file parse it once. Callers must not change the tree."""
    hit = _trees.get(file)
    if hit is not None and hit[0] == text:
        return hit[1]
    try:
        tree = ast.parse(text, file)
    except (SyntaxError, ValueError):
        return None
    _trees[file] = (text, tree)
    return tree


def definitions(tree: ast.Module) -> Iterator[tuple[ast.AST, str]]:
    """Every function and class definition in `tree` with its qualified name, outer ones
    first. Definitions are statements, so only statement blocks are walked: a whole-tree walk
    visits every expression node too, and was most of serving a large module's kernels from
    the disk cache."""
    todo = [(tree.body, "")]
    while todo:
        block, prefix = todo.pop()
        for node in block:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                q = prefix + node.name
                yield node, q
                todo.append((node.body, q + ("." if isinstance(node, ast.ClassDef) else ".<locals>.")))
                continue
            for field in _BLOCKS:
                for child in getattr(node, field, ()):
                    if isinstance(child, (ast.ExceptHandler, ast.match_case)):
                        todo.append((child.body, prefix))
                    elif isinstance(child, ast.stmt):
                        todo.append(([child], prefix))


_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")  # the statement lists of compound statements


def _from_file(fn, code) -> FuncSource | None:
    """`fn`'s source from one parse of its whole file (None when the file cannot serve it: not
    on disk, not parseable, or no definition starting at the code's first line)."""
    file = code.co_filename
    linecache.checkcache(file)  # a file edited since (a reloaded module) is read again, as inspect does
    lines = linecache.getlines(file)
    if not lines:
        return None
    known = _files.get(file)
    if known is None or known[0] is not lines:
        tree = parsed_module("".join(lines), file)
        if tree is None:
            return None
        defs = {}
        for node, _qualname in definitions(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                defs[min([node.lineno] + [d.lineno for d in node.decorator_list])] = node
        known = _files[file] = (lines, defs)
    start = code.co_firstlineno
    fdef = known[1].get(start)
    if fdef is None or fdef.name != fn.__name__:
        return None
    raw = "".join(lines[start - 1:fdef.end_lineno])
    # the digest covers where the text is too: a moved function has stale error locations
    return FuncSource(file, fdef, raw, hashlib.sha256(f"{file}\n{start}\n{raw}".encode()).hexdigest()[:16])


def cached(fn) -> FuncSource | None:
    """The source `get_source` already read for `fn`, if it did."""
    key = getattr(fn, "__code__", None) or fn
    hit = _cache.get(id(key))
    return hit[1] if hit is not None and hit[0]() is key else None


def get_source(fn) -> FuncSource:
    """The parsed source of `fn`, read once per function object's code: from one parse of its
    file (shared by every function defined there), or else from its own block of text."""
    code = getattr(fn, "__code__", None)
    key = code if code is not None else fn
    hit = _cache.get(id(key))
    if hit is not None and hit[0]() is key:
        return hit[1]
    src = _from_file(fn, code) if code is not None else None
    if src is not None:
        _remember(key, src)
        return src
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
    _remember(key, src)
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
