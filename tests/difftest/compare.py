"""Do two runs of a program agree? Outputs are compared key by key.

Integers (and booleans) must be equal exactly, with the same dtype and shape. Floats agree
within a relative tolerance plus an absolute one scaled by the largest magnitude in the array:
the generator keeps float expressions small and exact where it matters (conversions to int,
comparisons), but compiled code may contract or reassociate inexact arithmetic, and the
absolute error of a sum is relative to its largest terms rather than to a result that cancelled
to nearly zero. NaN equals NaN and infinities must match in sign.
"""

from __future__ import annotations

from typing import Any

import numpy as np

RTOL = 1e-4
ATOL = 1e-5


def differences(a: Any, b: Any, path: str = "OUT", rtol: float = RTOL, atol: float = ATOL) -> list[str]:
    """Where `a` and `b` differ, one line each (empty: they agree)."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                out.append(f"{path}[{k!r}]: only in {'first' if k in a else 'second'}")
                continue
            out += differences(a[k], b[k], f"{path}[{k!r}]", rtol, atol)
        return out
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{path}: {len(a)} items vs {len(b)}"]
        out = []
        for k, (x, y) in enumerate(zip(a, b)):
            out += differences(x, y, f"{path}[{k}]", rtol, atol)
        return out
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return _arrays(a, b, path, rtol, atol)
    if _is_num(a) and _is_num(b):
        if isinstance(a, float) != isinstance(b, float):
            return [f"{path}: {type(a).__name__} {a!r} vs {type(b).__name__} {b!r}"]
        return _arrays(np.asarray(a), np.asarray(b), path, rtol, atol)
    if type(a) is not type(b) or a != b:
        return [f"{path}: {a!r} vs {b!r}"]
    return []


def _is_num(x: Any) -> bool:
    return isinstance(x, bool | int | float)


def _arrays(a: Any, b: Any, path: str, rtol: float, atol: float) -> list[str]:
    if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)):
        return [f"{path}: {type(a).__name__} vs {type(b).__name__}"]
    if a.shape != b.shape:
        return [f"{path}: shape {a.shape} vs {b.shape}"]
    if a.dtype != b.dtype and a.ndim > 0:
        return [f"{path}: dtype {a.dtype} vs {b.dtype}"]
    if a.dtype.kind in "f" or b.dtype.kind in "f":
        x, y = a.astype(np.float64), b.astype(np.float64)
        nan = np.isnan(x) | np.isnan(y)
        same_nan = np.isnan(x) == np.isnan(y)
        inf = np.isinf(x) | np.isinf(y)
        finite = ~nan & ~inf
        scale = max(1.0, float(np.max(np.abs(np.concatenate([x[finite], y[finite]])), initial=0.0)))
        close = np.zeros(x.shape, dtype=bool)
        close[finite] = np.abs(x[finite] - y[finite]) <= atol * scale + rtol * np.abs(y[finite])
        close[inf & ~nan] = x[inf & ~nan] == y[inf & ~nan]
        ok = np.where(nan, same_nan, close)
    else:
        ok = a == b
    if np.all(ok):
        return []
    bad = np.argwhere(~np.asarray(ok))
    first = tuple(int(i) for i in bad[0]) if bad.size else ()
    xa = a[first] if first else a
    xb = b[first] if first else b
    return [f"{path}: {int((~np.asarray(ok)).sum())} of {max(1, a.size)} differ; at {first or '()'} {xa!r} vs {xb!r}"]


def agree(a: Any, b: Any) -> bool:
    return not differences(a, b)
