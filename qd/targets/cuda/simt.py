"""`qd.simt` on CUDA: each operation as the NVVM intrinsics that CUDA's own intrinsics
(`__syncthreads`, `__shfl_down_sync`, `__ballot_sync`, ...) become, and shared arrays as
`addrspace(3)` globals of the module.

A thread's index in its block is `tid.x` and its lane `laneid`, the warp is 32 lanes. Votes
take i1 predicates (an argument is true when non-zero) and give i32 0 or 1; shuffles move 32
bits, so a 64-bit value moves as its two halves. A predicate-less `subgroup` operation works on
the whole warp (mask 0xffffffff), as quadrants lowers it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...codegen.emitter import ident
from ...codegen.llvm_text import ll, mem
from ...core.errors import QdInternalError

if TYPE_CHECKING:
    from ...codegen.emitter import Emitter
    from ...core import ir

__all__ = ["lower", "shared_array", "sreg", "barrier"]

FULL = "-1"  # every lane of the warp (0xffffffff)


def sreg(g: Emitter, reg: str) -> str:
    """A special register (`tid.x`, `ntid.x`, `laneid`, ...) as an i32."""
    f = g.mg.intrinsic(f"llvm.nvvm.read.ptx.sreg.{reg}", "i32", [])
    return g.fn.ins(f"call i32 {f}()")


def barrier(g: Emitter) -> None:
    """`__syncthreads()`."""
    f = g.mg.intrinsic("llvm.nvvm.barrier0", "void", [])
    g.fn.op(f"call void {f}()")


def _void(g: Emitter, name: str, args: list[str]) -> str:
    f = g.mg.intrinsic(name, "void", [a.split()[0] for a in args])
    g.fn.op(f"call void {f}({', '.join(args)})")
    return "0"


def _call(g: Emitter, name: str, ret: str, args: list[str]) -> str:
    f = g.mg.intrinsic(name, ret, [a.split()[0] for a in args])
    return g.fn.ins(f"call {ret} {f}({', '.join(args)})")


def _truth(g: Emitter, v: str) -> str:
    return g.fn.ins(f"icmp ne i32 {v}, 0")


def _as_i32(g: Emitter, bit: str) -> str:
    return g.fn.ins(f"zext i1 {bit} to i32")


def _shuffle(g: Emitter, mode: str, dtype, value: str, lane: str, mask: str = FULL) -> str:
    """`shfl.sync.<mode>` of a 32- or 64-bit value (`mode` idx, up, down or bfly)."""
    fn = g.fn
    clamp = "0" if mode == "up" else "31"
    t = ll(dtype)
    if dtype.bits == 32:
        kind = "f32" if dtype.is_float else "i32"
        return _call(g, f"llvm.nvvm.shfl.sync.{mode}.{kind}", "float" if dtype.is_float else "i32",
                     [f"i32 {mask}", f"{'float' if dtype.is_float else 'i32'} {value}", f"i32 {lane}", f"i32 {clamp}"])
    bits = fn.ins(f"bitcast {t} {value} to i64") if dtype.is_float else value
    lo = fn.ins(f"trunc i64 {bits} to i32")
    hi = fn.ins(f"trunc i64 {fn.ins(f'lshr i64 {bits}, 32')} to i32")
    name = f"llvm.nvvm.shfl.sync.{mode}.i32"
    lo = _call(g, name, "i32", [f"i32 {mask}", f"i32 {lo}", f"i32 {lane}", f"i32 {clamp}"])
    hi = _call(g, name, "i32", [f"i32 {mask}", f"i32 {hi}", f"i32 {lane}", f"i32 {clamp}"])
    low = fn.ins(f"zext i32 {lo} to i64")
    high = fn.ins(f"shl i64 {fn.ins(f'zext i32 {hi} to i64')}, 32")
    wide = fn.ins(f"or i64 {low}, {high}")
    return fn.ins(f"bitcast i64 {wide} to {t}") if dtype.is_float else wide


def lower(g: Emitter, e: ir.Simt) -> str:
    """The value of `e` ("0" for a void operation)."""
    a = [g.expr(x) for x in e.args]
    op = e.op
    fn = g.fn
    if op == "block.sync":
        barrier(g)
        return "0"
    if op in ("block.sync_all_nonzero", "block.sync_any_nonzero", "block.sync_count_nonzero"):
        red = {"all": "and", "any": "or", "count": "popc"}[op.split("_")[1]]
        return _call(g, f"llvm.nvvm.barrier0.{red}", "i32", [f"i32 {a[0]}"])
    if op in ("block.mem_fence", "subgroup.mem_fence"):  # `__threadfence_block()`
        return _void(g, "llvm.nvvm.membar.cta", [])
    if op == "grid.mem_fence":  # `__threadfence()`
        return _void(g, "llvm.nvvm.membar.gl", [])
    if op == "block.thread_idx":
        return sreg(g, "tid.x")
    if op == "block.global_thread_idx":
        block = fn.ins(f"mul i32 {sreg(g, 'ctaid.x')}, {sreg(g, 'ntid.x')}")
        return fn.ins(f"add i32 {block}, {sreg(g, 'tid.x')}")
    if op in ("warp.all_nonzero", "warp.any_nonzero", "warp.unique"):
        vote = {"all_nonzero": "all", "any_nonzero": "any", "unique": "uni"}[op.split(".")[1]]
        return _as_i32(g, _call(g, f"llvm.nvvm.vote.{vote}.sync", "i1", [f"i32 {a[0]}", f"i1 {_truth(g, a[1])}"]))
    if op == "warp.ballot":
        return _call(g, "llvm.nvvm.vote.ballot.sync", "i32", [f"i32 {FULL}", f"i1 {_truth(g, a[0])}"])
    if op.startswith("warp.shfl_"):
        mode = {"sync": "idx", "up": "up", "down": "down", "xor": "bfly"}[op.split("_")[1]]
        return _shuffle(g, mode, e.dtype, a[1], a[2], a[0])
    if op == "warp.match_any":
        return _call(g, "llvm.nvvm.match.any.sync.i32", "i32", [f"i32 {a[0]}", f"i32 {a[1]}"])
    if op == "warp.match_all":
        pair = _call(g, "llvm.nvvm.match.all.sync.i32p", "{ i32, i1 }", [f"i32 {a[0]}", f"i32 {a[1]}"])
        return fn.ins(f"extractvalue {{ i32, i1 }} {pair}, 0")
    if op == "warp.active_mask":
        return _call(g, "llvm.nvvm.activemask", "i32", [])
    if op == "warp.sync":
        return _void(g, "llvm.nvvm.bar.warp.sync", [f"i32 {a[0]}"])
    if op == "subgroup.sync":  # `__syncwarp()`
        return _void(g, "llvm.nvvm.bar.warp.sync", [f"i32 {FULL}"])
    if op == "subgroup.invocation_id":
        return sreg(g, "laneid")
    if op in ("subgroup.shuffle", "subgroup.broadcast"):
        return _shuffle(g, "idx", e.dtype, a[0], a[1])
    if op in ("subgroup.shuffle_xor", "subgroup.shuffle_up", "subgroup.shuffle_down"):
        mode = {"xor": "bfly", "up": "up", "down": "down"}[op.rpartition("_")[2]]
        return _shuffle(g, mode, e.dtype, a[0], a[1])
    if op == "subgroup.ballot":
        word = _call(g, "llvm.nvvm.vote.ballot.sync", "i32", [f"i32 {FULL}", f"i1 {_truth(g, a[0])}"])
        return fn.ins(f"zext i32 {word} to i64")
    raise QdInternalError(f"codegen: qd.simt.{op} has no CUDA lowering")


def shared_array(g: Emitter, st: ir.SharedAlloc) -> str:
    """A global of the module in shared memory (`addrspace(3)`), one per array made, seen as a
    generic pointer so that loads and stores are those of any array."""
    count = 1
    for n in st.shape:
        count *= n
    tag = ident(f"{g.inst.id}{st.leaf.path}")  # one-to-one and ASCII: `a.b` and `a_b`, `größe` are arrays of their own
    name = f"@{g.mg.name}_sh_{tag}"
    g.mg.declare(f"{name} = internal addrspace(3) global [{count} x {mem(st.leaf.dtype)}] undef, align 16")
    return g.fn.ins(f"addrspacecast ptr addrspace(3) {name} to ptr")
