"""One semantics at compile time and at run time.

For every dtype, each scalar operation is computed three ways over the same grid of operand
pairs: both operands read from arrays at run time, the right operand a `qd.template()` value
(a constant that LLVM sees, inside a vectorised loop with a scalar tail), and both operands
template values (folded by the frontend). All three must equal a plain Python / numpy
statement of the documented rules (`qd/core/semantics.py`), restated here:

- ints wrap; `//` floors, `%` takes the divisor's sign, both give 0 for a zero divisor;
- a shift by a count outside 0..width-1 gives 0 (-1 for a negative value shifted right); `x ** n` with n < 0
  is 0 for ints;
- floats are IEEE (numpy's result for `+ - * / // %`);
- float min/max ignore NaN and return the first operand on ties;
- float → int truncates and saturates, NaN → 0; bool(x) is x != 0.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from _expr_gen import load_source
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

import qd

INT = ("i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64")
ALL = (*INT, "f32", "f64", "u1")
NP = {"i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64, "u8": np.uint8, "u16": np.uint16,
      "u32": np.uint32, "u64": np.uint64, "f32": np.float32, "f64": np.float64, "u1": np.bool_}
M = K = 3  # the grid: M right operands × K left operands
LENGTH = 67  # run-time loop length: a vectorised body and a scalar tail (the grid repeats)

BIN = {"add": "{x} + {y}", "sub": "{x} - {y}", "mul": "{x} * {y}", "truediv": "{x} / {y}",
       "floordiv": "{x} // {y}", "mod": "{x} % {y}", "pow": "{x} ** {y}", "shl": "{x} << {y}",
       "shr": "{x} >> {y}", "and": "{x} & {y}", "or": "{x} | {y}", "xor": "{x} ^ {y}",
       "lt": "{x} < {y}", "le": "{x} <= {y}", "gt": "{x} > {y}", "ge": "{x} >= {y}", "eq": "{x} == {y}",
       "ne": "{x} != {y}", "min": "min({x}, {y})", "max": "max({x}, {y})"}
UN = {"neg": "-{x}", "abs": "abs({x})", "invert": "~{x}", "not": "not {x}",
      **{f"to_{t}": f"qd.cast({{x}}, qd.{t})" for t in ALL}}


def is_float(d):
    return d[0] == "f"


def bits(d):
    return 1 if d == "u1" else int(d[1:])


def int_range(d):
    b = bits(d)
    return (-(1 << (b - 1)), (1 << (b - 1)) - 1) if d[0] == "i" else (0, (1 << b) - 1)


def wrap(v, d):
    b = bits(d)
    v &= (1 << b) - 1
    return v - (1 << b) if d[0] == "i" and v >= 1 << (b - 1) else v


def ops_for(d):
    binary = [op for op in BIN if not (is_float(d) and op in ("pow", "shl", "shr", "and", "or", "xor"))]
    unary = [op for op in UN if not (is_float(d) and op == "invert")]
    return binary, unary


def result_type(op, d):
    if op in ("lt", "le", "gt", "ge", "eq", "ne", "not"):
        return "u1"
    if op.startswith("to_"):
        return op[3:]
    if op == "truediv":
        return d if is_float(d) else "f32"
    if d == "u1":
        return "u1" if op in ("and", "or", "xor", "invert", "abs") else "i32"
    return d


# ------------------------------------------------------------------ the reference rules


def to_int(x, t):
    """float → int: truncate, saturate, NaN → 0."""
    x = float(x)
    lo, hi = int_range(t)
    if math.isnan(x):
        return 0
    if math.isinf(x):
        return hi if x > 0 else lo
    return min(max(int(x), lo), hi)


def convert(v, src, t):
    if t == "u1":
        return bool(v != 0)
    if is_float(t):
        with np.errstate(all="ignore"):  # f64 → f32 may overflow to inf
            return NP[t](np.array(v, dtype=NP[src]).astype(NP[t]))
    if is_float(src):
        return to_int(v, t)
    return wrap(int(v), t)


def ref_binary(op, x, y, d):
    t = result_type(op, d)
    if op in ("lt", "le", "gt", "ge", "eq", "ne"):
        return {"lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y, "eq": x == y, "ne": x != y}[op]
    if op == "truediv" and not is_float(d):
        x, y = convert(x, d, "f32"), convert(y, d, "f32")
    if is_float(t):
        if op in ("min", "max"):
            better = (y < x) if op == "min" else (y > x)
            return y if (better or math.isnan(x)) else x
        with np.errstate(all="ignore"):
            return {"add": np.add, "sub": np.subtract, "mul": np.multiply, "truediv": np.divide,
                    "floordiv": np.floor_divide, "mod": np.remainder}[op](NP[t](x), NP[t](y))
    if t == "u1":
        return {"and": x & y, "or": x | y, "xor": x ^ y}[op]
    a, b = int(x), int(y)
    if op in ("shl", "shr"):
        if not 0 <= b < bits(t):  # numpy's rule: every bit shifted out
            return -1 if op == "shr" and a < 0 else 0
        return wrap(a << b if op == "shl" else a >> b, t)
    r = {"add": lambda: a + b, "sub": lambda: a - b, "mul": lambda: a * b, "min": lambda: min(a, b),
         "max": lambda: max(a, b), "and": lambda: a & b, "or": lambda: a | b, "xor": lambda: a ^ b,
         "floordiv": lambda: 0 if b == 0 else a // b, "mod": lambda: 0 if b == 0 else a % b,
         "pow": lambda: 0 if b < 0 else pow(a, b, 1 << 64)}[op]()
    return wrap(r, t)


def ref_unary(op, x, d):
    t = result_type(op, d)
    if op.startswith("to_"):
        return convert(x, d, t)
    if op == "not":
        return not x
    if d == "u1":
        if op in ("abs", "invert"):
            return not x if op == "invert" else x
        x = int(x)
    if is_float(t):
        return NP[t](-x) if op == "neg" else NP[t](abs(x))
    x = int(x)
    return wrap({"neg": -x, "abs": abs(x), "invert": ~x}[op], t)


def same(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Element-wise identity: equal bits (so -0.0 is not 0.0), or both NaN."""
    if got.dtype.kind == "f":
        bits_ = got.view(np.uint64 if got.itemsize == 8 else np.uint32) == want.view(
            np.uint64 if got.itemsize == 8 else np.uint32)
        return bits_ | (np.isnan(got) & np.isnan(want))
    return got == want


