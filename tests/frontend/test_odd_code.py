"""Odd and unsupported kernel code: always a qd error with a location, never an internal one."""

import importlib.util
import itertools
import os
import textwrap
import warnings

import numpy as np
import pytest

import qd

SNIPPETS = [
 "x[i] = x", "x[i] = x[1:2]", "a, b = 1", "x.shape = 3", "for j in x:\n            pass",
 "for j in range(1.5):\n            pass",
 "while x:\n            pass", "y = qd.static(i)", "del x", "global y", "y = lambda: 1", "x[i] = 's'", "x[i] = None",
 "x[i] = nothere()", "y = range()", "for j in qd.ndrange():\n            pass", "qd.atomic_add(1, 2)", "x[i] += x",
 "return x",
 "x[i] = (1, 2)", "x[1.5] = 1", "x[i, i] = 1", "x[i] = qd.cast(x[i], 5)", "x[i] = int(x)", "x[i] = abs()",
 "x[i] = min(x[i])",
 "x[i] = x[i] ** x", "x[i] = x[i] @ x[i]", "x[i] = not x", "x[i] = -x", "x[i] = 1 if x else 2", "assert x[i]",
 "with open('f') as f:\n            pass", "yield x", "import os", "class A:\n            pass",
 "def inner():\n            pass",
 "x[i] = {1: 2}", "x[i] = [1]", "x[i] = f'{i}'", "x[i] = b'a'", "x[i] = 1j", "x[i] = ...", "x[i] = (y := 3)",
 "*a, b = (1, 2, 3)", "x[i] = x[i] < x < 3", "x[i] = x.nothing", "x[i] = qd.nothing", "x[i] = math.sqrt(x)",
 "x[i] = x[i] if x[i] else x", "x[i] = qd.sqrt('a')", "y = 1\n        y = x", "x[i] = len(3)", "x[i] = x[i, 0]",
 "x[i] = qd.static(x)", "x[i] = x[x]", "x[i] = x[i] << 1.5", "x[i] = ~x[i]", "x[i] = qd.atomic_and(x[i], 1)",
 "x[i] = float('nan')", "x[i] = 10 ** 400", "x[i] = 1 // 0", "x[i] = 1.0 / 0", "x[i] = qd.i8(1000)", "x[i] = qd.u1(2)",
 "for j in qd.static(3):\n            pass", "for j in qd.static(range(2)):\n            break", "x[i] = x[i] and x",
 "raise ValueError()",
 "x[i] = sum(x)", "x[i] = qd.max()", "x[i] = qd.ndrange(3)", "x[i] = range(3)", "x[i] = qd.template()", "x[i] = qd",
 "x[i] = x[i].real", "x[i] = -(-2147483648)", "x[i] = qd.cast(1e40, qd.i32)", "x[i] = x[-1]",
 "if qd.static(x):\n            pass", "x[i] = x[i] if qd.static(1) else x",
 # found by the mutation generator (tests/frontend/_mutate.py)
 "for j in range(1, 2, 0):\n            pass", "x[i] = qd.max(x[i], 10 ** 400)", "x[i] = x[i] + 10 ** 400",
 "x[i] = np.zeros(3)()", "x[i] = qd.types.NDArray[0]", "x[i] = qd.types.NDArray[qd.f32, -1]",
 "x[i] = qd.ndarray(qd.f32, 1.5)", "x[i] = qd.min()", "x[i] = qd.u8(-1)", "x[i] = qd.cast(1, 'nothing')",
 "x[i] = qd.static(qd.i32('a'))", "y = qd.ndarray(qd.f32, (2, -1))", "x[i] = 1 if 1 in qd else 0",
 "x[i] = qd.cast(math.inf, qd.u8)", "x[i] = x[i] if qd.static(qd.types.NDArray['(x', 1]) else 0",
 "if qd.static(np.zeros(3)):\n            pass", "for j in range(x.shape[0] << 70):\n            x[j] = 1",
 "x[i] = 1 if np.zeros(3) else 0", "x[i] = 1 if not np.zeros(3) else 0", "x[i] = 1 if np.zeros(3) and 1 else 0",
 "x[i] = 1 if x[i] > 0 and np.zeros(3) else 0", "x[i] = qd.cast('s', qd.i32)", "x[i] = qd.cast(None, qd.f32)",
 "x[i] = qd.cast(10 ** 400, qd.f32)", "x[i] = qd.sqrt(-1.0)", "x[i] = qd.log(0.0)", "x[i] = 1.0 / 0.0",
 "x[i] = 1e300", "x[i] = x[i] * 1e300", "x[i] = qd.f32(1e300)", "x[i] = qd.cast(1e300, qd.f32)",
 "x[i] = qd.i8(1.0e20)", "x[i] = qd.cast(float('nan'), qd.i32)", "x[i] = qd.exp(1000.0)",
 "x[i] = qd.f32(2 ** 200) * 0", "x[i] = 2.0 ** 5000",
]


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    path = tmp_path_factory.mktemp("odd") / "odd_kernels.py"
    parts = ["import math", "import numpy as np", "import qd", "KERNELS = []"]
    spans = []
    for n, body in enumerate(SNIPPETS):
        first = sum(p.count("\n") + 1 for p in parts) + 1
        parts.append(textwrap.dedent(f"""

            @qd.kernel
            def k{n}(x: qd.types.NDArray[qd.f32, 1]):
                for i in range(x.shape[0]):
                    {{body}}

            KERNELS.append(k{n})
        """).replace("{body}", body))
        spans.append((first, first + parts[-1].count("\n")))
    path.write_text("\n".join(parts))
    spec = importlib.util.spec_from_file_location("odd_kernels", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.KERNELS, spans, str(path)


@pytest.mark.parametrize("n", range(len(SNIPPETS)), ids=[s.split("\n")[0][:30] for s in SNIPPETS])
def test_odd_code_gives_a_located_qd_error_or_runs(kernels, n):
    """The error names a line of this snippet's kernel in the generated file, shows it with a
    caret, and carries no internal exception."""
    table, spans, path = kernels
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            table[n](np.zeros(4, np.float32))
        except qd.QdInternalError as e:  # pragma: no cover - the failure being tested for
            pytest.fail(f"internal error for {SNIPPETS[n]!r}: {e}")
        except qd.QdError as e:
            lines = str(e).splitlines()
            assert e.loc is not None and lines[0].startswith(f"{path}:{e.loc.line}:"), str(e)
            first, last = spans[n]
            assert first <= e.loc.line <= last, f"line {e.loc.line} is outside the kernel ({first}-{last}): {e}"
            assert len(lines) >= 3 and set(lines[2].strip()) == {"^"}, str(e)
            assert e.__cause__ is None and (e.__suppress_context__ or e.__context__ is None)
    qd_dir = os.path.dirname(os.path.abspath(qd.__file__)) + os.sep
    inside = [f"{w.filename}:{w.lineno}: {w.message}" for w in caught if os.path.abspath(w.filename).startswith(qd_dir)]
    assert not inside, f"warnings pointing into qd: {inside}"


@qd.func
def _bare_then_value(v):
    if v > 0:
        return
    return v * 2  # err:bare-then-value


def test_func_with_a_bare_return_and_a_value_return():
    @qd.kernel
    def k(x: qd.types.NDArray[qd.f32, 1]):
        for i in range(x.shape[0]):
            x[i] = _bare_then_value(x[i])

    with pytest.raises(qd.QdTypeError) as ei:
        k(np.zeros(4, np.float32))
    line = next(n + 1 for n, t in enumerate(open(__file__).read().splitlines()) if t.endswith("# err:bare-then-value"))
    assert str(ei.value).startswith(f"{__file__}:{line}:"), str(ei.value)


def _wrap(v: int, bits: int, signed: bool) -> int:
    v &= (1 << bits) - 1
    return v - (1 << bits) if signed and v >= 1 << (bits - 1) else v


def test_shift_by_the_width_or_more_wraps_like_python_ints():
    """LLVM makes such shifts poison (a debug-mode kernel shifting a loop bound by 70 crashed);
    qd gives what Python's shift gives, wrapped to the type's width."""
    @qd.kernel
    def sh(x: qd.types.NDArray[qd.i32, 1], u: qd.types.NDArray[qd.u32, 1], n: qd.types.NDArray[qd.i32, 1],
           a: qd.types.NDArray[qd.i32, 1], b: qd.types.NDArray[qd.i32, 1], c: qd.types.NDArray[qd.u32, 1]):
        for i in range(x.shape[0]):
            a[i] = x[i] << n[i]
            b[i] = x[i] >> n[i]
            c[i] = u[i] >> qd.u32(n[i])
        a[1] = x[1] << n[1]  # serial code: scalar shifts, not the vector ones
        b[2] = x[2] >> n[2]
        c[3] = u[3] >> qd.u32(n[3])

    rng = np.random.default_rng(5)
    x = rng.integers(-2 ** 31, 2 ** 31, 64, dtype=np.int64).astype(np.int32)
    n = rng.integers(0, 80, 64).astype(np.int32)
    n[:4] = [31, 33, 40, 35]
    u = x.astype(np.uint32)
    a, b, c = np.zeros(64, np.int32), np.zeros(64, np.int32), np.zeros(64, np.uint32)
    sh(x, u, n, a, b, c)
    assert a.tolist() == [_wrap(int(v) << int(s), 32, True) for v, s in zip(x, n)]
    assert b.tolist() == [int(v) >> int(s) for v, s in zip(x, n)]
    assert c.tolist() == [int(v) >> int(s) for v, s in zip(u, n)]


def test_empty_range_whose_length_overflows_is_empty():
    """range(8, -2 ** 63) is empty; counting it as e - s wrapped to ~2 ** 63 iterations (a mutant
    hung). The loops stop after 100 iterations so that a regression fails instead of hanging."""
    @qd.kernel
    def count(out: qd.types.NDArray[qd.i64, 1], s: qd.i64, e: qd.i64, st: qd.i64):
        for _i in range(1):
            c1 = 0
            for _j in range(s, e):
                c1 += 1
                if c1 > 100:
                    break
            c3 = 0
            for _j in range(s, e, 3):
                c3 += 1
                if c3 > 100:
                    break
            cm = 0
            for _j in range(e, s, -1):
                cm += 1
                if cm > 100:
                    break
            cd = 0
            for _j in range(s, e, st):
                cd += 1
                if cd > 100:
                    break
            out[0] = c1
            out[1] = c3
            out[2] = cm
            out[3] = cd

    out = np.zeros(4, np.int64)
    for s, e, st in [(8, -2 ** 63, 1), (2 ** 62, -2 ** 63, 5), (-8, 2 ** 62, -1), (0, 10, 3), (10, 0, -3), (4, 9, 1)]:
        count(out, s, e, st)
        expect = [sum(1 for _ in itertools.islice(r, 101))
                  for r in (range(s, e), range(s, e, 3), range(e, s, -1), range(s, e, st))]
        assert out.tolist() == expect, (s, e, st)
