"""`qd-explain`: why kernel parameters were kept or pruned.

Run mode runs a script as `python SCRIPT.py ARGS` would (same `sys.argv[0]`, working directory
and `__main__`), recording every kernel specialisation it compiles, then explains them; it
works for any program, cache or not. Cache mode reads the facts every
`@qd.kernel(fastcache=True)` entry stores, without importing or recompiling the program.

    qd-explain SCRIPT.py [--kernel NAME] [--param PATH] [-- SCRIPT ARGS...]
    qd-explain [--cache-dir DIR] KERNEL [PATH]
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import runpy
import sys
import traceback
from pathlib import Path

from . import config as _config
from . import fastcache, fastcache_trust


def _entries(cache: Path, kernel: str):
    for p in sorted(cache.glob("*.qdk")):
        try:
            data = fastcache_trust.read_entry(p)  # never blocks on a FIFO or follows a link
            if data is None:
                continue
            header, _ = fastcache.split(data)
        except (OSError, ValueError, fastcache_trust.Untrusted) as e:
            print(f"qd-explain: skipping unreadable entry {p.name}: {e}", file=sys.stderr)
            continue
        name = header.get("kernel", "")
        if kernel in (name, name.rsplit(".", 1)[-1], header.get("inst_id")):
            yield p, header


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0].endswith(".py") and os.path.isfile(argv[0]):
        return run_script(argv)
    return explain_cache(argv)


def _closest(name: str, names: list[str]) -> str:
    near = difflib.get_close_matches(name, names, n=3, cutoff=0.5)
    return f"; did you mean {', '.join(near)}?" if near else f"; known: {', '.join(names) or '(none)'}"


def run_script(argv: list[str]) -> int:
    """Run mode: the script runs in this process with its compiles recorded, then each recorded
    specialisation (filtered by --kernel / --param) is explained. A script that raises still
    gets the explanations of what it compiled before, then its traceback, and exit code 1."""
    ap = argparse.ArgumentParser(prog="qd-explain", description="explain the kernels a script compiles")
    ap.add_argument("script")
    ap.add_argument("--kernel", help="only this kernel (qualified or plain name)")
    ap.add_argument("--param", help="only this leaf parameter, e.g. s.vel")
    fmt = ap.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="print the explanations as JSON (qd/explain_schema.json)")
    fmt.add_argument("--dot", action="store_true", help="print the derivation graph for Graphviz's dot")
    rest = []
    if "--" in argv:
        i = argv.index("--")
        argv, rest = argv[:i], argv[i + 1:]
    args = ap.parse_args(argv)
    from . import pipeline

    recorded = pipeline.record_compiles()
    script = os.path.abspath(args.script)
    failure = None
    saved_argv, saved_path0 = sys.argv, sys.path[0] if sys.path else None
    sys.argv = [args.script, *rest]
    sys.path.insert(0, os.path.dirname(script))
    try:
        runpy.run_path(args.script, run_name="__main__")  # sets sys.argv[0] to the path as given
    except SystemExit as e:
        if e.code not in (None, 0):
            failure = f"the script exited with {e.code!r}\n"
    except BaseException as e:  # noqa: BLE001 - the user's exception is reported, not propagated
        tb = e.__traceback__
        while tb is not None and os.path.abspath(tb.tb_frame.f_code.co_filename) != script:
            tb = tb.tb_next  # from the script's own frame on: qd-explain's and runpy's are noise
        failure = "".join(traceback.format_exception(type(e), e, tb or e.__traceback__))
    finally:
        sys.argv = saved_argv
        if sys.path and sys.path[0] == os.path.dirname(script) and saved_path0 != sys.path[0]:
            sys.path.pop(0)
    code = _explain_recorded(recorded, args.kernel, args.param, "json" if args.json else "dot" if args.dot else "text")
    if failure is not None:
        print(f"qd-explain: {args.script} raised after compiling {len(recorded)} kernel specialisation(s):",
              file=sys.stderr)
        print(failure, file=sys.stderr, end="")
        return 1
    return code


def _explain_recorded(recorded, kernel: str | None, param: str | None, fmt: str = "text") -> int:
    from analysis.analyze import explain_relations
    from analysis.datalog import EngineUnavailableError
    from analysis.explain import Explainer, to_dot

    as_json = fmt != "text"
    names = sorted({r.kernel.fn.__qualname__ for r in recorded})
    chosen = [r for r in recorded if kernel is None or kernel in (r.kernel.fn.__qualname__, r.kernel.fn.__name__)]
    if kernel is not None and not chosen:
        print(f"qd-explain: no kernel {kernel!r} was compiled{_closest(kernel, names)}", file=sys.stderr)
        return 1
    if not recorded:
        print("qd-explain: the script compiled no kernel", file=sys.stderr)
    missing_param = param is not None
    doc: list[dict] = []
    for r in chosen:
        facts, files = r.variant.explain_facts()
        try:
            ex = Explainer(explain_relations(facts), files)
        except EngineUnavailableError as e:
            print(f"qd-explain: {e}", file=sys.stderr)
            return 2
        k = r.variant.inst_id
        params = [q for _k, q, _s in sorted((x for x in facts["Param"] if x[0] == k), key=lambda x: x[2])]
        spec = ", ".join(f"{p}={v}" for p, v in r.variant.static)
        title = f"{r.kernel.fn.__qualname__}[{spec}]" if spec else r.kernel.fn.__qualname__
        if param is not None and param not in params:
            print(f"{param!r} is not a runtime parameter of {title}{_closest(param, params)}",
                  file=sys.stderr if as_json else sys.stdout)
            continue
        missing_param = False
        if as_json:
            doc.append(ex.kernel_record(r.kernel.fn.__qualname__, k, dict(r.variant.static), params, param))
            continue
        print(f"== {title}: kept {len(r.variant.kept)} of {len(params)} leaves")
        for q in [param] if param else params:
            print(ex.explain(k, q))
    if fmt == "json":
        print(json.dumps({"kernels": doc}, indent=2))
    elif fmt == "dot":
        print(to_dot(doc), end="")
    return 1 if missing_param and chosen else 0


def explain_cache(argv: list[str]) -> int:
    """Cache mode: explanations from the facts stored in disk-cache entries."""
    ap = argparse.ArgumentParser(prog="qd-explain", description=__doc__.split("\n\n")[0])
    ap.add_argument("kernel", help="kernel name (qualified or plain) or instantiation id")
    ap.add_argument("path", nargs="?", help="a leaf parameter such as md.mid.pos (default: all)")
    ap.add_argument("--cache-dir", help="the offline_cache_file_path the program used (default: ~/.cache/qd)")
    ap.add_argument("--json", action="store_true", help="print the explanations as JSON (qd/explain_schema.json)")
    args = ap.parse_args(argv)
    doc: list[dict] = []
    cfg = _config.Config(offline_cache_file_path=args.cache_dir)
    cache = fastcache.cache_dir(cfg)
    from analysis.analyze import explain_relations
    from analysis.datalog import EngineUnavailableError
    from analysis.explain import Explainer

    found = False
    for p, header in _entries(cache, args.kernel):
        found = True
        facts = {k: [tuple(r) for r in v] for k, v in header["facts"].items()}
        try:
            ex = Explainer(explain_relations(facts), header["files"])
        except EngineUnavailableError as e:
            print(f"qd-explain: {e}", file=sys.stderr)
            return 2
        k = header["inst_id"]
        params = [q for _k, q, _s in sorted((r for r in facts["Param"] if r[0] == k), key=lambda r: r[2])]
        if args.path is not None and args.path not in params:
            near = difflib.get_close_matches(args.path, params, n=3, cutoff=0.5)
            print(f"== {k} (cache entry {p.name})\n{args.path!r} is not a runtime parameter; its leaves are: "
                  f"{', '.join(params)}" + (f" (closest: {', '.join(near)})" if near else ""),
                  file=sys.stderr if args.json else sys.stdout)
            continue
        if args.json:
            doc.append(ex.kernel_record(header["kernel"], k, {}, params, args.path))
            continue
        print(f"== {k} (cache entry {p.name})")
        for q in [args.path] if args.path else params:
            print(ex.explain(k, q))
    if args.json and found:
        print(json.dumps({"kernels": doc}, indent=2))
    if not found:
        print(f"qd-explain: no cache entry for kernel {args.kernel!r} in {cache}; only kernels declared "
              "@qd.kernel(fastcache=True) are stored. `qd-explain SCRIPT.py` runs a program and explains "
              "every kernel it compiles", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
