"""A worker process of the differential tester: runs program files one after another.

`python worker.py SIDE` with SIDE one of `qd`, `quadrants`, `ref`. The parent writes requests
(pickled `(seed, path)` frames) to stdin and reads one pickled result per request from the
file descriptor given in `DIFFTEST_RESULT_FD`; stdout and stderr are the programs' and the
compilers' chatter (quadrants prints a banner and warnings there), so the protocol keeps off
them. Each program is imported as a fresh module (quadrants reads kernel source through
`inspect`, so it must come from a real file) and its `OUT` dict is normalised to plain numpy
arrays and Python numbers before pickling, so that the parent needs neither qd nor quadrants.
The parent enforces the time limit by killing this process; a crash kills only this process.
"""

from __future__ import annotations

import importlib.util
import os
import pickle
import struct
import sys
import traceback
import warnings
from pathlib import Path
from typing import Any


def _frame_read(stream: Any) -> Any:
    head = stream.read(4)
    if len(head) < 4:
        return None
    (n,) = struct.unpack("<I", head)
    return pickle.loads(stream.read(n))


def _frame_write(stream: Any, obj: Any) -> None:
    data = pickle.dumps(obj, protocol=4)
    stream.write(struct.pack("<I", len(data)) + data)
    stream.flush()


def normalise(x: Any, np: Any) -> Any:
    """An output value as plain data: arrays, Python numbers, lists and dicts of them.

    A returned vector (quadrants' `Vector`, qd's, the reference's `Mat`) becomes an array of
    int64 or float64, whatever its class and dtype, since the classes differ between sides."""
    if isinstance(x, np.ndarray):
        return x.copy()
    if isinstance(x, bool | int | float):
        return x
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, dict):
        return {str(k): normalise(v, np) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [normalise(v, np) for v in x]
    if hasattr(x, "to_numpy"):
        arr = np.asarray(x.to_numpy())
        return arr.astype(np.float64 if arr.dtype.kind == "f" else np.int64)
    return repr(x)


def _load(side: str) -> None:
    here = Path(__file__).resolve().parent
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != here]
    sys.path.insert(0, str(here.parent))
    if side == "ref":
        from difftest import refqd

        sys.modules["qd"] = refqd  # the programs' `import qd` gets the reference
    elif side == "quadrants":
        import quadrants  # noqa: F401 - loaded once, not per program
    else:
        import qd  # noqa: F401


def _run_one(seed: int, path: str, side: str, np: Any) -> dict[str, Any]:
    name = f"difftest_prog_{seed}_{side}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            spec.loader.exec_module(mod)
        return {"status": "ok", "out": normalise(getattr(mod, "OUT", {}), np)}
    except BaseException as exc:  # the program's error is the result
        tb = traceback.extract_tb(exc.__traceback__)
        where = next((f"{Path(f.filename).name}:{f.lineno}" for f in reversed(tb) if f.filename == path), "")
        if isinstance(exc, SyntaxError) and exc.filename == path:
            where = f"{Path(path).name}:{exc.lineno}"
        return {"status": "error", "etype": type(exc).__name__,
                "mro": [c.__name__ for c in type(exc).__mro__], "module": type(exc).__module__,
                "msg": str(exc)[-4000:], "where": where}
    finally:
        sys.modules.pop(name, None)


def main() -> None:
    side = sys.argv[1]
    result = os.fdopen(int(os.environ["DIFFTEST_RESULT_FD"]), "wb")
    requests = sys.stdin.buffer
    _load(side)
    import numpy as np

    if side == "ref":
        np.seterr(all="ignore")
    while True:
        req = _frame_read(requests)
        if req is None:
            return
        seed, path = req
        sys.setrecursionlimit(10000)
        _frame_write(result, _run_one(seed, path, side, np))


if __name__ == "__main__":
    main()
