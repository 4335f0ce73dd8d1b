"""qd-explain answers from the disk cache, without importing the program again."""

import os
import subprocess
import sys
import textwrap

PROGRAM = textwrap.dedent("""
    import dataclasses, sys
    import numpy as np
    import qd

    qd.init(arch=qd.cpu, offline_cache_file_path=sys.argv[1])

    @dataclasses.dataclass
    class MD:
        base: qd.types.NDArray[qd.i32, 1]
        deep: qd.types.NDArray[qd.i32, 1]

    @qd.func
    def inner(md: MD, use_deep: qd.template()):
        md.base[0] = 1
        if qd.static(use_deep):
            md.deep[0] = 99

    @qd.kernel(fastcache=True)
    def only_dead(md: MD):
        inner(md, False)

    only_dead(MD(np.zeros(1, np.int32), np.zeros(1, np.int32)))
""")


def run(*args, cwd):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def test_explain_from_cache(tmp_path):
    (tmp_path / "prog.py").write_text(PROGRAM)
    cache = tmp_path / "cache"
    r = run("prog.py", str(cache), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    (tmp_path / "prog.py").unlink()  # the answer must come from the cache alone
    r = run("-m", "qd.explain_cli", "--cache-dir", str(cache), "only_dead", "md.deep", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "md.deep is pruned" in r.stdout
    assert "qd.static arm that is not taken" in r.stdout and "prog.py:17:" in r.stdout
    r = run("-m", "qd.explain_cli", "--cache-dir", str(cache), "only_dead", cwd=tmp_path)
    assert "md.base is kept because" in r.stdout and "inner writes md.base at" in r.stdout
    r = run("-m", "qd.explain_cli", "--cache-dir", str(cache), "missing", cwd=tmp_path)
    assert r.returncode == 1 and "no cache entry" in r.stderr
