"""GLSL swizzles of vectors: `v.xy`, `v.zyx = w`, `c.rgb`, `t.st` (up to four components).

Every pattern of one to four letters from one group (`xyzw`, `rgba`, `stpq`) is a property,
as in quadrants, so a swizzle is an attribute lookup like any other; reading one component gives
it as a number, several give a new vector, and assigning writes the components in order.
"""

from __future__ import annotations

from itertools import product

from ..core.errors import QdTypeError, caller_loc

GROUPS = ("xyzw", "rgba", "stpq")


def _property(group: str, pattern: str, wrap) -> property:
    idx = [group.index(ch) for ch in pattern]

    def check(v) -> None:
        if v.ndim != 1 or max(idx) >= v.n:
            what = f"vec{v.n}" if v.ndim == 1 else "a matrix"
            names = group[:v.n] if v.ndim == 1 else "none: index it as m[i, j]"
            raise QdTypeError(f"{what} has no component {pattern!r} (components: {names})", caller_loc())

    def get(v):
        check(v)
        return v.entries[idx[0]] if len(idx) == 1 else wrap(v, idx)

    def set_(v, value) -> None:
        check(v)
        if len(idx) == 1:
            v[idx[0]] = value
            return
        vals = list(value.entries if hasattr(value, "entries") else value)
        if len(vals) != len(idx):
            raise QdTypeError(f"swizzle {pattern!r} takes {len(idx)} components, got {len(vals)}", caller_loc())
        for i, x in zip(idx, vals):
            v[i] = x

    return property(get, set_, doc=f"components {pattern} (GLSL swizzle)")


def install(cls: type, wrap) -> None:
    """Adds every swizzle property to `cls`; `wrap(v, indices)` builds the vector of several."""
    for group in GROUPS:
        for k in range(1, 5):
            for p in product(group, repeat=k):
                setattr(cls, "".join(p), _property(group, "".join(p), wrap))
