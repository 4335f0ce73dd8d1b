"""Programs written for quadrants, run unmodified: once on quadrants 1.3.3 itself, once on qd through
`python -m qd.standin`, with the same printed results.

Each program is a script that does `import quadrants as qd` (and reaches into `quadrants.lang.impl`,
`quadrants.lang.exception`, `quadrants._logging`, `quadrants.types.primitive_types`, ...), as
Genesis and other libraries do. Both runs are fresh interpreters of the test's Python: quadrants is
installed there too, so the qd run also shows that the stand-in wins over an installed quadrants.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests._support import quadrants_oracle

pytestmark = pytest.mark.slow  # subprocesses (quadrants' start-up is ~1 s each)

ROOT = Path(__file__).resolve().parents[2]


def _run(tmp_path: Path, source: str, *, on_qd: bool, args: tuple[str, ...] = ()) -> str:
    return quadrants_oracle.run(tmp_path, source, on_qd=on_qd, standin=True, args=args)


def _same(tmp_path: Path, source: str, args: tuple[str, ...] = ()) -> str:
    return quadrants_oracle.same(tmp_path, source, standin=True, args=args)


def test_a_quadrants_program_runs_on_qd_with_the_same_results(tmp_path):
    out = _same(tmp_path, """
        import sys
        import types
        import numpy as np
        import quadrants as qd
        import quadrants.math as tm
        from quadrants.lang import impl

        qd.init(arch=qd.cpu)

        @qd.kernel
        def fill(x: qd.types.NDArray[qd.f32, 1], scale: qd.f32):
            for i in x:
                x[i] = tm.clamp(i * scale, 0.0, 5.0)

        a = np.zeros(8, np.float32)
        fill(a, 1.5)
        print(sys.argv[1:], a.tolist())
        print(impl.current_cfg().arch == qd.cpu, impl.get_runtime().prog is not None)
        print(isinstance(qd, types.ModuleType), qd.lang.impl is impl)
    """, args=("x", "--y"))
    assert out.splitlines()[0] == "['x', '--y'] [0.0, 1.5, 3.0, 4.5, 5.0, 5.0, 5.0, 5.0]"


def test_the_stand_in_is_qd_s_namespace_and_wins_over_an_installed_quadrants(tmp_path):
    out = _run(tmp_path, """
        import importlib.util
        import quadrants, qd
        import quadrants.lang.impl
        from quadrants.types import primitive_types
        print(quadrants.kernel is qd.kernel, quadrants.lang.impl is qd.lang.impl,
              primitive_types is qd.types.primitive_types)
        print(quadrants.__spec__.name, quadrants.lang.impl.__spec__.name)
        quadrants.patched = 1  # written through to qd
        print(qd.patched, quadrants.__version__, qd.__version__ == qd.core.version.__version__)
        print(importlib.util.find_spec("quadrants.no_such_module"), importlib.util.find_spec("quadrants.lang.nope"))
        try:
            import quadrants.no_such_module
        except ModuleNotFoundError as e:
            print("ModuleNotFoundError", e.name)
    """, on_qd=True)
    assert out.splitlines() == ["True True True", "qd qd.lang.impl", "1 (1, 3, 3) True", "None None",
                                "ModuleNotFoundError quadrants.no_such_module"]


def test_version_checks_see_the_quadrants_release_qd_implements(tmp_path):
    out = _same(tmp_path, """
        import quadrants as qd
        print(qd.__version__, type(qd.__version__).__name__, qd.__version_str__, qd.__version__ >= (1, 3))
    """)
    assert out == "(1, 3, 3) tuple 1.3.3 True"


def test_a_script_sees_file_argv_and_path_as_python_gives_them(tmp_path):
    """`__file__` absolute, `sys.argv[0]` as typed, `sys.path[0]` the script's directory (symbolic
    links resolved) in place of the working directory: as `python sub/prog.py` has them."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "prog.py").write_text(textwrap.dedent("""
        import sys
        import __main__
        print(__file__, __main__.__file__ == __file__, __name__, sys.argv)
        print(sys.path)
    """))
    (tmp_path / "link.py").symlink_to(tmp_path / "sub" / "prog.py")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for script in ("sub/prog.py", "link.py"):
        direct, standin = (subprocess.run([sys.executable, *pre, script, "a"], capture_output=True, text=True,
                                          env=env, cwd=tmp_path, timeout=120)
                           for pre in ((), ("-m", "qd.standin")))
        assert direct.returncode == 0 and standin.returncode == 0, standin.stderr
        assert standin.stdout == direct.stdout
        assert standin.stdout.startswith(f"{tmp_path / script} True __main__ ['{script}', 'a']\n")
        assert standin.stdout.splitlines()[1].startswith(f"[{str(tmp_path / 'sub')!r}, {str(ROOT)!r}")


_CHILDREN = """
    import multiprocessing as mp
    import os
    import sys
    import numpy as np
    import quadrants as qd

    @qd.kernel
    def fill(x: qd.types.NDArray[qd.f32, 1]):
        for i in x:
            x[i] = i * 2.0

    def child(method):
        import quadrants
        qd.init(arch=qd.cpu)
        a = np.zeros(4, np.float32)
        fill(a)
        return method, quadrants.__name__, os.path.dirname(os.path.dirname(qd.__file__)), a.tolist()

    if __name__ == "__main__":
        if sys.argv[1] == "preload":
            mp.set_forkserver_preload(["quadrants"])  # the server imports it before any child starts
        else:
            os.chdir(sys.argv[1])  # the children start elsewhere than the parent did
        for method in ("spawn", "forkserver"):
            with mp.get_context(method).Pool(1) as pool:
                print(*pool.map(child, [method])[0])
