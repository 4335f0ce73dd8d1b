"""A plain Python function (no `@qd.func`) called in a kernel with run-time values.

quadrants calls such a function while it traces the kernel, on its expression objects, with a
`SyntaxWarning` ("Calling non-quadrants function ...") at the call; its operators build the
kernel's code, so straight-line arithmetic, `qd.*` calls, tuple results and the plain functions
it calls compute what a `@qd.func` would. qd compiles it as a `@qd.func` would be compiled (an
instantiation per static context, its parameters by value, its annotations ignored as quadrants
ignores them), with an equivalent warning at each call compiled in a kernel or func; the plain
functions it calls in turn are compiled alike without one, since quadrants never sees those calls.
Where quadrants' tracing goes wrong (an `if` or `while` on a run-time value, which it takes as
always true; `+=` of a local; a store into an array), the func's meaning is Python's. A call with
compile-time values only is still evaluated while compiling, as before.
"""

from __future__ import annotations

import ast
import inspect
import weakref
from typing import TYPE_CHECKING

from ..core.errors import QdCompileError, QdSyntaxWarning, QdTypeError, is_user_file, warn_at
from ..core.source import get_source
from ..lang.funcs import Func
from . import calls, objects

if TYPE_CHECKING:
    from .lowering import Lowering

__all__ = ["call", "traceable"]


class TracedFunc(Func):
    """A plain function compiled as a `@qd.func`: its annotations (`x: float`, `-> np.ndarray`)
    are Python's, which quadrants' tracing never reads, so none is read here either."""

    traced = True

    def __init__(self, fn):
        super().__init__(fn)
        self._hints = {}


_traced: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # plain function -> its TracedFunc


def _as_func(fn) -> TracedFunc:
    """One TracedFunc per function object, so its instantiations are found again."""
    tf = _traced.get(fn)
    if tf is None:
        tf = _traced[fn] = TracedFunc(fn)
    return tf


# numerical libraries, whose functions take arrays (quadrants' tracing fails in them too)
_LIBRARIES = ("numpy", "scipy", "torch")


def traceable(f) -> bool:
    """Whether `f` is a plain function, or a method of an object bound to one, that a kernel can
    compile when it is given run-time values: a function written with `def` in the program or a
    library it uses, whose source qd can read (not qd's own, the standard library's or a
    numerical library's, whose code is not written for kernels)."""
    fn = f.__func__ if inspect.ismethod(f) else f
    if not inspect.isfunction(fn) or fn.__name__ == "<lambda>" or getattr(fn, "is_qd_func", False):
        return False
    if (fn.__module__ or "").partition(".")[0] in _LIBRARIES or not is_user_file(fn.__code__.co_filename):
        return False
    try:
        get_source(fn)
    except QdCompileError:
        return False
    return True


def call(low: Lowering, f, fn_value, node: ast.Call, args: list, kwargs: dict):
    """`f(*args, **kwargs)` with run-time values among them, `f` neither a func nor a builtin
    (`fn_value` is the callee as the lowering found it): a traceable function compiled as a func
    call, on the values already evaluated at the call; any other callable is refused."""
    if not traceable(f):
        name = getattr(f, "__qualname__", f)
        how = "define it with def or as a @qd.func" if getattr(f, "__name__", "") == "<lambda>" \
            else "decorate it with @qd.func"
        raise QdTypeError(f"cannot call Python function {name!r} with runtime values inside a kernel; {how}")
    if not getattr(low.func, "traced", False):
        warn_at(f'Calling non-qd function "{ast.unparse(node.func).strip()}" with run-time values: qd compiles it '
                "as a @qd.func (quadrants calls it on its expression objects, outside its AST transformer, where "
                "Python's if, while and += see no run-time values). Maybe you can consider turning it into a "
                "@qd.func?", low.loc(node), QdSyntaxWarning)
    self_value = None
    if inspect.ismethod(f):
        self_value = objects.self_value(low, f.__self__, getattr(fn_value, "origin", None))
        f = f.__func__
    return calls.call_func(low, _as_func(f), node, self_value, given=(args, kwargs))
