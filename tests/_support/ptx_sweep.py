"""A pytest plugin that lowers every kernel variant a test run compiles to PTX as well.

Loaded with `-p tests._support.ptx_sweep` and `QD_PTX_SWEEP=<file>`: each first launch of a
specialisation (`pipeline.get_variant`, which the kernel's launch path calls) also goes
through `qd.compile.ptx.compile_bound` with the same bound arguments, `ptxas` checks the
PTX when it is installed, and one JSON line per variant goes to the file: the kernel, the
test, and the error if lowering or ptxas failed. The CPU run itself is untouched.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import os
import traceback
import warnings

import pytest

from qd.compile.ptx import compile_bound
from qd.core.errors import QdError

from .ptx import PTXAS, ptxas_errors

_kernel = importlib.import_module("qd.dispatch.kernel")  # where a launch asks for its variant
_out = os.environ.get("QD_PTX_SWEEP")
_current = {"test": ""}
_checked: set[str] = set()
_orig = _kernel.get_variant


def _record(kernel, key, bound):
    seen = kernel.variants.get(key) is not None
    v = _orig(kernel, key, bound)
    if seen or _out is None:
        return v
    rec = {"test": _current["test"], "kernel": kernel.fn.__qualname__, "error": None}
    try:
        # the CPU compile has already warned and printed (`qd.static_print`) for this variant: a
        # test that counts those sees the program's own, not the sweep's second compile
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            pv = compile_bound(kernel, bound)
        rec["tasks"] = len(pv.module.tasks)
        text = pv.module.ptx.replace(pv.module.name, "K")
        if PTXAS is not None and text not in _checked:  # identical PTX is assembled once
            _checked.add(text)
            rec["error"] = ptxas_errors(pv.module.ptx)
            rec["ptxas"] = True
    except QdError as e:
        rec["error"] = f"qd error: {e}"
    except Exception:  # a lowering or LLVM failure: the sweep reports it
        rec["error"] = traceback.format_exc(limit=6)
    with open(_out, "a") as f:
        f.write(json.dumps(rec) + "\n")
    return v


_kernel.get_variant = _record


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    _current["test"] = item.nodeid
