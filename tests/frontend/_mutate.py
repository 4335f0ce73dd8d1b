"""Random AST mutations of valid kernels, and a harness that classifies what qd does with them.

The contract under test: whatever a user writes, qd either runs it or raises a `qd.QdError`
located in the user's file (file:line:col, the source line and a caret). Hand-written tables
only cover the holes someone thought of; mutating valid programs at random finds the others.

Mutant `i` of seed `s` is a pure function of `(s, i)`, so any failure is reproducible alone:

    python tests/frontend/_mutate.py --seed S --index I          # print the mutant's source
    python tests/frontend/_mutate.py --seed S --count N          # run N mutants, print failures

Mutants run in a worker subprocess (segfaults and native hangs must not kill the caller); the
worker reports each mutant before and after running it, so a crash or hang is charged to the
mutant that caused it and the run continues with a fresh worker.
"""

from __future__ import annotations

import argparse
import ast
import copy
import importlib.util
import json
import os
import random
import selectors
import signal
import subprocess
import sys
import tempfile
import traceback
import warnings
from dataclasses import dataclass, field

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))  # the tree under test: the one holding this file
for _p in (HERE, ROOT):
    if _p not in sys.path:
        sys.path.insert(0, _p)
from _mutate_corpus import CORPUS, HEADER  # noqa: E402
from _mutate_vocab import (  # noqa: E402
    AFTER_LAUNCH,
    BINOPS,
    CLASS_DECORATORS,
    CMPOPS,
    DECORATORS,
    ODD_ANNOTATIONS,
    ODD_ARGS,
    ODD_EXPRS,
    ODD_INIT,
    ODD_STMTS,
    ODD_TARGETS,
    STMT_WRAPPERS,
    UNOPS,
)

MUTANT_SECONDS = 20  # a single mutant taking longer than this counts as a hang
WORKER_BATCH = 150  # mutants per worker process (bounds the JIT memory one process accumulates)

def _expr(text: str) -> ast.expr:
    return ast.parse(text, mode="eval").body


def _stmts(text: str) -> list[ast.stmt]:
    return ast.parse(text).body


def _qd_functions(tree: ast.Module) -> list[ast.FunctionDef]:
    """The module's kernels and funcs: the mutation targets (make_args is mutated separately)."""
    return [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name != "make_args"]


def _names_in(fn: ast.FunctionDef) -> list[str]:
    names = {a.arg for a in fn.args.args}
    names.update(n.id for n in ast.walk(fn) if isinstance(n, ast.Name))
    return sorted(names) or ["x"]


