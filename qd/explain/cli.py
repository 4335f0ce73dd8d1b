"""`qd-explain`: why kernel parameters were kept or pruned.

Run mode runs a script as `python SCRIPT.py ARGS` would (same `sys.argv[0]`, working directory
and `__main__`), recording every kernel specialisation it compiles, then explains them; it
works for any program, cache or not. With `--json` or `--dot` the script's own output goes to
stderr, so that stdout is the document alone and parses. Cache mode reads the facts every
`@qd.kernel(fastcache=True)` entry stores, without importing or recompiling the program.

    qd-explain SCRIPT.py [--kernel NAME] [--param PATH] [--json | --dot] [-- SCRIPT ARGS...]
    qd-explain [--cache-dir DIR] KERNEL [PATH] [--json | --dot]
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import json
import os
import re
import runpy
import shutil
import sys
import textwrap
import traceback
from pathlib import Path

from qd_analysis.explain import Explainer, param_text, summary, title, to_dot

from ..compile import disk_cache, pipeline, pruning
from ..core.errors import QdConfigError
from ..lang import config as _config


def _entries(cache: Path, kernel: str):
    for p, header in disk_cache.stored_explanations(cache, kernel):
        if isinstance(header, Exception):
            print(f"qd-explain: skipping unreadable entry {p.name}: {header}", file=sys.stderr)
            continue
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
    _formats(ap)
    rest = []
    if "--" in argv:
        i = argv.index("--")
        argv, rest = argv[:i], argv[i + 1:]
    args = ap.parse_args(argv)
    recorded = pipeline.record_compiles()
    script = os.path.abspath(args.script)
    failure = None
    saved_argv, saved_path0 = sys.argv, sys.path[0] if sys.path else None
    sys.argv = [args.script, *rest]
    sys.path.insert(0, os.path.dirname(script))
    try:
        with _output_aside(_format(args) != "text"):
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
    code = _explain_recorded(recorded, args.kernel, args.param, _format(args))
    if failure is not None:
        print(f"qd-explain: {args.script} raised after compiling {len(recorded)} kernel specialisation(s):",
              file=sys.stderr)
        print(failure, file=sys.stderr, end="")
        return 1
    return code


@contextlib.contextmanager
def _output_aside(aside: bool):
    """While the script runs: when `aside`, what it prints goes to stderr, so that stdout holds
    only the JSON or dot document that follows. Both Python's `sys.stdout` and file descriptor 1
    are redirected, so a kernel's `print` (the C library's, on descriptor 1) goes too."""
    if not aside:
        yield
        return
    saved_stream = sys.stdout
    _flush(saved_stream)
    try:
        saved_fd = os.dup(1)
        os.dup2(2, 1)
    except OSError:  # no descriptor 1 to move: Python's prints still go aside
        saved_fd = None
    sys.stdout = sys.stderr
    try:
        yield
    finally:
        _flush(sys.stdout)
        _flush(saved_stream)  # the script's writes through a reference it kept, still to stderr
        sys.stdout = saved_stream
        if saved_fd is not None:
            os.dup2(saved_fd, 1)
            os.close(saved_fd)


def _flush(stream) -> None:
    try:
        stream.flush()
    except (OSError, ValueError, AttributeError):  # closed or replaced by the script
        pass


def _explain_recorded(recorded, kernel: str | None, param: str | None, fmt: str = "text") -> int:
    names = sorted({r.kernel.fn.__qualname__ for r in recorded})
    chosen = [r for r in recorded if kernel is None or kernel in (r.kernel.fn.__qualname__, r.kernel.fn.__name__)]
    if kernel is not None and not chosen:
        print(f"qd-explain: no kernel {kernel!r} was compiled{_closest(kernel, names)}", file=sys.stderr)
        return 1
    if not recorded:
        print(f"qd-explain: the script compiled no kernel{_quadrants_hint()}", file=sys.stderr)
    found = [(r.kernel.fn.__qualname__, r.variant.inst_id, r.variant.explain_facts()) for r in chosen]
    return _explain(found, param, fmt)


def _quadrants_hint() -> str:
    """Why a script may have compiled nothing here: it ran its kernels on the real quadrants (this
    module run directly, without the stand-in the `qd-explain` command installs)."""
    q = sys.modules.get("quadrants")
    if q is None or getattr(q, "__name__", None) != "quadrants":  # absent, or qd standing in ("qd")
        return ""
    return ("; it imported quadrants itself, not qd: the qd-explain command (`python -m qd.standin.explain "
            "SCRIPT.py`) runs it with qd standing in for quadrants")


def _explain(found, param: str | None, fmt: str, where=None) -> int:
    """Explain kernel specialisations given as (kernel name, instantiation id, facts) in
    the chosen format; `where(n)` says where the n-th came from (a cache entry), for the text.
    Returns the exit code: 1 when --param names a leaf none of them has, 2 when the rules
    engine cannot run."""
    doc: list[dict] = []
    text: list[str] = []
    missing_param = param is not None
    for n, (name, inst, facts) in enumerate(found):
        try:
            ex = Explainer(pruning.explain_relations(facts), facts)
        except QdConfigError as e:  # QD_DATALOG_ENGINE names an engine that cannot run
            print(f"qd-explain: {e.message}", file=sys.stderr)
            return 2
        params = ex.params.get(inst, [])
        if param is not None and param not in params:
            head = title({"kernel": name, "specialization": dict(ex.templates.get(inst, ()))})
            print(f"{param!r} is not a runtime parameter of {head}{_closest(param, params)}",
                  file=sys.stderr if fmt != "text" else sys.stdout)
            continue
        missing_param = False
        rec = ex.kernel_record(name, inst, param)
        doc.append(rec)
        whole = ex.kernel_record(name, inst) if param else rec
        text.append(summary(whole) + (f" (cache entry {where(n)})" if where else ""))
        text.extend(param_text(prm, title(rec)) for prm in rec["params"])
    if fmt == "json":
        print(json.dumps({"kernels": doc}, indent=2))
    elif fmt == "dot":
        print(to_dot(doc), end="")
    elif text:
        print(render("\n".join(text), sys.stdout))
    return 1 if missing_param and found else 0


_STYLE = {"head": "\033[1m", "kept": "\033[32m", "pruned": "\033[31m", "loc": "\033[36m", "end": "\033[0m"}
_LOC = re.compile(r"(?<![\w/.-])(/?[\w./-]+\.py:\d+:\d+)")


def render(text: str, stream) -> str:
    """Text for a reader: wrapped to the terminal's width (when `stream` is a terminal or
    COLUMNS is set; a pipe gets whole lines, for grep), coloured only on a terminal and only
    without NO_COLOR (https://no-color.org). Wrapped lines keep their indentation, plus four."""
    tty = hasattr(stream, "isatty") and stream.isatty()
    width = shutil.get_terminal_size((0, 0)).columns if tty or os.environ.get("COLUMNS") else 0
    lines = []
    for line in text.splitlines():
        if width <= 8 or len(line) <= width:
            lines.append(line)
            continue
        body = line.lstrip(" ")
        indent = " " * (len(line) - len(body))
        lines.extend(textwrap.wrap(body, width, initial_indent=indent, subsequent_indent=indent + "    ",
                                   break_on_hyphens=False) or [line])
    out = "\n".join(lines)
    if not tty or os.environ.get("NO_COLOR"):
        return out
    s = _STYLE
    out = re.sub(r"(?m)^(== .*)$", lambda m: s["head"] + m.group(1) + s["end"], out)
    out = re.sub(r"(?m)^(\S+ is )(kept|pruned)", lambda m: m.group(1) + s[m.group(2)] + m.group(2) + s["end"], out)
    return _LOC.sub(lambda m: s["loc"] + m.group(1) + s["end"], out)


def explain_cache(argv: list[str]) -> int:
    """Cache mode: explanations from the facts stored in disk-cache entries."""
    ap = argparse.ArgumentParser(prog="qd-explain", description=__doc__.split("\n\n")[0])
    ap.add_argument("kernel", help="kernel name (qualified or plain) or instantiation id")
    ap.add_argument("path", nargs="?", help="a leaf parameter such as md.mid.pos (default: all)")
    ap.add_argument("--cache-dir", help="the offline_cache_file_path the program used (default: ~/.cache/qd)")
    _formats(ap)
    args = ap.parse_args(argv)
    cache = disk_cache.cache_dir(_config.Config(offline_cache_file_path=args.cache_dir))
    entries = list(_entries(cache, args.kernel))
    if not entries:
        print(f"qd-explain: no cache entry for kernel {args.kernel!r} in {cache}; only kernels declared "
              "@qd.kernel(fastcache=True) are stored. `qd-explain SCRIPT.py` runs a program and explains "
              "every kernel it compiles", file=sys.stderr)
        return 1
    found = [(h["kernel"], h["inst_id"], h["facts"]) for _p, h in entries]
    return _explain(found, args.path, _format(args), where=lambda n: entries[n][0].name)


def _formats(ap: argparse.ArgumentParser) -> None:
    fmt = ap.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="print the explanations as JSON (qd/explain/schema.json)")
    fmt.add_argument("--dot", action="store_true", help="print the derivation graph for Graphviz's dot")


def _format(args) -> str:
    return "json" if args.json else "dot" if args.dot else "text"


if __name__ == "__main__":
    sys.exit(main())