# ------------------------------------------------------------------ the three kernels


def _decl(name, t, nd):
    return f"{name}: qd.types.NDArray[qd.{t}, {nd}]"


def kernel_source(d: str, e: str) -> str:
    """`rt` reads both operands from arrays (x: d, y: e); `tmpl` computes each binary operation
    with a template right operand (in a parallel loop) into `h_<op>`, and every operation with
    both operands templates (folded) into `f_<op>`: one compile per drawn grid."""
    t = promote(d, e)
    binary, _ = ops_for(t)
    _, unary = ops_for(d)
    rtype = {**{op: result_type(op, t) for op in binary}, **{op: result_type(op, d) for op in unary}}
    outs_rt = ", ".join(_decl(f"o_{op}", rtype[op], 1) for op in binary + unary)
    outs_h = ", ".join(_decl(f"h_{op}", rtype[op], 2) for op in binary)
    outs_f = ", ".join(_decl(f"f_{op}", rtype[op], 2) for op in binary + unary)
    rt = [f"        o_{op}[i] = {BIN[op].format(x='a[i]', y='b[i]')}" for op in binary]
    rt += [f"        o_{op}[i] = {UN[op].format(x='a[i]')}" for op in unary]
    half = [f"            h_{op}[j, i] = {BIN[op].format(x='a[i]', y='ys[j]')}" for op in binary]
    full = [f"            f_{op}[j, k] = {BIN[op].format(x='xs[k]', y='ys[j]')}" for op in binary]
    full += [f"            f_{op}[0, k] = {UN[op].format(x='xs[k]')}" for op in unary]
    return "\n".join([
        "import qd", "", "",
        "@qd.kernel",
        f"def rt({_decl('a', d, 1)}, {_decl('b', e, 1)}, {outs_rt}):",
        "    for i in range(a.shape[0]):", *rt, "", "",
        "@qd.kernel",
        f"def tmpl({_decl('a', d, 1)}, xs: qd.template(), ys: qd.template(), {outs_h}, {outs_f}):",
        "    for i in range(a.shape[0]):",
        f"        for j in qd.static(range({M})):", *half,
        f"    for j in qd.static(range({M})):",
        f"        for k in qd.static(range({K})):", *full, "",
    ]), binary, unary, rtype


_kernels: dict[tuple, tuple] = {}


def kernels(d, e, folder):
    if (d, e) not in _kernels:
        src, *info = kernel_source(d, e)
        _kernels[d, e] = (*(load_source(src, folder, name) for name in ("rt", "tmpl")), *info)
    return _kernels[d, e]


# ------------------------------------------------------------------ operand values


def values(d):
    if d == "u1":
        return st.booleans()
    if is_float(d):
        special = st.sampled_from([0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, math.inf, -math.inf, math.nan, 2.0 ** 31,
                                   -(2.0 ** 63), 3e9, 1e20, -1e20, 255.5, 65535.9, -129.0])
        return st.one_of(special, st.floats(width=bits(d))).map(NP[d])
    lo, hi = int_range(d)
    edges = st.sampled_from(sorted({lo, hi, 0, 1, 2, lo + 1, hi - 1, bits(d), bits(d) - 1, bits(d) + 3}
                                   | ({-1, -2} if lo < 0 else set())))
    counts = st.integers(max(lo, -70), min(hi, 70))
    return st.one_of(edges, counts, st.integers(lo, hi)).map(NP[d])