class _Mutator:
    """Applies one random mutation to a parsed corpus module."""

    def __init__(self, rng: random.Random, tree: ast.Module):
        self.rng = rng
        self.tree = tree
        self.fns = _qd_functions(tree)
        self.relaunch = False  # launch once with the unmutated arguments first
        self.init_line = ""  # a qd.init call to make before launching
        self.after = ""  # a statement to run after the launch

    def fill(self, template: str, names: list[str], original: ast.AST | None = None) -> str:
        """Replace each `P` of a template by a name in scope, or by the original expression."""
        out = []
        for part in template.split("P"):
            out.append(part)
            if original is not None and self.rng.random() < 0.4:
                out.append(f"({ast.unparse(original)})")
            else:
                out.append(self.rng.choice(names))
        return "".join(out[:-1])

    def _nodes(self, fn, kind):
        return [n for n in ast.walk(fn) if isinstance(n, kind)]

    def _parent_lists(self, fn):
        """(list, index) of every statement position inside `fn`'s body, nested bodies included."""
        out = []
        for node in ast.walk(fn):
            for fld in ("body", "orelse", "finalbody"):
                stmts = getattr(node, fld, None)
                if isinstance(stmts, list) and stmts and isinstance(stmts[0], ast.stmt):
                    out.extend((stmts, k) for k in range(len(stmts)))
        return out

    def _replace_expr(self, fn, new_of) -> bool:
        """Replace a random load-context expression inside `fn` by `new_of(old)`."""
        slots = []
        for parent in ast.walk(fn):
            if isinstance(parent, ast.JoinedStr):  # holds only FormattedValue / Constant parts
                continue
            for fld, value in ast.iter_fields(parent):
                if fld in ("decorator_list", "returns", "annotation"):
                    continue
                items = value if isinstance(value, list) else [value]
                for k, v in enumerate(items):
                    if isinstance(v, ast.expr) and not isinstance(getattr(v, "ctx", None), (ast.Store, ast.Del)):
                        slots.append((parent, fld, k if isinstance(value, list) else None, v))
        if not slots:
            return False
        parent, fld, k, old = self.rng.choice(slots)
        new = new_of(old)
        if k is None:
            setattr(parent, fld, new)
        else:
            getattr(parent, fld)[k] = new
        return True

    # -- operators -------------------------------------------------------------------------------

    def odd_expr(self, fn) -> bool:
        names = _names_in(fn)
        return self._replace_expr(fn, lambda old: _expr(self.fill(self.rng.choice(ODD_EXPRS), names, old)))

    def rename(self, fn) -> bool:
        pool = [*_names_in(fn), "undefined_name", "np", "qd", "math", "range", "len", "print", "State", "MODE",
                "clamp", "main", "make_args", "typing", "dataclasses", "int", "i", "j"]
        loads = [n for n in self._nodes(fn, ast.Name) if isinstance(n.ctx, ast.Load)]
        if not loads:
            return False
        self.rng.choice(loads).id = self.rng.choice(pool)
        return True

    def odd_target(self, fn) -> bool:
        assigns = [n for n in ast.walk(fn) if isinstance(n, (ast.Assign, ast.AugAssign, ast.For))]
        if not assigns:
            return False
        node = self.rng.choice(assigns)
        target = _expr(self.fill(self.rng.choice(ODD_TARGETS), _names_in(fn)))
        for sub in ast.walk(target):
            if hasattr(sub, "ctx"):
                sub.ctx = ast.Load()
        target.ctx = ast.Store()
        for sub in ast.walk(target):
            if isinstance(sub, (ast.Tuple, ast.List, ast.Starred)) or (sub is target):
                sub.ctx = ast.Store()
            if isinstance(sub, ast.Starred) and isinstance(sub.value, ast.Name):
                sub.value.ctx = ast.Store()
            if isinstance(sub, (ast.Tuple, ast.List)):
                for e in sub.elts:
                    if isinstance(e, ast.Name):
                        e.ctx = ast.Store()
        if isinstance(node, ast.Assign):
            node.targets = [target]
        else:
            node.target = target
        return True

    def call_args(self, fn) -> bool:
        calls = self._nodes(fn, ast.Call)
        if not calls:
            return False
        call = self.rng.choice(calls)
        what = self.rng.randrange(4)
        if what == 0 and call.args:
            del call.args[self.rng.randrange(len(call.args))]
        elif what == 1:
            call.args.insert(self.rng.randrange(len(call.args) + 1),
                             _expr(self.fill(self.rng.choice(ODD_EXPRS), _names_in(fn))))
        elif what == 2:
            call.keywords.append(ast.keyword(self.rng.choice(["nothing", "dtype", "v", "x", "a", "step"]),
                                             _expr(self.rng.choice(["1", "None", "'s'", "qd.f32"]))))
        else:
            call.args.append(ast.Starred(_expr(self.rng.choice(["(1, 2)", "[]", "x", "range(2)"])), ast.Load()))
        return True

    def annotation(self, fn) -> bool:
        choice = self.rng.randrange(5)
        if choice == 0:
            fn.returns = None if self.rng.random() < 0.3 else _expr(self.rng.choice(ODD_ANNOTATIONS))
            return True
        if choice == 1:  # a dataclass member of the module
            members = [n for c in self.tree.body if isinstance(c, ast.ClassDef) for n in c.body
                       if isinstance(n, ast.AnnAssign)]
            if members:
                self.rng.choice(members).annotation = _expr(self.rng.choice(ODD_ANNOTATIONS))
                return True
        args = fn.args.args
        if not args:
            return False
        arg = self.rng.choice(args)
        arg.annotation = None if self.rng.random() < 0.15 else _expr(self.rng.choice(ODD_ANNOTATIONS))
        return True

    def signature(self, fn) -> bool:
        what = self.rng.randrange(5)
        a = fn.args
        if what == 0 and a.args:
            del a.args[self.rng.randrange(len(a.args))]
        elif what == 1:
            a.args.append(ast.arg("extra", _expr(self.rng.choice(ODD_ANNOTATIONS))))
        elif what == 2:
            a.vararg = ast.arg("rest")
        elif what == 3:
            a.kwarg = ast.arg("kw")
        elif a.args:
            a.defaults = [_expr(self.rng.choice(["1", "None", "'s'", "np.zeros(2)", "qd.f32", "1.5"]))]
        return True

    def decorator(self, fn) -> bool:
        classes = [c for c in self.tree.body if isinstance(c, ast.ClassDef)]
        if classes and self.rng.random() < 0.3:  # a dataclass parameter type that is not (quite) one
            d = self.rng.choice(CLASS_DECORATORS)
            self.rng.choice(classes).decorator_list = [] if d is None else [_expr(d)]
            return True
        d = self.rng.choice(DECORATORS)
        fn.decorator_list = [] if d is None else [_expr(d)]
        return True

    def insert_stmt(self, fn) -> bool:
        slots = self._parent_lists(fn)
        stmts, k = self.rng.choice(slots)
        stmts[k:k] = _stmts(self.fill(self.rng.choice(ODD_STMTS), _names_in(fn)))
        return True

    def wrap_stmt(self, fn) -> bool:
        stmts, k = self.rng.choice(self._parent_lists(fn))
        wrapper = _stmts(self.rng.choice(STMT_WRAPPERS).replace("BODY", "pass"))[0]
        holder = next(n for n in ast.walk(wrapper) if isinstance(getattr(n, "body", None), list)
                      and n.body and isinstance(n.body[0], ast.Pass))
        holder.body = [stmts[k]]
        stmts[k] = wrapper
        return True

    def delete_stmt(self, fn) -> bool:
        stmts, k = self.rng.choice(self._parent_lists(fn))
        if len(stmts) == 1:
            stmts[0] = ast.Pass()
        else:
            del stmts[k]
        return True

    def operator(self, fn) -> bool:
        nodes = self._nodes(fn, (ast.BinOp, ast.AugAssign, ast.Compare, ast.UnaryOp, ast.BoolOp))
        if not nodes:
            return False
        n = self.rng.choice(nodes)
        if isinstance(n, (ast.BinOp, ast.AugAssign)):
            n.op = self.rng.choice(BINOPS)()
        elif isinstance(n, ast.Compare):
            n.ops = [self.rng.choice(CMPOPS)() for _ in n.ops]
        elif isinstance(n, ast.UnaryOp):
            n.op = self.rng.choice(UNOPS)()
        else:
            n.op = self.rng.choice([ast.And, ast.Or])()
        return True

    def launch_args(self, _fn) -> bool:
        make = next(n for n in self.tree.body if isinstance(n, ast.FunctionDef) and n.name == "make_args")
        ret = make.body[-1]
        if not (isinstance(ret, ast.Return) and isinstance(ret.value, ast.Tuple)):
            return False
        elts = ret.value.elts
        self.relaunch = self.relaunch or self.rng.random() < 0.5  # the fast path after a good launch
        what = self.rng.randrange(6)
        calls = [c for c in ast.walk(make) if isinstance(c, ast.Call) and c.args]
        if what >= 4 and calls:  # an argument of a constructor: a dataclass member, a shape, a dtype
            call = self.rng.choice(calls)
            call.args[self.rng.randrange(len(call.args))] = _expr(self.rng.choice(ODD_ARGS))
            return True
        if what == 0 and elts:
            elts[self.rng.randrange(len(elts))] = _expr(self.rng.choice(ODD_ARGS))
        elif what == 1 and elts:
            del elts[self.rng.randrange(len(elts))]
        elif what == 2:
            elts.append(_expr(self.rng.choice(ODD_ARGS)))
        else:  # swap two arguments
            if len(elts) > 1:
                a, b = self.rng.sample(range(len(elts)), 2)
                elts[a], elts[b] = elts[b], elts[a]
        return True

    def odd_init(self, _fn) -> bool:
        """A `qd.init` with an odd option before the launch (debug stays on: out-of-bounds accesses of
        mutants must be checked, not crash the worker)."""
        opts = {"debug": "True", "offline_cache": "False", "cpu_max_num_threads": "1"}
        key, value = self.rng.choice(ODD_INIT)
        opts[key] = value
        self.init_line = f"qd.init({', '.join(f'{k}={v}' for k, v in opts.items())})"
        return True

    def after_launch(self, _fn) -> bool:
        """A question about the launch: `qd.explain` / `qd.launch_info` with odd arguments."""
        self.after = self.rng.choice(AFTER_LAUNCH)
        return True

    OPERATORS = ["after_launch", "odd_init", "odd_expr", "odd_expr", "odd_expr", "rename", "odd_target", "call_args",
                 "annotation", "annotation", "signature", "decorator", "insert_stmt", "insert_stmt", "wrap_stmt",
                 "delete_stmt", "operator", "launch_args"]

    def mutate(self) -> list[str]:
        done = []
        for _ in range(self.rng.choice([1, 1, 1, 2, 2, 3])):
            op = self.rng.choice(self.OPERATORS)
            fn = self.rng.choice(self.fns)
            try:
                applied = getattr(self, op)(fn)
            except SyntaxError:  # the filled-in template is not valid here (`(a.b := 1)`)
                applied = False
            if applied:
                done.append(f"{op}({fn.name})")
        return done


