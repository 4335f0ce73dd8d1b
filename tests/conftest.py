"""Shared pytest setup.

Tests are arranged by the stage they exercise: `frontend/` (parsing, signatures, located
errors for bad code and bad input), `analysis/` and `rules/` (the Datalog engine, the pruning
rules and what is derived from them), `codegen/` (the LLVM lowering and generated code
itself), `lang/` (the user's API used from plain Python: fields, ndarrays and tensors,
vectors, matrices and structs, `qd.math`, `qd.init` and its configuration), `runtime/`
(launching: arguments, the thread pool, memory, signals, threads), `cache/`, `cli/`, and
`semantics/`, the language suite: kernels whose results are compared
with numpy or Python, run once per target (see `semantics/conftest.py`). Helpers used by more
than one directory live in `_support/`.

Every test that uses ``qd`` starts from a freshly initialised CPU runtime so that compiled
kernels, debug mode and cache settings cannot leak from one test into the next (the semantics
suite initialises for its own target instead). Compiled objects go to a temporary directory
created for this pytest run, never to the user's home cache, so a stale entry from an earlier
checkout cannot make a test pass or fail. The fastcache's per-user secret lives in a temporary
directory too (`QD_CONFIG_DIR`, inherited by the programs tests run in subprocesses), never in
the real home, and so does the user cache root (`XDG_CACHE_HOME`: the compiled rules).
"""

import os
import sys
import tempfile

import pytest

_CONFIG_DIR = tempfile.TemporaryDirectory(prefix="qd-config-")
os.environ["QD_CONFIG_DIR"] = os.path.join(_CONFIG_DIR.name, "qd")
os.environ["XDG_CACHE_HOME"] = os.path.join(_CONFIG_DIR.name, "cache")


@pytest.fixture(scope="session")
def qd_cache_dir(tmp_path_factory):
    """One cache directory per pytest run: fastcache hits between tests are allowed, and they
    must be correct, but nothing outlives the run."""
    return tmp_path_factory.mktemp("qd_cache")


@pytest.fixture(autouse=True)
def _qd_fresh_runtime(request, qd_cache_dir):
    """Re-initialise qd before each test that has imported it.

    Rule-level and Datalog engine tests never import ``qd``; checking ``sys.modules`` keeps them
    independent of the compiler, so a broken backend does not hide a Datalog regression.
    """
    qd = sys.modules.get("qd")
    if qd is None or not hasattr(qd, "init"):
        yield
        return
    qd.init(arch=qd.cpu, offline_cache_file_path=str(qd_cache_dir))
    yield
