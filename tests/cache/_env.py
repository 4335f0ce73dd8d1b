"""Environment for the programs cache tests run as later processes.

They must import the qd of this tree, not a copy installed into the interpreter's
site-packages, so the repository root goes first on PYTHONPATH (the program's own directory
still comes before it, for its helper modules)."""


import json
import os
import pathlib
import subprocess
import sys
import textwrap

REPO = pathlib.Path(__file__).resolve().parents[2]


def child_env(**extra) -> dict:
    e = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    e.update(extra, PYTHONPATH=str(REPO), PYTHONDONTWRITEBYTECODE="1")
    return e


RUNNER = textwrap.dedent("""
    import json, sys, warnings
    import numpy as np
    import qd

    qd.init(arch=qd.cpu, offline_cache_file_path=sys.argv[1])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        import prog
        results = prog.main()
    print(json.dumps({"results": results,
                      "warnings": [[str(w.message), w.filename, w.lineno] for w in caught]}))
""")


class Project:
    """A directory with a program (`prog.py`, whose `main()` returns JSON-able results), run
    as a fresh process against its own cache; edits get distinct modification times."""

    def __init__(self, root):
        self.root = root
        self.clock = int(os.stat(root).st_mtime)
        (root / "runner.py").write_text(RUNNER)

    def write(self, name, text):
        path = self.root / name
        path.write_text(textwrap.dedent(text))
        self.clock += 10  # a rewrite within the same second still looks edited
        os.utime(path, (self.clock, self.clock))

    def run(self, timeout=120, preexec_fn=None, **env):
        e = child_env(**env)
        r = subprocess.run([sys.executable, "runner.py", str(self.root / "cache")], cwd=self.root, env=e,
                           capture_output=True, text=True, timeout=timeout,
                           preexec_fn=preexec_fn)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout.strip().splitlines()[-1])

    def entries(self):
        d = self.root / "cache" / "fastcache"
        return sorted(d.glob("*.qdk")) if d.exists() else []


# A kernel with two variants (template c = 1.0, 2.0); main() returns each result and its source.
TWO_VARIANTS = """
    import numpy as np
    import qd

    @qd.kernel(fastcache=True)
    def k(x: qd.types.NDArray[qd.f32, 1], c: qd.template()):
        for i in range(x.shape[0]):
            x[i] = c

    def main():
        out = []
        for c in (1.0, 2.0):
            x = np.zeros(2, np.float32)
            k(x, c)
            out.append([x.tolist(), qd.launch_info(k).source])
        return out
"""