"""


@pytest.mark.parametrize("case", ["elsewhere", "preload"])
def test_spawned_and_forkserver_children_get_qd_too(tmp_path, case):
    """Children started by spawn or forkserver import the main script again: under the stand-in
    they too get qd for quadrants, the very qd the parent runs (not an installed copy), even
    where they start in another directory and qd is not on their path (`elsewhere`), and where
    the program has the forkserver preload quadrants (`preload`)."""
    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent(_CHILDREN))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if case == "preload":  # the server finds qd on its own path, as it finds the modules it preloads
        env["PYTHONPATH"] = str(ROOT)
    env["QD_OFFLINE_CACHE_FILE_PATH"] = str(tmp_path / "cache")
    p = subprocess.run([sys.executable, "-m", "qd.standin", str(script), case if case == "preload" else str(tmp_path)],
                       capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert p.returncode == 0, p.stderr[-3000:]
    assert [line for line in p.stdout.splitlines() if line.startswith(("spawn", "forkserver"))] == [
        f"{method} qd {ROOT} [0.0, 2.0, 4.0, 6.0]" for method in ("spawn", "forkserver")]


def test_qd_explain_stands_in_for_quadrants(tmp_path):
    """The `qd-explain` command (the entry point the package declares) runs a program written for
    quadrants on qd and explains its kernels; the CLI module run directly says how to get that."""
    (tmp_path / "prog.py").write_text(textwrap.dedent("""
        import numpy as np
        import quadrants as qd

        @qd.kernel
        def fill(x: qd.types.NDArray[qd.f32, 1], unused: qd.types.NDArray[qd.f32, 1]):
            for i in x:
                x[i] = 1.0

        qd.init(arch=qd.cpu)
        fill(np.zeros(4, np.float32), np.zeros(4, np.float32))
    """))
    entry = re.search(r'^qd-explain = "([\w.]+):(\w+)"$', (ROOT / "pyproject.toml").read_text(), re.M)
    command = f"import sys; from {entry.group(1)} import {entry.group(2)} as main; sys.exit(main())"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "QD_OFFLINE_CACHE_FILE_PATH": str(tmp_path / "cache")}
    p = subprocess.run([sys.executable, "-c", command, "prog.py"], capture_output=True, text=True, env=env,
                       cwd=tmp_path, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    assert "x is kept" in p.stdout and "unused is pruned" in p.stdout, p.stdout + p.stderr
    p = subprocess.run([sys.executable, "-m", "qd.explain.cli", "prog.py"], capture_output=True, text=True,
                       env=env, cwd=tmp_path, timeout=300)
    assert "compiled no kernel; it imported quadrants itself" in p.stderr and "qd-explain command" in p.stderr


def test_install_from_python_and_its_refusal_after_quadrants_was_imported(tmp_path):
    out = _run(tmp_path, """
        import qd.standin
        qd.standin.install()
        import quadrants
        print(quadrants.__name__, qd.standin.installed())
        qd.standin.uninstall()
        print(qd.standin.installed())
    """, on_qd=False)
    assert out.splitlines() == ["qd True", "False"]
    out = _run(tmp_path, """
        import quadrants, qd, qd.standin
        try:
            qd.standin.install()
        except qd.QdConfigError as e:
            print("refused:", "already imported" in str(e))
    """, on_qd=False)
    assert out.splitlines() == ["refused: True"]


def test_run_a_module_with_dash_m(tmp_path):
    pkg = tmp_path / "qpkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("import quadrants as qd\nNAME = qd.__name__\n")
    (pkg / "__main__.py").write_text("import sys\nfrom qpkg import NAME\nprint(NAME, sys.argv[1:])\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    p = subprocess.run([sys.executable, "-m", "qd.standin", "-m", "qpkg", "7"], capture_output=True, text=True,
                       env=env, cwd=tmp_path, timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["qd", "['7']"]


def test_quadrants_error_names_catch_qd_errors(tmp_path):
    _same(tmp_path, """
        import numpy as np
        import quadrants as qd
        from quadrants.lang.exception import QuadrantsCompilationError, QuadrantsTypeError

        qd.init(arch=qd.cpu)

        @qd.kernel
        def bad(x: qd.types.NDArray[qd.i32, 1]):
            for i in x:
                x[i] = undefined_name + 1

        @qd.kernel
        def bad_args(x: qd.types.NDArray[qd.i32, 1], y: qd.i32):
            for i in x:
                x[i] = y

        for name, call in (("name", lambda: bad(np.zeros(2, np.int32))),
                           ("args", lambda: bad_args(np.zeros(2, np.int32), np.zeros(3)))):
            try:
                call()
            except qd.QuadrantsNameError:
                print(name, "QuadrantsNameError")
            except (qd.QuadrantsRuntimeTypeError, QuadrantsTypeError, TypeError, ValueError):
                print(name, "argument error")
            except QuadrantsCompilationError:
                print(name, "QuadrantsCompilationError")
        print(issubclass(qd.QuadrantsSyntaxError, QuadrantsCompilationError),
              issubclass(qd.QuadrantsAssertionError, qd.QuadrantsRuntimeError))
    """)


def test_printed_error_names_are_quadrants(tmp_path):
    """A program that prints the class of what it caught prints quadrants' name."""
    out = _same(tmp_path, """
        import quadrants as qd

        qd.init(arch=qd.cpu, debug=True)
        x = qd.field(qd.i32, shape=3)

        @qd.kernel
        def fails_assert():
            for i in range(1):
                assert x[i] == 1, "x is not one"

        @qd.kernel
        def bad_syntax():
            for i in range(1):
                x[i] = [j for j in range(2)][0]

        @qd.kernel
        def bad_name():
            for i in range(1):
                x[i] = nowhere

        for call in (fails_assert, bad_syntax, bad_name):
            try:
                call()
            except Exception as e:
                print(call.__name__, type(e).__name__)
        try:
            x[3] = 1
        except AssertionError as e:
            print("out of bounds: an AssertionError")
    """)
    assert "fails_assert QuadrantsAssertionError" in out and "out of bounds: an AssertionError" in out