def grid(d, e):
    return st.tuples(st.lists(values(d), min_size=K, max_size=K), st.lists(values(e), min_size=M, max_size=M))


def promote(a, b):
    """The common type of two typed operands (README: the wider float, a float over an int,
    an int over bool, the wider same-kind int, else a strictly wider signed type or the
    unsigned one)."""
    if a == b:
        return a
    if is_float(a) or is_float(b):
        return max((x for x in (a, b) if is_float(x)), key=bits)
    if "u1" in (a, b):
        return b if a == "u1" else a
    if a[0] == b[0]:
        return a if bits(a) >= bits(b) else b
    signed, unsigned = (a, b) if a[0] == "i" else (b, a)
    return signed if bits(signed) > bits(unsigned) else unsigned


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("semantics_kernels")


FEW = dict(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@pytest.mark.parametrize("d", ALL)
@settings(max_examples=2, **FEW)
@given(data=st.data())
def test_compile_time_and_run_time_agree(folder, d, data):
    agree(folder, d, d, data)


@settings(max_examples=5, **FEW)
@given(d=st.sampled_from(ALL), e=st.sampled_from(ALL), data=st.data())
def test_compile_time_and_run_time_agree_for_mixed_types(folder, d, e, data):
    agree(folder, d, e, data)


def agree(folder, d, e, data):
    xs, ys = data.draw(grid(d, e))
    note(f"x: {d}, y: {e}, xs={xs!r} ys={ys!r}")
    rt, tmpl, binary, unary, rtype = kernels(d, e, folder)
    t = promote(d, e)
    grid_ = list(itertools.product(range(M), range(K)))  # (j, k): x = xs[k], y = ys[j]
    pairs = [grid_[i % len(grid_)] for i in range(LENGTH)]
    a = np.array([xs[k] for _, k in pairs], NP[d])
    b = np.array([ys[j] for j, _ in pairs], NP[e])
    o_rt = {op: np.zeros(LENGTH, NP[rtype[op]]) for op in binary + unary}
    rt(a, b, *o_rt.values())
    a_half = np.array([xs[i % K] for i in range(LENGTH)], NP[d])
    o_half = {op: np.zeros((M, LENGTH), NP[rtype[op]]) for op in binary}
    o_full = {op: np.zeros((M, K), NP[rtype[op]]) for op in binary + unary}
    tmpl(a_half, tuple(xs), tuple(ys), *o_half.values(), *o_full.values())
    problems = []

    def check(op, mode, got, want, where):
        for idx in np.argwhere(~same(got, want))[:3]:
            problems.append(f"{op} {mode}: {where(*idx)}: got {got[tuple(idx)]!r}, want {want[tuple(idx)]!r}")

    for op in binary:
        rt_ = NP[rtype[op]]
        u = "f32" if op == "truediv" and not is_float(t) else t  # `/` of ints: each operand's value in f32
        want = np.array([[ref_binary(op, convert(xs[k], d, u), convert(ys[j], e, u), u) for k in range(K)]
                         for j in range(M)], rt_)
        at_pair = np.array([want[j, k] for j, k in pairs], rt_)
        check(op, "run time", o_rt[op], at_pair, lambda i: f"x={a[i]!r} y={b[i]!r} (element {i})")
        check(op, "template y", o_half[op], np.array([[want[j, i % K] for i in range(LENGTH)] for j in range(M)], rt_),
              lambda j, i: f"x={a_half[i]!r} y={ys[j]!r} (element {i})")
        check(op, "both templates", o_full[op], want, lambda j, k: f"x={xs[k]!r} y={ys[j]!r}")
    for op in unary:
        rt_ = NP[rtype[op]]
        want = np.array([ref_unary(op, x, d) for x in xs], rt_)
        check(op, "run time", o_rt[op], np.array([want[k] for _, k in pairs], rt_), lambda i: f"x={a[i]!r}")
        check(op, "template", o_full[op][0], want, lambda k: f"x={xs[k]!r}")
    assert not problems, "\n".join(problems)


def test_kernel_source_covers_every_operation():
    """The generated kernels really contain each operation (guards the generator itself)."""
    src = kernel_source("i8", "i8")[0]
    for op in BIN:
        assert f"o_{op}[i] = " in src and f"h_{op}[j, i] = " in src and f"f_{op}[j, k] = " in src
    assert "qd.cast(a[i], qd.u64)" in src and "ys[j]" in src
    assert qd.kernel  # the module imports qd for the generated kernels' sake
