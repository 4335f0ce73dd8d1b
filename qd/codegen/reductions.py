"""Reductions inside parallel loops, found on the IR.

`out[c] += v` on a loop-invariant element, or `total += v` on a kernel-scope scalar, is
accumulated in a register per task chunk and written with one atomic at the end: a contended
atomic per iteration costs about a hundred times more. Only targets that nothing else in the
loop reads, writes or passes to a func qualify, so no iteration can observe a partial value.
How a chunk's partial result reaches memory is the target's (`Target.flush_reduction`): one
atomic on the CPU, a block reduction before one atomic per block on CUDA.
"""

from __future__ import annotations

import numpy as np

from ..core import dtypes as _dt
from ..core import ir

OPS = ("add", "sub", "min", "max", "and", "or", "xor")


def find(loop: ir.For) -> list[list[ir.Expr]]:
    """Groups of atomic updates (AtomicRMW / AtomicVar) that share one accumulator."""
    written = ir.assigned_vars(loop.body)
    stmts = list(ir.walk_stmts(loop.body))
    passed = {a for st in stmts for e in ir.exprs(st) if isinstance(e, ir.CallFunc) for a, _ in e.binds}
    other: set[str] = set()  # arrays touched by anything but a candidate update
    by_array: dict[str, list[tuple[ir.AtomicRMW, tuple]]] = {}
    by_var: dict[int, list[ir.AtomicVar]] = {}
    for st in stmts:
        e = st.expr if isinstance(st, ir.ExprStmt) else None
        if isinstance(e, ir.AtomicRMW) and e.op in OPS:
            sig = _invariant(e.indices, written)
            if sig is not None and not any(_touches(x, e.path) for x in ir.exprs(e.value)):
                by_array.setdefault(e.path, []).append((e, sig))
                continue
        if isinstance(e, ir.AtomicVar) and e.op in OPS:
            by_var.setdefault(id(e.var), []).append(e)
        other.update(_arrays(st))
    groups: list[list[ir.Expr]] = []
    plain = {id(st.var) for st in stmts if isinstance(st, ir.Assign)}
    plain |= {id(v) for st in stmts if isinstance(st, ir.Unpack) for v in st.vars}
    read = {id(e.var) for st in stmts for e in ir.exprs(st) if isinstance(e, ir.VarRead)}
    for vid, items in by_var.items():
        if vid not in plain and vid not in read and len({e.op for e in items}) == 1:
            groups.append(list(items))
    for path, items in by_array.items():
        if path in other or path in passed:
            continue
        ops: dict[tuple, str] = {}
        if any(ops.setdefault(sig, e.op) != e.op for e, sig in items):
            continue  # one element updated with two different operators
        by_sig: dict[tuple, list[ir.Expr]] = {}
        for e, sig in items:
            by_sig.setdefault(sig, []).append(e)
        groups.extend(by_sig.values())
    return groups


def identity(op: str, d: _dt.DType):
    """The neutral element an accumulator starts from."""
    if op in ("add", "sub", "or", "xor"):
        return 0
    if op == "and":
        return -1
    if d.is_float:
        return float("inf") if op == "min" else float("-inf")
    if d.is_bool:
        return op == "min"
    info = np.iinfo(d.np)
    return info.max if op == "min" else info.min


def _invariant(indices, written: set[int]):
    sig = []
    for x in indices:
        if isinstance(x, ir.Const):
            sig.append(("c", x.value))
        elif isinstance(x, ir.ParamRead):
            sig.append(("p", x.path))
        elif isinstance(x, ir.VarRead) and x.var.home == -1 and id(x.var) not in written:
            sig.append(("v", id(x.var)))
        else:
            return None
    return tuple(sig)


def _touches(e: ir.Expr, path: str) -> bool:
    return isinstance(e, (ir.Load, ir.AtomicRMW)) and e.path == path


def _arrays(st) -> set[str]:
    out = {e.path for e in ir.exprs(st) if isinstance(e, (ir.Load, ir.AtomicRMW))}
    if isinstance(st, ir.Store):
        out.add(st.path)
    return out
