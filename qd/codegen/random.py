"""`qd.random`'s generator: a counter-based stream per loop iteration, so parallel loops need
no shared state and a seed gives the same values in every process.

quadrants keeps one generator state per hardware thread; which values an iteration gets there
depends on how iterations are spread over threads. qd instead derives every value from a key:

- the variant's key, a constant of the code: a hash of the seed (`qd.init(random_seed=...)`) and
  of the module's own text (`keyed`), so every variant has streams of its own (another template
  value, dtype or closure value is other code) while a seed still gives the same values in every
  process, and a variant loaded from the disk cache the values it gave when it was compiled;
- the launch number `n`, a frame word (`ModuleGen.rng_slot`): a target whose entry function
  runs once per launch counts launches in a module global (`number_launch`, the CPU); the CUDA
  host writes its own count there before the steps run;
- the function's stream number, unique in the module (the entry, each task body, each CUDA
  step), and the iteration index of a parallel loop, reseeded at each iteration (`reseed`).

A function's state is one i64 (SplitMix64: each draw adds the golden gamma and returns the
state's hash), in an alloca of the entry or task function; funcs get its address as a hidden
`ptr` parameter after the status block (`FUNC_PARAM`), so a func called twice continues the
caller's stream instead of repeating it. A module without `qd.random` has none of this.
"""

from __future__ import annotations

import hashlib

from ..core import dtypes as _dt
from ..core import ir
from ..core.errors import QdInternalError
from .llvm_text import Fn, const

FUNC_PARAM = "%qd.rng"  # the state's address in a func
# The variant's key in the module text until `keyed` writes its value there. `$` is escaped in
# every string constant and in no symbol but a module's provisional name, so this occurs nowhere
# else, and it is gone before the text is named after its contents.
KEY = "qd$rng.key$"
GAMMA = 0x9E3779B97F4A7C15  # SplitMix64's increment (the golden ratio)
_M1, _M2 = 0xBF58476D1CE4E5B9, 0x94D049BB133111EB
_LAUNCH, _STREAM, _INDEX = 0xD1B54A32D192ED03, 0xABC98388FB8FAC03, 0x8CB92BA72F3D8DD7
_U64 = (1 << 64) - 1
DTYPES = (_dt.f32, _dt.f64, _dt.i32, _dt.u32, _dt.i64, _dt.u64)  # what quadrants' runtime draws


def _s64(x: int) -> int:
    """`x` mod 2**64 as LLVM's signed i64 literal."""
    x &= _U64
    return x - (1 << 64) if x >> 63 else x


def _mix_py(z: int) -> int:
    z = ((z ^ (z >> 30)) * _M1) & _U64
    z = ((z ^ (z >> 27)) * _M2) & _U64
    return z ^ (z >> 31)


def keyed(text: str, seed: int) -> str:
    """The module text `text` with its variant key written in: the seed mixed with a digest of
    the text itself. Keying on the code rather than on the kernel's name separates the streams of
    variants of one kernel (quadrants' per-thread generators give those uncorrelated values) and
    of kernels one factory makes, and it depends on nothing of the process."""
    digest = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
    return text.replace(KEY, str(_s64(_mix_py(_mix_py(seed & _U64) ^ digest))))


def uses_random(kernel: ir.Inst, insts: dict[str, ir.Inst]) -> bool:
    """Whether the kernel or a func it reaches draws a random value."""
    for inst in ir.reachable(kernel, insts):
        for st in ir.walk_stmts(inst.body):
            if any(isinstance(x, ir.Random) for x in ir.exprs(st)):
                return True
    return False


def _mix(fn: Fn, z: str) -> str:
    """SplitMix64's finaliser of the i64 value `z` (a bijection that scatters every input bit)."""
    for shift, mul in ((30, _M1), (27, _M2)):
        high = fn.ins(f"lshr i64 {z}, {shift}")
        z = fn.ins(f"mul i64 {fn.ins(f'xor i64 {z}, {high}')}, {_s64(mul)}")
    high = fn.ins(f"lshr i64 {z}, 31")
    return fn.ins(f"xor i64 {z}, {high}")


def number_launch(g) -> None:
    """In an entry function that runs once per launch: this launch's number (0, 1, ... per
    loaded variant) into the frame word the streams are keyed on."""
    mg = g.mg
    mg.declare("@qd.rng.launches = internal global i64 0")
    n = g.fn.ins("atomicrmw add ptr @qd.rng.launches, i64 1 monotonic")
    g.fn.op(f"store i64 {n}, ptr {g.frame_slot(mg.rng_slot)}")


def start(g) -> None:
    """Give the entry, step or task function `g` is writing its state, keyed on the variant's
    key, the launch number and a stream number of its own (iteration 0 until `reseed`)."""
    mg = g.mg
    fn = g.fn
    stream = mg.rng_streams
    mg.rng_streams += 1
    n = fn.ins(f"load i64, ptr {g.frame_slot(mg.rng_slot)}")
    scaled = fn.ins(f"mul i64 {n}, {_s64(_LAUNCH)}")
    keyed_n = fn.ins(f"add i64 {scaled}, {KEY}")
    g.rng_base = fn.ins(f"add i64 {keyed_n}, {_s64(stream * _STREAM)}")
    g.rng = fn.alloca("i64")
    reseed(g, "0")


def reseed(g, index: str) -> None:
    """Start the stream of iteration `index` (an i64 value) of the function's parallel loop."""
    fn = g.fn
    x = g.rng_base
    if index != "0":
        step = fn.ins(f"mul i64 {index}, {_s64(_INDEX)}")
        x = fn.ins(f"add i64 {x}, {step}")
    fn.op(f"store i64 {_mix(fn, x)}, ptr {g.rng}")


def draw(g, e: ir.Random) -> str:
    """The next value of the stream as `e.dtype`: a float from the top 24 (f32) or 53 (f64)
    bits times 2**-24 / 2**-53, so exactly representable and below 1; an integer the low bits."""
    if g.rng is None:
        raise QdInternalError("codegen: qd.random in a function without a random state")
    fn = g.fn
    old = fn.ins(f"load i64, ptr {g.rng}")
    s = fn.ins(f"add i64 {old}, {_s64(GAMMA)}")
    fn.op(f"store i64 {s}, ptr {g.rng}")
    z = _mix(fn, s)
    d = e.dtype
    if d.is_float:
        bits = 24 if d.bits == 32 else 53
        t = "float" if d.bits == 32 else "double"
        top = fn.ins(f"lshr i64 {z}, {64 - bits}")
        f = fn.ins(f"uitofp i64 {top} to {t}")
        return fn.ins(f"fmul {t} {f}, {const(d, 2.0 ** -bits)}")
    return z if d.bits == 64 else fn.ins(f"trunc i64 {z} to i32")