def make_mutant(seed: int, index: int) -> tuple[str, str, list[str]]:
    """(corpus name, module source, mutations applied) of mutant `index` of `seed`."""
    rng = random.Random(f"{seed}:{index}")
    name = rng.choice(sorted(CORPUS))
    tree = ast.parse(HEADER + CORPUS[name])
    good = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "make_args")
    good = copy.deepcopy(good)
    good.name = "make_good_args"
    ops: list[str] = []
    mut = _Mutator(rng, tree)
    for _ in range(20):  # an operator may not apply (no calls to mutate...); try again
        trial = copy.deepcopy(tree)
        mut = _Mutator(rng, trial)
        ops = mut.mutate()
        try:
            ast.unparse(ast.fix_missing_locations(copy.deepcopy(trial)))
        except (ValueError, TypeError, AttributeError):  # a tree ast cannot print back
            ops = []
        if ops:
            tree = trial
            break
    tree.body.append(good)
    if rng.random() < 0.15:  # every annotation a string, resolved later by typing and qd
        ops.append("future_annotations")
        tree.body.insert(0, ast.ImportFrom("__future__", [ast.alias("annotations")], 0))
    ast.fix_missing_locations(tree)
    # the launch is written in the program too: errors of a Python-level call point at the caller
    launch = ["def launch():"]
    if mut.init_line:
        launch.append(f"    {mut.init_line}")
    if mut.relaunch:
        ops.append("relaunch")
        launch.append("    main(*make_good_args())")
    if mut.after:
        launch += ["    r = main(*ARGS)", f"    {mut.after}", "    return r"]
    else:
        launch.append("    return main(*ARGS)")
    source = ast.unparse(tree) + "\n\nARGS = make_args()\n\n\n" + "\n".join(launch) + "\n"
    return name, source, ops


