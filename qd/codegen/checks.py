"""Run-time checks compiled into kernels, and the errors they become.

A failing check does not trap: a trap would take the whole Python process down, and a kernel
runs on several threads at once. Instead it records what failed in the launch's status block
(slot 0: the kind of check, slot 1: the site, an index into `KernelModule.check_locs`, slot 2:
a value for the message) and the kernel carries on with a harmless value; the launcher turns
the record into a located `QdError` once the launch returns. Slot 0 is claimed with a
compare-and-swap, so when threads fail at once the first failure is reported whole instead
of a mixture of two.

Which checks exist, and when they are compiled in:
- bounds of every array access, `qd.init(debug=True)` only (a `QdAssertionError`, as in quadrants);
- signed and unsigned overflow of integer `+ - * <<`, debug only (quadrants checks the same
  four operators; `-` of unsigned values that would go below zero counts as overflow). As in
  quadrants an overflow is reported, not an error: the launch goes on with the wrapped value and
  the launcher prints the first one it met (its own record, so it never hides a failed check);
- a negative exponent of a signed integer `**`, debug only (quadrants' rule), a
  `QdRuntimeError`;
- a run-time `range()` step of 0, always: Python raises for it, and the iteration count
  would otherwise divide by zero. The check runs once per loop entry, not per iteration;
- `assert cond[, msg]` in kernel code, debug only (quadrants' rule): a false condition is a
  `QdAssertionError` with the message, at the assert;
- the depth of a recursive real func's calls, always: a call deeper than `MAX_RECURSION` records
  the failure and returns 0 instead of overflowing the native stack (which would end the process);
- array extents read as `a.shape[d]` / `len(a)`, always: those are i32 values (quadrants'
  type), so a launch whose extent exceeds 2**31 - 1 is refused before any code runs,
  instead of letting loop bounds and sizes wrap. Arrays are still addressed with 64-bit
  offsets, so more than 2**31 elements in total are fine.
"""

from __future__ import annotations

from ..core import ir
from ..core.abi import (
    ADD,
    ASSERT,
    EXTENT,
    I32_MAX,
    INT_TYPES,
    MAX_RECURSION,
    MUL,
    NEG_POW,
    RECURSION,
    SHL,
    STEP,
    SUB,
    WARN_SLOT,
    assert_slot,
)
from ..core.dtypes import DType
from ..core.errors import SourceLoc
from .emitter import Emitter
from .llvm_text import ll

OVERFLOW = {"add": ADD, "sub": SUB, "mul": MUL, "shl": SHL}


# -- emitting checks into the function an Emitter is writing -----------------------------------


def record(g: Emitter, kind: int, loc: SourceLoc | None, value: str, base: int = 0,
           extra: tuple[int, list[str]] = (0, [])) -> None:
    """Record a failure at the current point of the code (a cold block the caller branched to),
    in the record at status word `base` (0: the failed check; `WARN_SLOT`: a reported overflow);
    `extra` (first word, i64 values): more words the first failure alone writes."""
    fn = g.fn
    site = len(g.mg.check_locs)
    g.mg.check_locs.append(loc)
    head = g.status
    if base:
        head = fn.ins(f"getelementptr i64, ptr {g.status}, i64 {base}")
        g.mg.warns = True
    r = fn.ins(f"cmpxchg ptr {head}, i64 0, i64 {kind} monotonic monotonic")
    won = fn.ins(f"extractvalue {{ i64, i1 }} {r}, 1")
    first, done = fn.new_label("chkfirst"), fn.new_label("chkrec")
    fn.term(f"br i1 {won}, label %{first}, label %{done}")
    fn.label(first)
    first_extra, values = extra
    for slot, val in ((base + 1, str(site)), (base + 2, value), *enumerate(values, first_extra)):
        p = fn.ins(f"getelementptr i64, ptr {g.status}, i64 {slot}")
        fn.op(f"store i64 {val}, ptr {p}")
    fn.term(f"br label %{done}")
    fn.label(done)


def fail_if(g: Emitter, bad: str, kind: int, loc: SourceLoc | None, value: str, base: int = 0,
            extra: tuple[int, list[str]] = (0, [])) -> None:
    """Record a failure when the i1 `bad` is true, then continue either way."""
    fn = g.fn
    fail_l, cont_l = fn.new_label("chkfail"), fn.new_label("chkok")
    fn.term(f"br i1 {bad}, label %{fail_l}, label %{cont_l}")
    fn.label(fail_l)
    record(g, kind, loc, value, base, extra)
    fn.term(f"br label %{cont_l}")
    fn.label(cont_l)


def overflow(g: Emitter, e: ir.BinOp, a: str, b: str) -> str:
    """`a op b` for an integer `+ - * <<`, recording an overflow (debug mode)."""
    fn = g.fn
    d = e.lhs.dtype
    t = ll(d)
    if d.is_bool or not d.is_int:
        return fn.ins(f"{e.op} {t} {a}, {b}")
    if e.op == "shl":
        # the amount is reduced modulo the width, so the shift itself is defined even when the
        # check fails; shifting back must give `a` again, or bits were lost (or the sign changed)
        big = fn.ins(f"icmp uge {t} {b}, {d.bits}")
        amt = fn.ins(f"and {t} {b}, {d.bits - 1}")
        v = fn.ins(f"shl {t} {a}, {amt}")
        back = fn.ins(f"{'ashr' if d.is_signed else 'lshr'} {t} {v}, {amt}")
        lost = fn.ins(f"icmp ne {t} {back}, {a}")
        bad = fn.ins(f"or i1 {big}, {lost}")
    else:
        name = f"llvm.{'s' if d.is_signed else 'u'}{e.op}.with.overflow.{t}"
        f = g.mg.intrinsic(name, f"{{ {t}, i1 }}", [t, t])
        r = fn.ins(f"call {{ {t}, i1 }} {f}({t} {a}, {t} {b})")
        v = fn.ins(f"extractvalue {{ {t}, i1 }} {r}, 0")
        bad = fn.ins(f"extractvalue {{ {t}, i1 }} {r}, 1")
    fail_if(g, bad, OVERFLOW[e.op], e.loc, str(INT_TYPES.index(d)), WARN_SLOT)  # reported, not raised
    return v


