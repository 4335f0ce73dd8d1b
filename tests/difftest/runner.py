"""Runs generated programs on qd, on quadrants and, where they disagree, on the plain-Python
reference, and sorts each program into one category.

Programs run in long-lived worker processes (`worker.py`), many per process: a program costs
well under a second once the compiler is loaded, loading it costs more. Each request has a time
limit; a worker that overruns it is killed and reported as a hang, one that dies as a crash,
and a fresh worker takes the next program, so one bad program never stalls or spoils a batch.
Workers are also replaced every `PER_WORKER` programs so that state left behind by one program
(compiled kernels, fields) cannot build up.

Categories (`Verdict.category`):
- `agree`: same outputs on both;
- `differ`: both ran and the outputs differ; `verdict` says which side the reference supports
  (`qd bug`, `quadrants bug`, or `unresolved` where it agrees with neither or fails);
- `qd_crash`: qd died, or raised an internal error (`QdInternalError` or an exception that is
  not a `QdError`: a bug whatever the program);
- `qd_hang`: qd overran the time limit;
- `qd_refused`: quadrants ran the program and qd raised a `QdError` (`allowed` when the
  message matches `ALLOWED_REFUSALS`);
- `skipped`: quadrants refused the program (raised, crashed or hung), or both sides crashed
  (the program does something undefined); `kind` names the error.
"""

from __future__ import annotations

import os
import pickle
import re
import select
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import compare
from .generator import generate

WORKER = Path(__file__).resolve().parent / "worker.py"
REPO = WORKER.parents[2]  # the checkout holding tests/difftest/
PER_WORKER = 30
DEFAULT_TIMEOUT = 30.0

# Constructs quadrants accepts that qd refuses on purpose: (pattern of qd's message, why).
# A refusal matching none of these fails the tests. Each entry must name a documented
# difference (README, "Differences from quadrants"); known qd bugs do not belong here.
ALLOWED_REFUSALS: list[tuple[str, str]] = []


@dataclass
class SideResult:
    """One program's run on one side."""

    status: str  # ok | error | crash | hang
    out: Any = None
    etype: str = ""
    mro: list[str] = field(default_factory=list)
    module: str = ""
    msg: str = ""
    where: str = ""
    seconds: float = 0.0

    def brief(self) -> str:
        if self.status == "ok":
            return "ok"
        return f"{self.status}: {self.etype} {short_message(self.msg)}".strip()


@dataclass
class Verdict:
    seed: int
    category: str
    verdict: str = ""  # for differ: qd bug | quadrants bug | unresolved
    kind: str = ""  # for skipped / refused / crash: the error's kind
    detail: list[str] = field(default_factory=list)
    qd: SideResult | None = None
    quadrants: SideResult | None = None
    ref: SideResult | None = None
    ref_check: str = ""  # with check_reference: how the reference did on an agreeing program


def short_message(msg: str) -> str:
    """The gist of an error message: qd's first line without its location, or the innermost
    `...Error: text` line of a quadrants report (which wraps the compiler's traceback)."""
    lines = [ln.strip() for ln in msg.splitlines() if ln.strip()]
    if lines and re.match(r"^\S+:\d+:\d+: ", lines[0]):
        return re.sub(r"^\S+:\d+:\d+: ", "", lines[0])[:200]
    found = re.findall(r"^\s*(?:[\w.]+\.)?\w*(?:Error|Exception): (.+)$", msg, re.M)
    if found:
        return found[-1].strip()[:200]
    return lines[0][:200] if lines else ""


def error_kind(res: SideResult) -> str:
    """A stable name for an error: exception class and message with numbers and names elided."""
    if res.status in ("crash", "hang"):
        return res.status
    gist = re.sub(r"\d+", "N", short_message(res.msg))
    gist = re.sub(r"'[^']*'|\"[^\"]*\"|`[^`]*`", "'_'", gist)
    return f"{res.etype}: {gist}"[:160]