# ---------------------------------------------------------------------- running one mutant


@dataclass
class Outcome:
    index: int
    status: str  # "ok" | "located" | "python" | "invalid" | "FAIL"
    detail: str = ""
    corpus: str = ""
    ops: list[str] = field(default_factory=list)


class _Timeout(BaseException):
    """Raised by the alarm; a BaseException so that no `except Exception` in qd swallows it."""


def _qd_dir() -> str:
    import qd

    return os.path.dirname(os.path.abspath(qd.__file__)) + os.sep


def located_problem(err, path: str) -> str | None:
    """Why `err` (a QdError) does not satisfy the location contract for the file `path`, or None."""
    import linecache

    import qd

    if isinstance(err, qd.QdInternalError):
        return f"internal error: {err}"
    loc = err.loc
    if loc is None:
        return f"no location: {type(err).__name__}: {err}"
    if os.path.abspath(loc.file) != os.path.abspath(path):
        return f"located outside the program ({loc}): {type(err).__name__}: {err}"
    lines = str(err).splitlines()
    if not lines[0].startswith(f"{loc}: "):
        return f"message does not start with {loc}: {err}"
    text = linecache.getline(loc.file, loc.line).strip()
    shown = any(lines[k].strip() == text and set(lines[k + 1].strip()) == {"^"} for k in range(1, len(lines) - 1))
    if text and not shown:
        return f"no source line with a caret: {err}"
    return None