def assertion(g: Emitter, cond: str, loc: SourceLoc | None, message: str | None,
              args: list[tuple[DType, str]] = ()) -> None:
    """Record a failed `assert` (the i1 `cond` is false); the kernel carries on, and the launch
    raises once it returns, as for the other checks. `args` (dtype, value): the run-time values
    its message formats, stored as i64 words after the return values (`KernelModule.assert_slot`),
    floats as double bits, for `runtime.status.format_assert`."""
    site = len(g.mg.check_locs)  # the site `record` is about to take
    if message is not None:
        g.mg.check_messages[site] = message
    words = []
    if args:
        g.mg.check_formats[site] = [d.name for d, _ in args]
        g.mg.assert_args = max(g.mg.assert_args, len(args))
        for d, v in args:
            if d.is_float:
                wide = v if d.bits == 64 else g.fn.ins(f"fpext float {v} to double")
                words.append(g.fn.ins(f"bitcast double {wide} to i64"))
            elif d.bits < 64:
                words.append(g.fn.ins(f"{'sext' if d.is_signed else 'zext'} {ll(d)} {v} to i64"))
            else:
                words.append(v)
    bad = g.fn.ins(f"xor i1 {cond}, true")
    fail_if(g, bad, ASSERT, loc, "0", extra=(assert_slot(g.mg.layout), words))


def exponent_nonnegative(g: Emitter, d, e: str, loc: SourceLoc | None) -> None:
    """Record an integer power's negative exponent (debug mode, as quadrants checks it; the
    power is then 0)."""
    t = ll(d)
    bad = g.fn.ins(f"icmp slt {t} {e}, 0")
    wide = g.fn.ins(f"sext {t} {e} to i64") if d.bits < 64 else e
    fail_if(g, bad, NEG_POW, loc, wide)


DEPTH = "%qd.depth"  # the call depth parameter of a recursive real func's function
FLOOR = "%qd.floor"  # its stack floor parameter (`Target.stack_floor`)


def recursion_depth(g: Emitter, loc: SourceLoc | None, ret: str) -> None:
    """At a recursive function's entry: past `MAX_RECURSION` calls deep, or with its frame below
    the stack floor the first call computed (frames can be large: the depth alone does not keep
    the stack from overflowing), record it and return (`ret`: the function's return of a zero
    value). The record's value is the depth, so the error can say which limit it met."""
    fn = g.fn
    bad = fn.ins(f"icmp ugt i32 {DEPTH}, {MAX_RECURSION}")
    frame = g.mg.target.frame_address(g)
    if frame is not None:
        low = fn.ins(f"icmp ult i64 {frame}, {FLOOR}")
        bad = fn.ins(f"or i1 {bad}, {low}")
    fail_l, cont_l = fn.new_label("deep"), fn.new_label("depthok")
    fn.term(f"br i1 {bad}, label %{fail_l}, label %{cont_l}")
    fn.label(fail_l)
    record(g, RECURSION, loc, fn.ins(f"zext i32 {DEPTH} to i64"))
    fn.term(ret)
    fn.label(cont_l)


def step_nonzero(g: Emitter, step: str, loc: SourceLoc | None) -> None:
    """Record a run-time `range()` step of 0 (the loop then runs no iterations)."""
    bad = g.fn.ins(f"icmp eq i64 {step}, 0")
    fail_if(g, bad, STEP, loc, "0")


def shape_reads(root: ir.Inst, insts: dict[str, ir.Inst]) -> dict[tuple[str, int], SourceLoc | None]:
    """(kernel leaf path, dimension) of every extent the kernel's call tree reads as an i32,
    mapped through call bindings to the kernel's own leaves; value: the first read's location."""
    memo: dict[str, dict] = {}

    def of(inst: ir.Inst) -> dict:
        hit = memo.get(inst.id)
        if hit is not None:
            return hit
        out: dict[tuple[str, int], SourceLoc | None] = {}
        memo[inst.id] = out  # a recursive real func: its own reads, as far as they are known
        for st in ir.walk_stmts(inst.body):
            for x in ir.exprs(st):
                if isinstance(x, ir.Shape):
                    out.setdefault((x.path, x.dim), x.loc)
                elif isinstance(x, ir.CallFunc):
                    bound = {q: a for a, q in x.binds}
                    for (q, dim), loc in of(insts[x.callee]).items():
                        if q in bound:
                            out.setdefault((bound[q], dim), loc)
        memo[inst.id] = out
        return out

    return of(root)


def extent_guard(g: Emitter, reads: dict[tuple[str, int], SourceLoc | None]) -> None:
    """At the start of a launch: refuse it (record, return) if an extent read as i32 is too big."""
    fn = g.fn
    for (path, dim), loc in sorted(reads.items(), key=lambda kv: kv[0]):
        lv = g.leaves.get(path)
        if lv is None:
            continue
        s = lv[1][dim]
        big = fn.ins(f"icmp ugt i64 {s}, {I32_MAX}")
        refuse, ok = fn.new_label("refuse"), fn.new_label("extok")
        fn.term(f"br i1 {big}, label %{refuse}, label %{ok}")
        fn.label(refuse)
        record(g, EXTENT, loc, s)
        fn.term("ret void")
        fn.label(ok)
