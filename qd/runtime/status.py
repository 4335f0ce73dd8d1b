"""What a failed run-time check leaves in a launch's status block, and the error it becomes.

The checks are compiled into kernels by `qd.codegen.checks`, which documents when each one is
compiled in; a failing one records (kind, site, value) in the status block and the launcher
raises `check_error(...)` once the launch returns. The kinds and the decoding live here, with
the runtime, so that launching code (a kernel from the disk cache included) needs nothing of
the code generator. The kind numbers are the contract between the two: both take them from
`qd.core.abi` (`tests/runtime/test_check_status.py` checks what codegen writes).
"""

from __future__ import annotations

import string
import struct

import numpy as np

from ..core.abi import (
    ADD,
    ASSERT,
    EXTENT,
    I32_MAX,
    INT_TYPES,
    MAX_RECURSION,
    MUL,
    NEG_POW,
    RECURSION,
    SHL,
    STEP,
    SUB,
)
from ..core.dtypes import ALL as _ALL_DTYPES
from ..core.errors import QdArgumentError, QdAssertionError, QdError, QdRuntimeError, SourceLoc, render

_U64 = (1 << 64) - 1
DTYPES = {t.name: t for t in _ALL_DTYPES}

_OVERFLOW_WORD = {ADD: "Addition", SUB: "Subtraction", MUL: "Multiplication", SHL: "Shift left"}


def overflow_report(kind: int, value: int, loc: SourceLoc | None) -> str:
    """What the launcher prints for the overflow record of a debug launch (quadrants prints
    "Addition overflow detected in <place>" and goes on): the message, the place, the source line."""
    t = INT_TYPES[value] if 0 <= value < len(INT_TYPES) else None
    what = f"the result does not fit {t}" if t is not None else "the result does not fit its type"
    if kind == SHL and t is not None:
        what = f"bits are shifted out of {t}, or the shift amount is not in 0..{t.bits - 1}"
    head = f"{_OVERFLOW_WORD.get(kind, 'Integer')} overflow detected in"
    if loc is None:
        return f"{head} a kernel: {what}; the result wrapped around\n"
    return f"{head} {render(loc, what + '; the result wrapped around')}\n"


def shortest(x: float, single: bool) -> str:
    """A float as quadrants' runtime prints a formatted assert value (C++ `fmt`'s `{}`): the
    shortest digits that read back as the same f32 (`single`) or f64, positional for decimal
    exponents -4 to 15 and without a trailing `.0`, else `1.5e+16`; `nan`, `inf`, `-0`."""
    v = np.float32(x) if single else np.float64(x)
    if np.isnan(v):
        return "nan"
    if np.isinf(v):
        return "inf" if v > 0 else "-inf"
    mantissa, _, exp = np.format_float_scientific(v, unique=True, trim="-", exp_digits=2).partition("e")
    if v == 0 or -4 <= int(exp) < 16:
        return np.format_float_positional(v, unique=True, trim="-")
    return f"{mantissa}e{exp}"


def format_assert(template: str, types: list[str], words: list[int]) -> str:
    """A failed assert's message from its template (`frontend.assert_messages`) and the i64
    status words its code stored (floats as double bits): integers in decimal, floats as
    `shortest` gives them, a `{k:%spec}` field by Python's `%`."""
    values: list[object] = []
    for t, w in zip(types, words):
        d = DTYPES.get(t)
        if d is not None and d.is_float:
            f = struct.unpack("<d", struct.pack("<q", w))[0]
            values.append(float(np.float32(f)) if d.bits == 32 else f)
        else:
            values.append(w & _U64 if d is not None and not d.is_signed else w)
    out = []
    for literal, name, spec, _ in string.Formatter().parse(template):
        out.append(literal)
        if name is None:
            continue
        k = int(name)
        v, t = values[k], DTYPES.get(types[k])
        if spec:
            out.append(spec % v)
        elif isinstance(v, float):
            out.append(shortest(v, t is not None and t.bits == 32))
        else:
            out.append(str(int(v)))
    return "".join(out)


def check_error(kind: int, value: int, loc: SourceLoc | None, message: str | None = None) -> QdError:
    """The error for a status record (kind, value) written by a failed check at `loc`; `message`
    is the failed assert's, if it has one."""
    if kind == ASSERT:
        return QdAssertionError(f"assertion failed: {message}" if message else "assertion failed", loc)
    if kind in _OVERFLOW_WORD:
        t = INT_TYPES[value] if 0 <= value < len(INT_TYPES) else None
        what = f"the result does not fit {t}" if t is not None else "the result does not fit its type"
        if kind == SHL and t is not None:
            what = f"bits are shifted out of {t}, or the shift amount is not in 0..{t.bits - 1}"
        return QdRuntimeError(f"{_OVERFLOW_WORD[kind]} overflow detected: {what}", loc)
    if kind == STEP:
        return QdRuntimeError("range() step must not be zero", loc)
    if kind == RECURSION:
        if 0 < value <= MAX_RECURSION:  # the frames filled the stack first (the record holds the depth)
            return QdRuntimeError(f"recursion {value} calls deep of this real func fills the stack its frames may "
                                  "use: the launch was stopped before it could overflow the stack", loc)
        return QdRuntimeError(f"recursion deeper than {MAX_RECURSION} calls of this real func: the launch was stopped "
                              "before it could overflow the stack", loc)
    if kind == NEG_POW:
        return QdRuntimeError(f"Negative exponent in pow(int, int) is not allowed (the exponent is {value})", loc)
    if kind == EXTENT:
        return QdArgumentError(f"launch refused: an array extent of {value} is read here as a qd.i32 "
                               f"(.shape and len() are i32 in kernels), which holds at most {I32_MAX}", loc)
    # an assertion failure, as quadrants' debug bounds check is (so `except AssertionError` sees it)
    return QdAssertionError(f"Out of bound access: index {value} is out of bounds", loc)