def test_logging_levels_and_redirection(tmp_path):
    out = _same(tmp_path, """
        import quadrants as qd
        seen = []
        print(qd._logging.DEBUG, qd._logging.TRACE, qd._logging.INFO, qd.WARN, qd.ERROR, qd._logging.CRITICAL)
        print([qd._logging.is_logging_effective(l) for l in ("trace", "debug", "info", "warn", "error", "critical")])
        qd.set_logging_level(qd.ERROR)
        print([qd._logging.is_logging_effective(l) for l in ("trace", "debug", "info", "warn", "error", "critical")])
        qd.init(arch=qd.cpu, log_level=qd.WARN)
        print(qd._logging.is_logging_effective("info"), qd._logging.is_logging_effective("warn"))
        setattr(qd._logging, "warn", lambda msg, *a, **k: seen.append(msg))
        qd._logging.warn("redirected")
        qd._logging.warn = qd._logging._get_logging(qd._logging.WARN)
        print(seen, callable(qd._logging.warn))
    """)
    assert out.splitlines()[-1] == "['redirected'] True"


def test_runtime_probe_config_and_primitive_types(tmp_path):
    _same(tmp_path, """
        import quadrants as qd
        from quadrants.lang import impl
        from quadrants.types.primitive_types import integer_types, real_types

        qd.init(arch=qd.cpu, default_fp=qd.f64, debug=True)
        rt = impl.get_runtime()
        print(rt.default_fp == qd.f64, rt.default_ip == qd.i32, rt.prog is not None)
        cfg = impl.current_cfg()
        print(cfg.arch == qd.cpu, cfg.debug, cfg.fast_math, qd.cfg.fast_math)
        import platform
        host = qd.x64 if platform.machine() in ("x86_64", "AMD64") else qd.arm64
        print(cfg.arch == host, qd.cpu == host, qd.cpu != qd.cuda)  # how libraries find out they are on the CPU
        print(impl.get_max_shared_memory_bytes(is_lowerbound_ok=True))
        print(qd.f32 in real_types, float in real_types, qd.i32 in real_types, qd.u8 in integer_types,
              bool in integer_types, qd.f64 in integer_types)
        rt.materialize()
        qd.init(arch=qd.cpu)
        print(impl.current_cfg().debug, impl.get_runtime().default_fp == qd.f32)

        @qd.kernel
        def scale() -> qd.f32:
            return qd.static(impl.get_runtime().default_fp == qd.f32) * 2.5
        print(scale())
    """)


