"""`qd.simt.Tile16x16` and `qd.simt.Tile32x32`: quadrants' register tiles.

A tile is an N x N matrix spread over N lanes of a subgroup: lane i holds row i in N registers
(a dataclass with one N-vector member, `r`). Lanes exchange entries with subgroup shuffles,
never through memory, so blocked linear algebra (a Cholesky factor, a triangular solve, rank-1
updates) keeps its working set in registers. Every lane of the subgroup takes part in each
operation, as in the rest of `qd.simt.subgroup`.

The operations are `@qd.func` methods of the tile's dataclass, made once per (N, dtype). Their
slice syntax is rewritten by the frontend (`qd.frontend.tile_syntax`) into calls of them:
`t[:] = a[r0:r1, c0:c1]` (`_move`, a load), `a[r0:r1, c0:c1] = t` (`_move`, a store), both with
a leading batch index for a 3-D array, `a[r0:r1, c]` (`column`, one entry per lane) and
`t -= qd.outer(u, v)` (`_ger_sub`). A machine without subgroups (the CPU) refuses a tile where
it is made, with quadrants' `QuadrantsSyntaxError`.
"""

# no `from __future__ import annotations`: the tile's member annotation is evaluated where the
# class is made, with its size and dtype in scope
from ...core import dtypes
from ...core.errors import QdSyntaxError, caller_loc
from .. import config
from ..funcs import func
from ..math import sqrt
from ..ops import cast, static, static_assert
from ..structs import dataclass
from ..types import template, vector
from . import subgroup

__all__ = ["Tile16x16", "Tile32x32", "column"]

_made: dict = {}  # (size, dtype) -> the tile dataclass (an explicit cache)


def tile_type(size: int, dtype, lanes: int):
    """The dataclass of a `size` x `size` tile of `dtype` (the configuration's `default_fp` when
    None) for a machine whose subgroups have `lanes` lanes (0: none)."""
    if lanes == 0:
        raise QdSyntaxError(f"Tile{size}x{size} requires a GPU backend (cuda): this machine has no subgroups "
                            f"(arch={config.current().arch})", caller_loc())
    if size > lanes:
        raise QdSyntaxError(f"Tile{size}x{size} needs a subgroup of {size} lanes; this machine's has {lanes}",
                            caller_loc())
    dt = config.current().default_fp if dtype is None else dtypes.as_dtype(dtype)
    if dt is None or not dt.is_float:
        raise QdSyntaxError(f"Tile{size}x{size}: dtype must be qd.f32 or qd.f64, got {dtype!r}", caller_loc())
    key = (size, dt)
    if key not in _made:
        _made[key] = _make(size, dt)
    return _made[key]