class Worker:
    """A worker process of one side, restarted when it dies, hangs or has run enough programs."""

    def __init__(self, side: str, workdir: Path, timeout: float) -> None:
        self.side = side
        self.workdir = workdir
        self.timeout = timeout
        self.proc: subprocess.Popen | None = None
        self.rfd = -1
        self.count = 0

    def _start(self) -> None:
        rfd, wfd = os.pipe()
        env = dict(os.environ)
        env["DIFFTEST_RESULT_FD"] = str(wfd)
        # the checkout's qd, not a copy installed beside the oracle: the code under test is this tree
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
        env.setdefault("QD_OFFLINE_CACHE_FILE_PATH", str(self.workdir / "cache"))
        log = open(self.workdir / f"worker_{self.side}.log", "ab")  # noqa: SIM115 - owned by the child
        self.proc = subprocess.Popen([sys.executable, str(WORKER), self.side], stdin=subprocess.PIPE,
                                     stdout=log, stderr=log, pass_fds=(wfd,), env=env, cwd=self.workdir,
                                     start_new_session=True)
        log.close()
        os.close(wfd)
        self.rfd = rfd
        self.count = 0

    def close(self) -> None:
        if self.proc is None:
            return
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=10)
        except Exception:
            self._kill()
        if self.rfd >= 0:
            os.close(self.rfd)
            self.rfd = -1
        self.proc = None

    def _kill(self) -> None:
        if self.proc is not None:
            try:
                os.killpg(self.proc.pid, 9)
            except (ProcessLookupError, PermissionError):
                pass
            self.proc.wait()
        if self.rfd >= 0:
            os.close(self.rfd)
            self.rfd = -1
        self.proc = None

    def _read(self, n: int, deadline: float) -> bytes | None:
        buf = b""
        while len(buf) < n:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([self.rfd], [], [], left)
            if not ready:
                return None
            chunk = os.read(self.rfd, n - len(buf))
            if not chunk:
                raise EOFError
            buf += chunk
        return buf

    def run(self, seed: int, path: Path) -> SideResult:
        if self.proc is None or self.count >= PER_WORKER:
            self.close()
            self._start()
        self.count += 1
        t0 = time.monotonic()
        data = pickle.dumps((seed, str(path)), protocol=4)
        try:
            self.proc.stdin.write(struct.pack("<I", len(data)) + data)
            self.proc.stdin.flush()
            deadline = t0 + self.timeout
            head = self._read(4, deadline)
            if head is not None:
                body = self._read(struct.unpack("<I", head)[0], deadline + 5)
                if body is not None:
                    res = pickle.loads(body)
                    return SideResult(seconds=time.monotonic() - t0, **res)
            self._kill()
            return SideResult("hang", msg=f"no result in {self.timeout:.0f} s", seconds=time.monotonic() - t0)
        except (EOFError, BrokenPipeError, OSError):
            code = self.proc.wait() if self.proc is not None else None
            self._kill()
            return SideResult("crash", etype=f"exit {code}", msg=f"worker died (exit status {code})",
                              seconds=time.monotonic() - t0)


def quadrants_source(src: str) -> str:
    """The program as written for quadrants: only the import differs."""
    out = src.replace("\nimport qd\n", "\nimport quadrants as qd\n", 1)
    assert out != src, "program without a module-level `import qd`"
    return out


def write_program(seed: int, workdir: Path) -> tuple[Path, Path]:
    src = generate(seed)
    p = workdir / f"seed_{seed}.py"
    q = workdir / f"seed_{seed}_quadrants.py"
    p.write_text(src)
    q.write_text(quadrants_source(src))
    return p, q


def _is_qd_error(res: SideResult) -> bool:
    return "QdError" in res.mro and "QdInternalError" not in res.mro


def _allowed(msg: str) -> str:
    for pattern, reason in ALLOWED_REFUSALS:
        if re.search(pattern, msg):
            return reason
    return ""


