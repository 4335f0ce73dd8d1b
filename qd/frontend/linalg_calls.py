"""`qd.svd`, `qd.polar_decompose`, `qd.sym_eig`, `qd.make_spd`, `qd.eig` and `qd.solve` inside
kernels: entries of the builtin table that check the matrix's shape at the user's call (with
quadrants' messages) and then call the kernel-language implementation in `qd/linalg_funcs.py`
as an ordinary func, with `dt` resolved to a dtype (the config's default float when omitted).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core import dtypes as _dt
from ..core.errors import QdTypeError
from ..lang import linalg
from ..lib import linalg as linalg_funcs
from . import builtin_calls as bc
from . import calls
from .kinds import RUNTIME, known
from .values import CT, MatV

if TYPE_CHECKING:
    from .lowering import Lowering

__all__: list[str] = []


def _entry(name: str, kernel_func, sizes: tuple[int, ...], message: str, with_b: bool = False):
    def handler(low: Lowering, f, node, args, kwargs):
        arity = 2 if with_b else 1
        if len(args) > arity + 1 or set(kwargs) - {"dt"} or (len(args) > arity and "dt" in kwargs):
            raise QdTypeError(f"qd.{name}() takes {'A, b' if with_b else 'A'} and an optional dt")
        if len(args) < arity:
            raise QdTypeError(f"qd.{name}() needs {'a matrix A and a vector b' if with_b else 'a matrix A'}")
        a = args[0]
        if not (isinstance(a, MatV) and len(a.shape) == 2 and a.shape[0] == a.shape[1]):
            raise QdTypeError(f"qd.{name}() needs a square matrix, got {low.describe(a)}", low.loc(node.args[0]))
        if a.shape[0] not in sizes:
            raise QdTypeError(message, low.loc(node.args[0]))
        if with_b:
            b = args[1]
            if not (isinstance(b, MatV) and b.shape == (a.shape[0],)):
                raise QdTypeError(f"qd.{name}(): b must be a vector of {a.shape[0]} components, got "
                                  f"{low.describe(b)}", low.loc(node.args[1]))
        dt = args[arity] if len(args) > arity else kwargs.get("dt", CT(None))
        if known(dt) is RUNTIME:
            raise QdTypeError(f"qd.{name}(): dt must be a compile-time dtype")
        d = low.cfg.default_fp if dt.value is None else _dt.as_dtype(dt.value)
        if d is None or not d.is_float:
            raise QdTypeError(f"qd.{name}(): dt must be a float dtype such as qd.f32 or qd.f64, got {dt.value!r}")
        return calls.call_func(low, kernel_func, node, given=([*args[:arity], CT(d)], {}))

    return bc.Builtin(f"qd.{name}", handler, f"qd.{name} of a small matrix, in the kernel language")


for _f, _name, _kf, _sizes, _msg, _b in (
        (linalg.svd, "svd", linalg_funcs.svd_k, (2, 3), "SVD only supports 2×2 and 3×3 matrices.", False),
        (linalg.polar_decompose, "polar_decompose", linalg_funcs.polar_k, (2, 3),
         "Polar decomposition only supports 2×2 and 3×3 matrices.", False),
        (linalg.sym_eig, "sym_eig", linalg_funcs.eigh_k, (2, 3, 4, 5, 6),
         "Symmetric eigen solver currently supports sizes up to 6×6.", False),
        (linalg.make_spd, "make_spd", linalg_funcs.make_spd_k, (2, 3, 4, 5, 6),
         "Symmetric eigen solver currently supports sizes up to 6×6.", False),
        (linalg.eig, "eig", linalg_funcs.eig_k, (2,), "Eigen solver only supports 2×2 matrices.", False),
        (linalg.solve, "solve", linalg_funcs.solve_k, (2, 3), "Solver only supports 2×2 and 3×3 matrices.", True)):
    bc._register([_f], _entry(_name, _kf, _sizes, _msg, _b))
