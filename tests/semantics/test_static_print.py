"""`qd.static_print` prints while a kernel variant compiles, as quadrants' does: compile-time values
as Python prints them, a run-time value as `<qd.Expr>`, a dtype by its name, Python's `sep=` and
`end=`; nothing at a launch of a variant compiled already, and a func's line at every call compiled
(a func instantiation lowered once is printed again at its next call). quadrants traces each
kernel twice per compile, so it prints every line twice; qd prints the first trace's lines."""

from __future__ import annotations

import pytest

import qd
from tests._support import quadrants_oracle

PROGRAM = """
import numpy as np
import quadrants as qd
qd.init(arch=qd.cpu)

@qd.func
def helper(v, scale: qd.template()):
    qd.static_print("static: helper", scale, v)
    return v * scale

@qd.kernel
def k(a: qd.types.NDArray[qd.f32, 1], n: qd.template()):
    qd.static_print("static: k", n, qd.f32, (n, a[0]), sep=" | ")
    qd.static_print("static:", 1, 2.5, sep="-", end="!\\n")
    for i in range(n):
        a[i] = helper(a[i], 2) + helper(a[i], 3) - helper(a[i], 2)

a = np.ones(4, np.float32)
for n in (2, 2, 3):
    print("launch", n)
    k(a, n)
print(a.tolist())
"""
# quadrants 1.3.3 on the CPU
QUADRANTS_OUTPUT = """\
launch 2
static: k | 2 | f32 | (2, <qd.Expr>)
static:-1-2.5!
static: helper 2 <qd.Expr>
static: helper 3 <qd.Expr>
static: helper 2 <qd.Expr>
static: k | 2 | f32 | (2, <qd.Expr>)
static:-1-2.5!
static: helper 2 <qd.Expr>
static: helper 3 <qd.Expr>
static: helper 2 <qd.Expr>
launch 2
launch 3
static: k | 3 | f32 | (3, <qd.Expr>)
static:-1-2.5!
static: helper 2 <qd.Expr>
static: helper 3 <qd.Expr>
static: helper 2 <qd.Expr>
static: k | 3 | f32 | (3, <qd.Expr>)
static:-1-2.5!
static: helper 2 <qd.Expr>
static: helper 3 <qd.Expr>
static: helper 2 <qd.Expr>
[27.0, 27.0, 3.0, 1.0]"""


def one_trace(output: str) -> str:
    """quadrants' output with each compile's second trace left out: within a launch, the
    compile-time lines are one trace's lines twice over."""
    out: list[str] = []
    static: list[str] = []
    for line in [*output.splitlines(), None]:
        if line is not None and line.startswith("static"):
            static.append(line)
            continue
        half = len(static) // 2
        assert static[:half] == static[half:], "a compile's two traces differ"
        out += static[:half]
        static = []
        if line is not None:
            out.append(line)
    return "\n".join(out)


def test_prints_while_compiling(arch, tmp_path, capsys):
    """The same program on qd in this process (quick), against quadrants' recorded output."""
    assert quadrants_oracle.run_here(tmp_path, PROGRAM, capsys) == one_trace(QUADRANTS_OUTPUT)


@pytest.mark.slow  # two interpreters
def test_same_output_as_quadrants(tmp_path):
    ref, got = quadrants_oracle.both(tmp_path, PROGRAM)
    assert ref == QUADRANTS_OUTPUT and got == one_trace(ref)


def test_python_scope_and_bad_options_are_located_errors(arch):
    qd.init(arch=arch)
    with pytest.raises(qd.QdCallError) as e:
        qd.static_print("x")
    assert __file__ in str(e.value)

    @qd.kernel
    def bad(v: qd.f32):
        qd.static_print("x", end=v)

    with pytest.raises(qd.QdStaticError) as e:
        bad(1.0)
    assert "end=" in str(e.value) and __file__ in str(e.value)
