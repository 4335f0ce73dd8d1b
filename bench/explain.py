"""Benchmark of `qd.explain` after a run: one leaf of a 64-leaf kernel behind a 6-deep call chain.

The program is generated as a real qd source file: a state dataclass of 8 groups x 8 arrays
(64 runtime leaves), a kernel that hands the whole state down a chain of 6 funcs, the last of
which writes half of the leaves and touches a quarter more only under a `qd.static` arm that is
dead in this instantiation. What a user waits for when asking "why?" is timed (best and median
of N): `qd.explain(kernel, path)` for a kept leaf (a 7-hop chain) and for a pruned one (nested
why-not chains), and the explanation of all 64 leaves. The baseline, measured in the same run,
is the first launch of the kernel (frontend, analysis, LLVM, JIT), so the figures read as
"explaining costs x% of compiling"; the target is < 50 ms for one leaf.

    .venv/bin/python bench/explain.py [--repeat 20]

Prints a table and writes bench/results/explain.json.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from _common import load_line, machine_info, print_table, summarize, time_reps, write_json

import qd

GROUPS, MEMBERS, DEPTH = 8, 8, 6
TARGET_S = 0.050


def program() -> str:
    """The benchmark program's source: 64 leaves, a 6-deep chain, a dead static arm."""
    groups = "\n".join(
        f"@dataclasses.dataclass\nclass G{g}:\n" + "".join(f"    a{m}: V\n" for m in range(MEMBERS))
        for g in range(GROUPS))
    state = "@dataclasses.dataclass\nclass State:\n" + "".join(f"    g{g}: G{g}\n" for g in range(GROUPS))
    writes = "".join(f"    s.g{g}.a{m}[0] = {g * MEMBERS + m}\n" for g in range(GROUPS) for m in range(MEMBERS // 2))
    dead = "".join(f"        s.g{g}.a{m}[0] = -1\n"
                   for g in range(GROUPS) for m in range(MEMBERS // 2, 3 * MEMBERS // 4))
    chain = "".join(f"@qd.func\ndef f{d}(s: State, deep: qd.template()):\n    f{d + 1}(s, deep)\n\n\n"
                    for d in range(1, DEPTH))
    return textwrap.dedent("""\
        import dataclasses
        import qd

        V = qd.types.NDArray[qd.i32, 1]

        """) + groups + "\n\n" + state + "\n\n" + f"@qd.func\ndef f{DEPTH}(s: State, deep: qd.template()):\n" + \
        writes + "    if qd.static(deep):\n" + dead + "\n\n" + chain + \
        "@qd.kernel\ndef step(s: State):\n    f1(s, False)\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args()
    print(load_line())
    qd.init(arch=qd.cpu, offline_cache=False)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "explain_program.py"
        path.write_text(program())
        spec = importlib.util.spec_from_file_location("explain_program", path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = mod
        spec.loader.exec_module(mod)
        import numpy as np

        state = mod.State(*[getattr(mod, f"G{g}")(*[np.zeros(1, np.int32) for _ in range(MEMBERS)])
                            for g in range(GROUPS)])
        t0 = time.perf_counter()
        mod.step(state)
        compile_s = time.perf_counter() - t0
        info = qd.launch_info(mod.step)
        assert len(info.kept) == GROUPS * MEMBERS // 2 and len(info.kept) + len(info.pruned) == GROUPS * MEMBERS
        kept_leaf, pruned_leaf = "s.g7.a3", "s.g7.a5"
        ex = qd.explain(mod.step, kept_leaf)
        assert ex.text().count("passes") == DEPTH, ex.text()  # the whole chain, one hop per call
        assert "not taken" in qd.explain(mod.step, pruned_leaf)
        rows = []
        for what, fn in [(f"one kept leaf ({kept_leaf}, {DEPTH + 1} steps)", lambda: qd.explain(mod.step, kept_leaf)),
                         (f"one pruned leaf ({pruned_leaf})", lambda: qd.explain(mod.step, pruned_leaf)),
                         ("all 64 leaves", lambda: qd.explain(mod.step))]:
            s = summarize(time_reps(fn, args.repeat))
            rows.append({"what": what, "best_ms": s["best_s"] * 1e3, "median_ms": s["median_s"] * 1e3,
                         "of_compile": s["median_s"] / compile_s,
                         "target": ("< 50 ms: " + ("yes" if s["median_s"] < TARGET_S else "NO"))
                         if "one" in what else "-"})
    rows.append({"what": "baseline: first launch (compile)", "best_ms": compile_s * 1e3, "median_ms": compile_s * 1e3,
                 "of_compile": 1.0, "target": "-"})
    print_table(rows, [("what", "explain", "s"), ("best_ms", "best ms", ".2f"), ("median_ms", "median ms", ".2f"),
                       ("of_compile", "x compile", ".3f"), ("target", "target", "s")])
    out = write_json("explain.json", {"machine": machine_info(), "leaves": GROUPS * MEMBERS, "depth": DEPTH,
                                      "repeat": args.repeat, "rows": rows})
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