def classify(seed: int, qd: SideResult, qa: SideResult, ref: SideResult | None = None) -> Verdict:
    """The category of one program from its qd and quadrants runs (and the reference's, if run)."""
    v = Verdict(seed, "", qd=qd, quadrants=qa, ref=ref)
    if qd.status == qa.status == "error" and qd.etype == qa.etype and qd.module == qa.module == "builtins" \
            and qd.where and qd.where.split(":")[1:] == qa.where.split(":")[1:]:
        # the same Python error at the same line on both sides: the program itself is wrong
        v.category, v.kind = "skipped", "invalid program: " + error_kind(qa)
        return v
    if qd.status == qa.status == "crash":
        # both processes died: the program itself does something undefined (an index out of
        # range of an unchecked array writes outside it), not a divergence of either side
        v.category, v.kind = "skipped", "both sides crashed"
        return v
    if qd.status in ("crash", "hang") or (qd.status == "error" and not _is_qd_error(qd)):
        v.category = "qd_hang" if qd.status == "hang" else "qd_crash"
        v.kind = error_kind(qd)
        return v
    if qa.status != "ok":
        v.category, v.kind = "skipped", error_kind(qa)
        return v
    if qd.status == "error":
        v.category, v.kind = "qd_refused", error_kind(qd)
        reason = _allowed(qd.msg)
        if reason:
            v.category, v.verdict = "qd_refused_allowed", reason
        return v
    v.detail = compare.differences(qd.out, qa.out)
    if not v.detail:
        v.category = "agree"
        return v
    v.category = "differ"
    if ref is None or ref.status != "ok":
        v.verdict = "unresolved"
        return v
    # a verdict per output that differs: one program may hit a qd bug and a quadrants bug at once
    outs = [x.out if isinstance(x.out, dict) else {"OUT": x.out} for x in (qd, qa, ref)]
    per_key = []
    for key in sorted(set(outs[0]) | set(outs[1])):
        q, a, r = (o.get(key) for o in outs)
        if not compare.agree(q, a):
            per_key.append("qd bug" if compare.agree(r, a)
                           else "quadrants bug" if compare.agree(r, q) else "unresolved")
    if "qd bug" in per_key:
        v.verdict = "qd bug"
    elif per_key and all(k == "quadrants bug" for k in per_key):
        v.verdict = "quadrants bug"
    else:
        v.verdict = "unresolved"
    return v


def _run_chunk(seeds: list[int], workdir: Path, timeout: float, results: dict[int, Verdict],
               progress: Callable[[Verdict], None] | None, check_reference: bool = False) -> None:
    files = {s: write_program(s, workdir) for s in seeds}
    out: dict[str, dict[int, SideResult]] = {"qd": {}, "quadrants": {}}
    for side in ("qd", "quadrants"):
        w = Worker(side, workdir, timeout)
        try:
            for s in seeds:
                out[side][s] = w.run(s, files[s][0 if side == "qd" else 1])
        finally:
            w.close()
    ref_worker: Worker | None = None
    try:
        for s in seeds:
            v = classify(s, out["qd"][s], out["quadrants"][s])
            if v.category == "differ" or (check_reference and v.category == "agree"):
                ref_worker = ref_worker or Worker("ref", workdir, timeout)
                ref = ref_worker.run(s, files[s][0])
                v = classify(s, out["qd"][s], out["quadrants"][s], ref)
                if v.category == "agree":
                    diff = (compare.differences(ref.out, out["quadrants"][s].out) if ref.status == "ok"
                            else [ref.brief()])
                    v.ref_check = "; ".join(diff[:3]) or "agrees"
            results[s] = v
            if progress is not None:
                progress(v)
    finally:
        if ref_worker is not None:
            ref_worker.close()


def run_seeds(seeds: Iterable[int], jobs: int = 1, timeout: float = DEFAULT_TIMEOUT, batch: int = 25,
              workdir: Path | None = None, progress: Callable[[Verdict], None] | None = None,
              check_reference: bool = False) -> list[Verdict]:
    """Every seed's verdict, in seed order. `jobs` chunks of `batch` seeds run at once;
    `check_reference` also runs the reference on programs where qd and quadrants agree (a
    check of the reference and the generator, not of qd)."""
    seeds = list(seeds)
    own = workdir is None
    wd = Path(tempfile.mkdtemp(prefix="difftest-")) if own else workdir
    wd.mkdir(parents=True, exist_ok=True)
    results: dict[int, Verdict] = {}
    chunks = [seeds[i:i + batch] for i in range(0, len(seeds), batch)]
    lock = threading.Lock()

    def report(v: Verdict) -> None:
        if progress is not None:
            with lock:
                progress(v)

    failures: list[BaseException] = []

    def work() -> None:
        while True:
            with lock:
                if not chunks or failures:
                    return
                chunk = chunks.pop(0)
            try:
                _run_chunk(chunk, wd, timeout, results, report, check_reference)
            except BaseException as exc:  # handed to the caller's thread below
                failures.append(exc)
                return

    try:
        threads = [threading.Thread(target=work) for _ in range(max(1, jobs))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if failures:
            raise failures[0]
    finally:
        if own:
            shutil.rmtree(wd, ignore_errors=True)
    return [results[s] for s in seeds]


def quadrants_available() -> tuple[bool, str]:
    """Whether the oracle can be imported here, and if not why (in a subprocess: importing
    quadrants in the test process would load its runtime next to qd's)."""
    import importlib.util

    if importlib.util.find_spec("quadrants") is None:
        return False, "quadrants is not installed (pip install 'quadrants==1.3.3', part of the dev extra)"
    return True, ""