def _from_qd(tb, qd_dir: str) -> bool:
    return any(os.path.abspath(f.filename).startswith(qd_dir) for f in traceback.extract_tb(tb))


def run_source(source: str, path: str, index: int = 0) -> Outcome:
    """Write `source` to `path`, import it and launch `main(*ARGS)`; classify what happened."""
    import qd

    qd_dir = _qd_dir()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # Python's SyntaxWarnings about the odd code
            compile(source, path, "exec")
    except (SyntaxError, ValueError) as e:  # Python itself rejects the program: nothing for qd to do
        return Outcome(index, "invalid", f"{type(e).__name__}: {e}")
    with open(path, "w", encoding="utf-8") as f:
        f.write(source)
    mod_name = os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(mod_name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = mod
    old = signal.signal(signal.SIGALRM, _raise_timeout)
    signal.alarm(MUTANT_SECONDS)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            spec.loader.exec_module(mod)
            mod.launch()
        for w in caught:  # qd's own warnings must be located; others come from the program's Python code
            from_qd = os.path.abspath(w.filename).startswith(qd_dir) or issubclass(w.category, qd.QdWarning)
            if from_qd and os.path.abspath(w.filename) != os.path.abspath(path):
                return Outcome(index, "FAIL", f"warning not located in the program: {w.filename}:{w.lineno}: "
                                              f"{w.category.__name__}: {w.message}")
        return Outcome(index, "ok")
    except _Timeout:
        return Outcome(index, "FAIL", f"hang: still running after {MUTANT_SECONDS} s")
    except qd.QdError as e:
        problem = located_problem(e, path)
        if problem is None and (e.__cause__ is not None or not (e.__suppress_context__ or e.__context__ is None)):
            problem = f"internal exception chained to {type(e).__name__}: {e.__cause__ or e.__context__!r}"
        return Outcome(index, "FAIL", problem) if problem else Outcome(index, "located", type(e).__name__)
    except Exception as e:
        if _from_qd(e.__traceback__, qd_dir):
            tb = "".join(traceback.format_exception(type(e), e, e.__traceback__)[-4:])
            return Outcome(index, "FAIL", f"not a qd error: {type(e).__name__}: {e}\n{tb}")
        return Outcome(index, "python", f"{type(e).__name__}: {e}")  # raised by Python in the user's own code
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
        sys.modules.pop(mod_name, None)


def _raise_timeout(_signum, _frame):
    raise _Timeout


# ---------------------------------------------------------------------- worker and driver


def _worker(seed: int, start: int, stop: int, directory: str, sources: list[str] | None) -> None:
    """Run mutants start..stop-1 (or the given sources), one JSON line before and after each."""
    import qd

    proto = sys.stdout  # the protocol's channel; what mutants print goes nowhere
    sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - lives as long as the worker

    def say(msg: dict) -> None:
        proto.write(json.dumps(msg) + "\n")
        proto.flush()

    say({"ready": True})  # imports done: from now on silence means a hang
    for i in range(start, stop):
        qd.init(arch=qd.cpu, debug=True, offline_cache=False, cpu_max_num_threads=1)  # undo a mutant's qd.init
        if sources is not None:
            corpus, source, ops = "given", sources[i], []
        else:
            corpus, source, ops = make_mutant(seed, i)
        say({"start": i})
        out = run_source(source, os.path.join(directory, f"mutant_{seed}_{i}.py"), i)
        out.corpus, out.ops = corpus, ops
        say(out.__dict__)


def run_mutants(seed: int, count: int, sources: list[str] | None = None, batch: int = WORKER_BATCH,
                mutant_seconds: int = MUTANT_SECONDS, hang_seconds: float | None = None) -> list[Outcome]:
    """Outcomes of mutants 0..count-1 of `seed` (or of `sources`), run in worker subprocesses.
    A mutant running longer than `mutant_seconds` is stopped by an alarm; a worker silent for
    `hang_seconds` (a hang in native code ignores the alarm) is killed."""
    if hang_seconds is None:
        hang_seconds = mutant_seconds + 10
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
    outcomes: list[Outcome] = []
    with tempfile.TemporaryDirectory(prefix="qd-mutants-") as directory:
        src_file = None
        if sources is not None:
            src_file = os.path.join(directory, "sources.json")
            with open(src_file, "w", encoding="utf-8") as f:
                json.dump(sources, f)
        i = 0
        while i < count:
            stop = min(count, i + batch)
            cmd = [sys.executable, os.path.abspath(__file__), "--worker", "--seed", str(seed), "--start", str(i),
                   "--stop", str(stop), "--dir", directory, "--seconds", str(mutant_seconds)]
            if src_file:
                cmd += ["--sources", src_file]
            i = _drive(cmd, env, i, stop, outcomes, hang_seconds)
    return outcomes


def _drive(cmd, env, i, stop, outcomes, hang_seconds) -> int:
    """Run one worker; returns the index to continue from (past a mutant that crashed or hung)."""
    errf = tempfile.TemporaryFile(mode="w+")  # a file, not a pipe: a chatty worker cannot block on it
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=errf, env=env, text=True)
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    current = None
    ready = False
    try:
        while True:
            if not sel.select(timeout=hang_seconds if ready else max(120.0, hang_seconds)):
                proc.kill()
                outcomes.append(Outcome(current if current is not None else i, "FAIL",
                                        f"hang: no progress for {hang_seconds} s"))
                return (current if current is not None else i) + 1
            line = proc.stdout.readline()
            if not line:
                break
            try:
                msg = json.loads(line)
            except ValueError:  # native code wrote to the worker's stdout
                continue
            if not isinstance(msg, dict):
                continue
            if "ready" in msg:
                ready = True
            elif "start" in msg:
                current = msg["start"]
            else:
                outcomes.append(Outcome(**msg))
                current = None
    finally:
        sel.close()
        proc.stdout.close()
    rc = proc.wait()
    errf.seek(0)
    err = errf.read()
    errf.close()
    if current is not None or (rc != 0 and not outcomes):
        at = current if current is not None else i
        outcomes.append(Outcome(at, "FAIL", f"crash: worker exited with {rc}: {err[-2000:]}"))
        return at + 1
    if rc != 0:
        raise RuntimeError(f"mutation worker failed (exit {rc}): {err[-2000:]}")
    return stop


