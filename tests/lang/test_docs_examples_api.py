"""API pieces quadrants' user guide uses, each on the guide's own small program, run on quadrants and on
qd (through `python -m qd.standin`, so the program is the guide's text) with the same output:
`@qd.func(requires_top_level=True)` refused under run-time control flow (directly or through a func),
`Matrix.frobenius_inner`, `has_grad()` of tensors, and `qd.init(qd.python)` running on qd's CPU."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests._support import quadrants_oracle

pytestmark = pytest.mark.slow  # two interpreters per program



def _same(tmp_path: Path, source: str, args: tuple[str, ...] = ()) -> str:
    return quadrants_oracle.same(tmp_path, source, standin=True, args=args)


def test_requires_top_level_is_refused_under_run_time_control_flow(tmp_path):
    out = _same(tmp_path, """
        import quadrants as qd
        qd.init(arch=qd.cpu)

        @qd.func(requires_top_level=True)
        def op(arr: qd.Template, n: qd.i32) -> None:
            for i in range(n):
                arr[i] = arr[i] + 1

        @qd.func
        def helper(arr: qd.Template, n: qd.i32) -> None:
            op(arr, n)

        @qd.kernel
        def good(arr: qd.Template, n: qd.i32) -> None:
            op(arr, n)
            for _ in qd.static(range(2)):
                op(arr, n)
            helper(arr, n)

        @qd.kernel
        def bad(arr: qd.Template, n: qd.i32, flag: qd.i32) -> None:
            if flag > 0:
                op(arr, n)

        @qd.kernel
        def bad_through_helper(arr: qd.Template, n: qd.i32, flag: qd.i32) -> None:
            if flag > 0:
                helper(arr, n)

        a = qd.field(qd.i32, shape=4)
        good(a, 4)
        print(a.to_numpy().tolist())
        for k in (bad, bad_through_helper):
            try:
                k(a, 4, 1)
                print("no error")
            except qd.QuadrantsSyntaxError:
                print("refused")
    """)
    assert out.splitlines() == ["[4, 4, 4, 4]", "refused", "refused"]


def test_frobenius_inner_has_grad_and_the_python_arch(tmp_path):
    _same(tmp_path, """
        import numpy as np
        import quadrants as qd
        qd.init(qd.python)

        @qd.kernel
        def inner(out: qd.types.NDArray[qd.f32, 1]):
            a = qd.Matrix([[1.0, 2.0], [3.0, 4.0]])
            b = qd.Matrix([[0.5, 1.0], [0.0, 2.0]])
            out[0] = a.frobenius_inner(b)

        out = np.zeros(1, np.float32)
        inner(out)
        print(out.tolist())
        qd.init(arch=qd.cpu)
        t_field = qd.tensor(qd.f32, shape=(4,), backend=qd.Backend.FIELD)
        t_nd = qd.tensor(qd.f32, shape=(4,), backend=qd.Backend.NDARRAY)
        ng = qd.tensor(qd.f32, shape=(4,), needs_grad=True)
        print(t_field.has_grad(), t_nd.has_grad(), ng.has_grad())
    """)
