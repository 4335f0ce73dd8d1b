"""Odd and unsupported kernel code: always a qd error with a location, never an internal one."""

import importlib.util
import textwrap
import warnings

import numpy as np
import pytest

import qd

SNIPPETS = [
 "x[i] = x", "x[i] = x[1:2]", "a, b = 1", "x.shape = 3", "for j in x:\n            pass", "for j in range(1.5):\n            pass",
 "while x:\n            pass", "y = qd.static(i)", "del x", "global y", "y = lambda: 1", "x[i] = 's'", "x[i] = None",
 "x[i] = nothere()", "y = range()", "for j in qd.ndrange():\n            pass", "qd.atomic_add(1, 2)", "x[i] += x", "return x",
 "x[i] = (1, 2)", "x[1.5] = 1", "x[i, i] = 1", "x[i] = qd.cast(x[i], 5)", "x[i] = int(x)", "x[i] = abs()", "x[i] = min(x[i])",
 "x[i] = x[i] ** x", "x[i] = x[i] @ x[i]", "x[i] = not x", "x[i] = -x", "x[i] = 1 if x else 2", "assert x[i]",
 "with open('f') as f:\n            pass", "yield x", "import os", "class A:\n            pass", "def inner():\n            pass",
 "x[i] = {1: 2}", "x[i] = [1]", "x[i] = f'{i}'", "x[i] = b'a'", "x[i] = 1j", "x[i] = ...", "x[i] = (y := 3)",
 "*a, b = (1, 2, 3)", "x[i] = x[i] < x < 3", "x[i] = x.nothing", "x[i] = qd.nothing", "x[i] = math.sqrt(x)",
 "x[i] = x[i] if x[i] else x", "x[i] = qd.sqrt('a')", "y = 1\n        y = x", "x[i] = len(3)", "x[i] = x[i, 0]",
 "x[i] = qd.static(x)", "x[i] = x[x]", "x[i] = x[i] << 1.5", "x[i] = ~x[i]", "x[i] = qd.atomic_and(x[i], 1)",
 "x[i] = float('nan')", "x[i] = 10 ** 400", "x[i] = 1 // 0", "x[i] = 1.0 / 0", "x[i] = qd.i8(1000)", "x[i] = qd.u1(2)",
 "for j in qd.static(3):\n            pass", "for j in qd.static(range(2)):\n            break", "x[i] = x[i] and x", "raise ValueError()",
 "x[i] = sum(x)", "x[i] = qd.max()", "x[i] = qd.ndrange(3)", "x[i] = range(3)", "x[i] = qd.template()", "x[i] = qd",
 "x[i] = x[i].real", "x[i] = -(-2147483648)", "x[i] = qd.cast(1e40, qd.i32)", "x[i] = x[-1]",
 "if qd.static(x):\n            pass", "x[i] = x[i] if qd.static(1) else x",
]


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    path = tmp_path_factory.mktemp("odd") / "odd_kernels.py"
    parts = ["import math", "import numpy as np", "import qd", "KERNELS = []"]
    for n, body in enumerate(SNIPPETS):
        parts.append(textwrap.dedent(f"""

            @qd.kernel
            def k{n}(x: qd.types.NDArray[qd.f32, 1]):
                for i in range(x.shape[0]):
                    {{body}}

            KERNELS.append(k{n})
        """).replace("{{body}}", body))
    path.write_text("\n".join(parts))
    spec = importlib.util.spec_from_file_location("odd_kernels", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.KERNELS


@pytest.mark.parametrize("n", range(len(SNIPPETS)), ids=[s.split("\n")[0][:30] for s in SNIPPETS])
def test_odd_code_gives_a_located_qd_error_or_runs(kernels, n):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            kernels[n](np.zeros(4, np.float32))
        except qd.QdInternalError as e:  # pragma: no cover - the failure being tested for
            pytest.fail(f"internal error for {SNIPPETS[n]!r}: {e}")
        except qd.QdError as e:
            assert e.loc is not None and "odd_kernels.py:" in str(e).splitlines()[0]
