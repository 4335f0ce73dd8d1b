"""Shared pytest setup.

Tests are arranged by the stage they exercise: `frontend/` (parsing, signatures, located
errors for bad code and bad input), `qd_analysis/` and `rules/` (the Datalog engine, the pruning
rules and what is derived from them), `codegen/` (the LLVM lowering and generated code
itself), `lang/` (the user's API used from plain Python: fields, ndarrays and tensors,
vectors, matrices and structs, `qd.math`, `qd.init` and its configuration), `runtime/`
(launching: arguments, the thread pool, memory, signals, threads), `cache/`, `cli/`, and
`semantics/`, the language suite: kernels whose results are compared with numpy or Python, run
once per target (see `semantics/conftest.py`). Helpers used by more than one directory live in
`_support/`.

Every test that uses ``qd`` starts from a freshly initialised CPU runtime so that compiled
kernels, debug mode and cache settings cannot leak from one test into the next (the semantics
suite initialises for its own target instead). Compiled objects go to a temporary directory
created for this pytest run, never to the user's home cache, so a stale entry from an earlier
checkout cannot make a test pass or fail. The fastcache's per-user secret lives in a temporary
directory too (`QD_CONFIG_DIR`, inherited by the programs tests run in subprocesses), never in
the real home, and so does the user cache root (`XDG_CACHE_HOME`: the compiled rules).

Two tiers: `pytest -m "not slow"` (`just test-fast`) is the quick run, about two minutes on
two cores; the plain `pytest` runs everything. Tests marked `slow` are the ones that start Python
processes (each pays for an interpreter and a cold `qd`), the PTX sweep (the semantics suite
once more) and whatever else runs for many seconds. Every Hypothesis property runs twice:
`[examples-full]`, marked `slow`, with the `max_examples` its own `@settings` give, and
`[examples-few]` with at most `FEW_EXAMPLES` of them, so the quick run still exercises each
property and the full run keeps the whole budget.
"""

import os
import sys
import tempfile

import hypothesis
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


# Examples per Hypothesis property in the quick tier (`[examples-few]`); the full tier keeps each
# test's own budget.
FEW_EXAMPLES = 8


def _is_hypothesis_test(fn) -> bool:
    return getattr(fn, "is_hypothesis_test", False)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Each Hypothesis test twice: with its own budget (marked `slow`) and with a few examples."""
    if _is_hypothesis_test(metafunc.function):
        metafunc.parametrize("_hypothesis_budget", [pytest.param("few", id="examples-few"),
                                                    pytest.param("full", id="examples-full", marks=pytest.mark.slow)],
                             indirect=True)


@pytest.fixture(autouse=True)
def _hypothesis_budget(request):
    """`few`: the test's Hypothesis settings with `max_examples` cut to `FEW_EXAMPLES` while it
    runs; anything else leaves them. `@given` reads the settings from the test function at each
    call, from the attribute that `@settings` and `@seed` write too (Hypothesis has no public way
    to change them once the test is decorated)."""
    if getattr(request, "param", None) != "few":
        yield
        return
    fn = request.function
    own = fn._hypothesis_internal_use_settings
    fn._hypothesis_internal_use_settings = hypothesis.settings(own, max_examples=min(own.max_examples, FEW_EXAMPLES))
    try:
        yield
    finally:
        fn._hypothesis_internal_use_settings = own


# A test outside the `slow` tier that starts a Python process gets a warning naming it, so the
# quick tier stays quick as tests are added. Seen through the audit events of `subprocess` and
# `os.posix_spawn` (the compile workers); a program counts as Python when it is this
# interpreter, is named python*, or is a script whose first line names python.
_python_starts: list[str] = []


def _is_python(program) -> bool:
    if not program:
        return False
    program = os.fsdecode(program)
    if os.path.abspath(program) == os.path.abspath(sys.executable):
        return True
    if os.path.basename(program).startswith("python"):
        return True
    try:
        with open(program, "rb") as f:
            first = f.readline(200)
    except OSError:
        return False
    return first.startswith(b"#!") and b"python" in first


def _audit(event: str, args: tuple) -> None:
    if event == "subprocess.Popen":
        argv = args[1]
        argv = [argv] if isinstance(argv, (str, bytes, os.PathLike)) else list(argv or ())
        program = args[0] or (argv[0] if argv else None)
    elif event == "os.posix_spawn":
        program = args[0]
    else:
        return
    if _is_python(program):
        _python_starts.append(os.fsdecode(program))


sys.addaudithook(_audit)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    del _python_starts[:]
    yield
    if _python_starts and item.get_closest_marker("slow") is None:
        item.warn(pytest.PytestWarning(f"started a Python process ({_python_starts[0]}) but is not marked slow: "
                                       "add @pytest.mark.slow so that `pytest -m 'not slow'` stays quick"))