def report(seed: int, outcomes: list[Outcome]) -> str:
    """Each failure with its mutant's source and how to reproduce it."""
    parts = []
    for o in outcomes:
        if o.status != "FAIL":
            continue
        source = make_mutant(seed, o.index)[1] if o.corpus != "given" else ""
        parts.append(f"--- mutant {o.index} of seed {seed} ({o.corpus}: {', '.join(o.ops)})\n{o.detail}\n"
                     f"reproduce: python tests/frontend/_mutate.py --seed {seed} --index {o.index}\n{source}")
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    global MUTANT_SECONDS
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--index", type=int, help="print this mutant's source and outcome")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--start", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--stop", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--dir", help=argparse.SUPPRESS)
    ap.add_argument("--sources", help=argparse.SUPPRESS)
    ap.add_argument("--seconds", type=int, default=20, help="time limit of one mutant")
    a = ap.parse_args(argv)
    MUTANT_SECONDS = a.seconds
    if a.worker:
        sources = None
        if a.sources:
            with open(a.sources, encoding="utf-8") as f:
                sources = json.load(f)
        _worker(a.seed, a.start, a.stop, a.dir, sources)
        return 0
    if a.index is not None:
        corpus, source, ops = make_mutant(a.seed, a.index)
        print(f"# corpus {corpus}; mutations: {', '.join(ops)}\n{source}")
        with tempfile.TemporaryDirectory() as d:
            import qd

            qd.init(arch=qd.cpu, debug=True, offline_cache=False, cpu_max_num_threads=1)
            print(run_source(source, os.path.join(d, f"mutant_{a.seed}_{a.index}.py"), a.index))
        return 0
    outcomes = run_mutants(a.seed, a.count)
    counts: dict[str, int] = {}
    for o in outcomes:
        counts[o.status] = counts.get(o.status, 0) + 1
    print(report(a.seed, outcomes))
    print(json.dumps(counts))
    return 1 if counts.get("FAIL") else 0


if __name__ == "__main__":
    sys.exit(main())