def test_debug_flag_set_through_the_template_mapper_builtins(tmp_path):
    source = """
        import sys
        import quadrants as qd
        qd.init(arch=qd.cpu)
        qd.lang._template_mapper.__builtins__["__debug__"] = sys.argv[1] == "on"

        @qd.kernel
        def checks() -> qd.i32:
            r = 0
            if __debug__:
                r = 1
            return r
        print(checks())
    """
    # the same cache directory each time: the kernel's disk-cache entry must not outlive the flag
    assert [_same(tmp_path, source, args=(flag,)) for flag in ("on", "off", "on")] == ["1", "0", "1"]


def test_gpu_arch_without_a_gpu_falls_back_to_the_cpu(tmp_path):
    out = _same(tmp_path, """
        import warnings
        import quadrants as qd
        qd.init(arch=qd.cuda)
        print(qd.cfg.arch == qd.cpu or qd.cfg.arch == qd.x64)
        try:
            qd.init(arch=qd.cuda, enable_fallback=False)
            print("no error")
        except (RuntimeError, ValueError):
            print("refused")
    """) if not Path("/dev/nvidia0").exists() else pytest.skip("a GPU is present: nothing falls back")
    assert out.splitlines() == ["True", "refused"]


def test_perf_dispatch_measures_each_compatible_implementation_then_keeps_the_fastest(tmp_path):
    out = _same(tmp_path, """
        import time
        import numpy as np
        import quadrants as qd

        qd.init(arch=qd.cpu)
        calls = []

        @qd.perf_dispatch(get_geometry_hash=lambda a, slow: hash(a.shape), warmup=1, active=2,
                          repeat_after_count=20)
        def add_one(a: qd.types.NDArray[qd.i32, 1], slow: qd.i32): ...

        @add_one.register
        @qd.kernel
        def add_one_kernel(a: qd.types.NDArray[qd.i32, 1], slow: qd.i32):
            for i in a:
                a[i] += 1

        @add_one.register(is_compatible=lambda a, slow: slow == 1)
        def add_one_slowly(a: qd.types.NDArray[qd.i32, 1], slow: qd.i32):
            calls.append("slow")
            time.sleep(0.05)
            a += 1

        @add_one.register(is_compatible=lambda a, slow: a.shape[0] < 100)
        def add_one_numpy(a: qd.types.NDArray[qd.i32, 1], slow: qd.i32):
            calls.append("numpy")
            a += 1

        a = np.zeros(8, np.int32)
        for _ in range(12):
            add_one(a, 1)
        print(a.tolist() == [12] * 8, calls.count("slow"))   # 1 untimed + 2 timed, then never again
        big = np.zeros(200, np.int32)
        for _ in range(5):
            add_one(big, 0)              # only the kernel is compatible: chosen at once
        print(int(big.sum()), len(calls))

        try:
            add_one.register(lambda a, b: None)
        except qd.QuadrantsSyntaxError:
            print("signature refused")

        @qd.perf_dispatch(get_geometry_hash=lambda a: 0)
        def nothing(a): ...

        @nothing.register(is_compatible=lambda a: False)
        def never(a): ...

        try:
            nothing(1)
        except qd.QuadrantsRuntimeError as e:
            print("no implementation:", "No suitable functions" in str(e))
    """)
    assert out.splitlines()[0] == "True 3"


def test_materialize_runs_where_quadrants_runs_it(tmp_path):
    """Genesis defers field fills to the runtime's next `materialize()` by patching
    `PyQuadrants.materialize`: before a kernel variant is made, before Python first touches a
    field, at `qd.sync()`. A fill that never ran would leave zeros behind, silently."""
    out = _same(tmp_path, """
        import quadrants as qd
        from quadrants.lang import impl

        qd.init(arch=qd.cpu)
        pending, log = [], []
        original = impl.PyQuadrants.materialize

        def materialize(self):
            original(self)
            log.append(len(pending))
            todo = pending.copy()
            pending.clear()
            for field, value in todo:
                field.fill(value)

        impl.PyQuadrants.materialize = materialize
        f = qd.field(qd.f32, shape=())
        pending.append((f, 3.5))

        @qd.kernel
        def read() -> qd.f32:
            return f[None]

        print(read())
        g = qd.field(qd.f32, shape=(2,))
        pending.append((g, 1.5))
        print(g.to_numpy().tolist())
        h = qd.field(qd.i32, shape=(3,))
        pending.append((h, 7))
        qd.sync()
        print(h[2], any(log))
    """)
    assert out.splitlines() == ["3.5", "[1.5, 1.5]", "7 True"]