def _make(n: int, dt):
    class Tile:
        r: vector(n, dt)

        @func
        def _move(self, arr: template(), store: template(), three: template(), batch, row_start, row_stop,
                  col_start, col_stop):
            """Lane i loads (or stores) row `row_start + i` of `arr`, columns `col_start` up to
            `col_stop` (at most N of them), inside `arr`'s extent and `[row_start, row_stop)`;
            a load leaves the registers outside that range as they were."""
            row = row_start + subgroup.invocation_id()
            if row < min(row_stop, arr.shape[static(1 if three else 0)]):
                col_end = min(col_stop, arr.shape[static(2 if three else 1)])
                for j in static(range(n)):
                    if col_start + j < col_end:
                        if static(store and three):
                            arr[batch, row, col_start + j] = self.r[j]
                        elif static(store):
                            arr[row, col_start + j] = self.r[j]
                        elif static(three):
                            self.r[j] = arr[batch, row, col_start + j]
                        else:
                            self.r[j] = arr[row, col_start + j]

        @func
        def eye_(self):
            """This tile becomes the identity."""
            lane = subgroup.invocation_id()
            for j in static(range(n)):
                self.r[j] = cast(1.0 if lane == j else 0.0, dt)

        @func
        def _ger_sub(self, a, b):
            """self -= a b^T, lane i holding a[i] and b[i]."""
            for j in static(range(n)):
                self.r[j] = self.r[j] - a * subgroup.shuffle(b, dtypes.u32(j))

        @func
        def cholesky_(self, eps):
            """The lower triangle becomes L with L L^T = self, each pivot `sqrt(max(d, eps))`;
            `eps` is read on the pivot's own lane, so it may differ per lane."""
            lane = dtypes.i32(subgroup.invocation_id())
            norm = cast(0.0, dt)  # this row's sum of squares left of the pivot
            for k in static(range(n)):
                pivot = cast(0.0, dt)
                if lane == k:
                    pivot = sqrt(max(self.r[k] - norm, eps))
                    self.r[k] = pivot
                pivot_k = subgroup.shuffle(pivot, dtypes.u32(k))
                dot_even = cast(0.0, dt)  # two partial sums: half the dependent chain
                dot_odd = cast(0.0, dt)
                for j in static(range(k)):
                    mine = self.r[j]
                    theirs = subgroup.shuffle(mine, dtypes.u32(k))
                    if static(j % 2 == 0):
                        dot_even += theirs * mine
                    else:
                        dot_odd += theirs * mine
                dot = dot_even + dot_odd
                entry = cast(0.0, dt)
                if lane > k:
                    entry = (self.r[k] - dot) / pivot_k
                    self.r[k] = entry
                if lane > k:
                    norm += entry * entry

        @func
        def _get(self, k):
            """Register `k` (a run-time index) by a compare per register."""
            v = cast(0.0, dt)
            for j in static(range(n)):
                if k == j:
                    v = self.r[j]
            return v

        @func
        def _set(self, k, v):
            for j in static(range(n)):
                if k == j:
                    self.r[j] = v

        @func
        def _trsm(self, low):
            """self becomes X with X low^T = self, `low` lower triangular. The loops stay loops:
            unrolled, the N*N body keeps far more values live."""
            for c in range(n):
                dot = cast(0.0, dt)
                for j in range(n):
                    if c > j:
                        dot += self._get(j) * subgroup.shuffle(low._get(j), dtypes.u32(c))
                diag = subgroup.shuffle(low._get(c), dtypes.u32(c))
                self._set(c, (self._get(c) - dot) / diag)

        @func
        def solve_triangular_(self, rhs: template(), lower: template() = True):
            """`rhs` becomes X with X self^T = rhs; self must be lower triangular (`lower=True`,
            the only form) with no zero on its diagonal."""
            static_assert(lower, "a tile's solve_triangular_ takes only lower=True")
            rhs._trsm(self)

    Tile.__name__ = Tile.__qualname__ = f"Tile{n}x{n}"
    return dataclass(Tile)


@func
def column(arr: template(), three: template(), batch, row_start, row_stop, col):
    """`arr[row_start:row_stop, col]` for a tile's rank-1 update: on lane i, row `row_start + i`
    inside `arr` and `[row_start, row_stop)`, else 0."""
    row = row_start + subgroup.invocation_id()
    v = cast(0, arr.dtype)
    if row < min(row_stop, arr.shape[static(1 if three else 0)]):
        if static(three):
            v = arr[batch, row, col]
        else:
            v = arr[row, col]
    return v


class TileShape:
    """`qd.simt.Tile16x16` / `Tile32x32`: its `SIZE`, and `zeros(dtype=)` / `eye(dtype=)` inside
    kernels (the dtype defaults to `qd.init`'s `default_fp`)."""

    def __init__(self, size: int):
        self.SIZE = size

    def __repr__(self) -> str:
        return f"qd.simt.Tile{self.SIZE}x{self.SIZE}"

    @func
    def zeros(self, dtype: template() = None):
        return static(tile_type(self.SIZE, dtype, subgroup.group_size()))()

    @func
    def eye(self, dtype: template() = None):
        t = static(tile_type(self.SIZE, dtype, subgroup.group_size()))()
        t.eye_()
        return t


Tile16x16 = TileShape(16)
Tile32x32 = TileShape(32)
