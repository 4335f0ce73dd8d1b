"""CUDA code generation, checked without a GPU: `qd.ptx` output assembled by `ptxas`
(skipped where it is absent) and read for the structure the launch protocol relies on
(`qd.targets.cuda.module`): one entry per launch step, grid-stride loops, block reductions,
libdevice math linked only when used, and only kept leaves read from the argument buffer."""

import dataclasses
import re

import numpy as np
import pytest

import qd
from qd.compile.ptx import compile_ptx
from qd.core.errors import QdConfigError
from qd.core.ir import TaskKind
from qd.lang import ops as lang
from qd.targets.cuda import libdevice
from qd.targets.cuda.module import CudaModule
from qd.targets.cuda.target import CudaTarget
from tests._support.ptx import arg_offsets, assert_ptxas_ok, entries

INTS = [qd.i8, qd.i16, qd.i32, qd.i64, qd.u8, qd.u16, qd.u32, qd.u64]
FLOATS = [qd.f32, qd.f64]
ATOMICS = {"add": qd.atomic_add, "sub": qd.atomic_sub, "min": qd.atomic_min, "max": qd.atomic_max,
           "and": qd.atomic_and, "or": qd.atomic_or, "xor": qd.atomic_xor}
UNARY = ["sqrt", "sin", "cos", "tan", "exp", "log", "floor", "ceil", "abs"]


def _atomic_cases():
    for op in ATOMICS:
        for dt in INTS + (FLOATS if op in ("add", "sub", "min", "max") else []):
            yield pytest.param(op, dt, id=f"{op}-{dt.name}")


@pytest.mark.parametrize("op,dt", list(_atomic_cases()))
def test_atomic_every_op_and_type(op, dt):
    """A scattered atomic (target index read from an array, so no block reduction) is an
    atomic instruction of the right width."""
    f = ATOMICS[op]

    @qd.kernel
    def scatter(idx: qd.types.NDArray[qd.i32, 1], x: qd.types.NDArray[dt, 1], out: qd.types.NDArray[dt, 1]):
        for i in range(x.shape[0]):
            f(out[idx[i]], x[i])

    v = compile_ptx(scatter, np.zeros(4, np.int32), np.zeros(4, dt.np), np.zeros(4, dt.np))
    ptx = v.module.ptx
    assert re.search(r"\batom\.", ptx), ptx
    assert "bar.sync" not in ptx
    assert_ptxas_ok(ptx)


@pytest.mark.parametrize("dt", FLOATS, ids=lambda d: d.name)
@pytest.mark.parametrize("name", UNARY + ["pow", "min", "max"])
def test_libdevice_math_every_function(name, dt):
    """Every math function qd exposes compiles for CUDA; float math goes through libdevice
    and never through the LLVM intrinsics NVPTX cannot lower."""
    if name == "pow":
        @qd.kernel
        def maths(x: qd.types.NDArray[dt, 1], out: qd.types.NDArray[dt, 1]):
            for i in range(x.shape[0]):
                out[i] = x[i] ** out[i]
    elif name in ("min", "max"):
        fn = getattr(qd, name)

        @qd.kernel
        def maths(x: qd.types.NDArray[dt, 1], out: qd.types.NDArray[dt, 1]):
            for i in range(x.shape[0]):
                out[i] = fn(x[i], out[i])
    else:
        fn = getattr(qd, name)

        @qd.kernel
        def maths(x: qd.types.NDArray[dt, 1], out: qd.types.NDArray[dt, 1]):
            for i in range(x.shape[0]):
                out[i] = fn(x[i])

    v = compile_ptx(maths, np.ones(4, dt.np), np.ones(4, dt.np))
    text = v.kernel_module.ir_text
    assert not re.search(r"@llvm\.(exp|log|sin|cos|tan|pow|sqrt|floor|ceil|fabs)\.", text)
    sym = libdevice.symbol(name, dt.bits)
    if name not in ("min", "max"):  # float min/max are compare + select (NaN rule)
        assert f"@{sym}(" in text
    assert ".extern" not in v.module.ptx  # libdevice was linked and inlined
    assert_ptxas_ok(v.module.ptx)


def test_libdevice_symbols_cover_qd_math():
    for name in set(lang.MATH.values()):
        assert libdevice.symbol(name, 32).endswith("f") and libdevice.symbol(name, 64).startswith("__nv_")


def test_libdevice_linked_only_when_used(monkeypatch):
    calls = []
    real = libdevice.link
    monkeypatch.setattr(libdevice, "link", lambda llvm, mod, tm: (calls.append(1), real(llvm, mod, tm)))

    @qd.kernel
    def plain(x: qd.types.NDArray[qd.f32, 1]):
        for i in range(x.shape[0]):
            x[i] = x[i] * 2.0 + 1.0

    @qd.kernel
    def mathy(x: qd.types.NDArray[qd.f32, 1]):
        for i in range(x.shape[0]):
            x[i] = qd.exp(x[i])

    a = np.ones(8, np.float32)
    v = compile_ptx(plain, a)
    assert calls == [] and "__nv_" not in v.kernel_module.ir_text and "__nv_" not in v.module.ptx
    compile_ptx(mathy, a)
    assert calls == [1]


def test_libdevice_missing_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(libdevice, "candidates", lambda: [])
    with pytest.raises(QdConfigError, match="nvidia-cuda-nvcc"):
        libdevice.locate()


def test_ndrange_flattens_into_one_grid_stride_loop():
    @qd.kernel
    def fill(out: qd.types.NDArray[qd.i32, 3]):
        for i, j, k in qd.ndrange(out.shape[0], out.shape[1], out.shape[2]):
            out[i, j, k] = i * 100 + j * 10 + k

    v = compile_ptx(fill, np.zeros((2, 3, 4), np.int32))
    assert len(v.module.tasks) == 1 and v.module.tasks[0].parallel
    ptx = v.module.ptx
    for reg in ("%tid.x", "%ctaid.x", "%ntid.x", "%nctaid.x"):
        assert reg in ptx
    assert re.search(r"\b(rem|div)\.u64\b", ptx)  # the flat index split into i, j, k
    assert_ptxas_ok(ptx)


def test_grid_stride_loop_steps_by_the_whole_grid():
    @qd.kernel
    def saxpy(a: qd.f32, x: qd.types.NDArray[qd.f32, 1], y: qd.types.NDArray[qd.f32, 1]):
        for i in range(x.shape[0]):
            y[i] = a * x[i] + y[i]

    v = compile_ptx(saxpy, 2.0, np.ones(4, np.float32), np.ones(4, np.float32))
    ir_text = v.kernel_module.ir_text
    grid = ir_text[ir_text.index("_grid0("):]
    assert "llvm.nvvm.read.ptx.sreg.nctaid.x" in grid and "glatch" in grid
    ptx = v.module.ptx
    assert re.search(r"mul\.wide\.u32\s+%rd\d+, %r\d+, %r\d+;", ptx)  # ctaid * ntid and ntid * nctaid
    assert re.search(r"@%p\d+ bra\s+\$L__BB0_\d+;", ptx)  # the loop's back edge
    assert_ptxas_ok(ptx)


def test_while_break_continue():
    @qd.kernel
    def collatz(x: qd.types.NDArray[qd.i64, 1], out: qd.types.NDArray[qd.i32, 1]):
        for i in range(x.shape[0]):
            v = x[i]
            n = 0
            while True:
                if v == 1:
                    break
                n += 1
                if v % 2 == 0:
                    v = v // 2
                    continue
                v = 3 * v + 1
            out[i] = n

    v = compile_ptx(collatz, np.ones(4, np.int64), np.zeros(4, np.int32))
    assert_ptxas_ok(v.module.ptx)


def test_serial_steps_with_return_values():
    @qd.kernel
    def count(x: qd.types.NDArray[qd.i32, 1], out: qd.types.NDArray[qd.i32, 1]) -> qd.i32:
        n = x.shape[0] * 2
        for i in range(x.shape[0]):
            out[i] = x[i] + n
        if n > 100:
            return n
        for i in range(x.shape[0]):
            out[i] += 1
        return -n

    v = compile_ptx(count, np.zeros(4, np.int32), np.zeros(4, np.int32))
    m = v.module
    kinds = [t.kind is TaskKind.PARALLEL for t in v.inst.tasks]
    assert [t.parallel for t in m.tasks] == kinds == [False, True, False, True, False]
    assert entries(m.ptx) == [t.entry for t in m.tasks]
    assert v.kernel_module.entry == m.tasks[0].entry
    # every entry first checks the frame's "returned" word; the serial steps that return set it
    text = v.kernel_module.ir_text
    flag = f"getelementptr i64, ptr %t\\d+, i64 {m.returned_slot}\n"
    for t in m.tasks:
        body = text[text.index(f"@{t.entry}("):]
        body = body[:body.index("\n}\n")]
        assert re.search(flag, body.split("br i1")[0]), t.entry
    sets = re.findall(r"store i64 1, ptr %t\d+, align 8", text)
    assert len(sets) == 2  # `return n` and `return -n`
    assert_ptxas_ok(m.ptx)


def test_block_reduction_before_one_global_atomic():
    @qd.kernel
    def total(x: qd.types.NDArray[qd.f64, 1], out: qd.types.NDArray[qd.f64, 1]):
        for i in range(x.shape[0]):
            out[0] += x[i]

    v = compile_ptx(total, np.ones(8), np.zeros(1))
    ptx = v.module.ptx
    assert ".shared" in ptx and "bar.sync" in ptx
    assert len(re.findall(r"\batom\.[\w.]*add\.f64", ptx)) == 1  # thread 0 of each block, once
    assert_ptxas_ok(ptx)


def test_block_reduction_of_every_op_and_kernel_scalars():
    @qd.kernel
    def stats(x: qd.types.NDArray[qd.i64, 1], out: qd.types.NDArray[qd.i64, 1]) -> qd.i64:
        n = 0
        for i in range(x.shape[0]):
            out[0] += x[i]
            out[1] -= x[i]
            qd.atomic_max(out[2], x[i])
            qd.atomic_min(out[3], x[i])
            out[4] ^= x[i]
            n += 1
        return n

    v = compile_ptx(stats, np.ones(8, np.int64), np.zeros(5, np.int64))
    ptx = v.module.ptx
    assert ptx.count("bar.sync") >= 6 * 11  # six reductions, each a tree of barriers
    assert_ptxas_ok(ptx)


def test_float_min_max_reductions():
    @qd.kernel
    def extremes(x: qd.types.NDArray[qd.f32, 1], out: qd.types.NDArray[qd.f32, 1]):
        for i in range(x.shape[0]):
            qd.atomic_min(out[0], x[i])
            qd.atomic_max(out[1], x[i])

    v = compile_ptx(extremes, np.ones(8, np.float32), np.zeros(2, np.float32))
    assert "atom" in v.module.ptx and "bar.sync" in v.module.ptx
    assert_ptxas_ok(v.module.ptx)


@dataclasses.dataclass
class State:
    pos: qd.types.NDArray[qd.f32, 1]
    vel: qd.types.NDArray[qd.f32, 1]
    mass: qd.types.NDArray[qd.f32, 2]
    unused: qd.types.NDArray[qd.f32, 3]
    dt: qd.f32
    spare: qd.f64


@qd.kernel
def step(s: State):
    for i in range(s.pos.shape[0]):
        s.pos[i] += s.vel[i] * s.dt


def _state():
    return State(np.zeros(8, np.float32), np.ones(8, np.float32), np.zeros((2, 2), np.float32),
                 np.zeros((1, 1, 1), np.float32), 0.5, 1.0)


def test_pruned_dataclass_reads_only_kept_leaves():
    v = compile_ptx(step, _state())
    assert v.kept == ("s.pos", "s.vel", "s.dt")
    assert set(v.pruned) == {"s.mass", "s.unused", "s.spare"}
    lay = v.kernel_module
    read = {off // 8 for off in arg_offsets(v.module.ptx)}
    assert {0, 1, lay.slots[0].slot, lay.slots[1].slot} <= read  # status, frame, pos, vel
    assert read <= set(range(lay.n_slots))
    kept_slots = {0, 1} | {s.slot for s in lay.slots} | {s.extent_slot(0) for s in lay.slots if s.is_array}
    assert read <= kept_slots
    qd.init(arch=qd.cpu, prune=False)
    full = compile_ptx(step, _state())
    assert full.kernel_module.n_slots > lay.n_slots
    assert max(arg_offsets(full.module.ptx)) // 8 > max(read)
    assert_ptxas_ok(v.module.ptx)
    assert_ptxas_ok(full.module.ptx)


def test_templates_give_distinct_ptx():
    @qd.kernel
    def scale(x: qd.types.NDArray[qd.f32, 1], k: qd.template()):
        for i in range(x.shape[0]):
            if qd.static(k > 1):
                x[i] *= k
            else:
                x[i] = qd.sqrt(x[i])

    a = np.ones(4, np.float32)
    p3, p1 = qd.ptx(scale, a, 3), qd.ptx(scale, a, 1)
    assert "sqrt" in p1 and "sqrt" not in p3
    assert_ptxas_ok(p3)
    assert_ptxas_ok(p1)


def test_parallel_loop_under_runtime_if_runs_in_its_serial_step():
    @qd.kernel
    def maybe(x: qd.types.NDArray[qd.i32, 1], go: qd.i32):
        if go > 0:
            for i in range(x.shape[0]):
                x[i] = i

    v = compile_ptx(maybe, np.zeros(4, np.int32), 1)
    assert len(v.module.tasks) == len(v.inst.tasks)
    assert entries(v.module.ptx) == [t.entry for t in v.module.tasks]
    assert_ptxas_ok(v.module.ptx)


def test_debug_checks_lower():
    qd.init(arch=qd.cpu, debug=True)

    @qd.kernel
    def gather(idx: qd.types.NDArray[qd.i32, 1], x: qd.types.NDArray[qd.f32, 1], out: qd.types.NDArray[qd.f32, 1]):
        for i in range(idx.shape[0]):
            out[i] = x[idx[i]] + x[i]

    v = compile_ptx(gather, np.zeros(4, np.int32), np.zeros(4, np.float32), np.zeros(4, np.float32))
    assert "atom" in v.module.ptx  # the first failing check claims the status block
    assert_ptxas_ok(v.module.ptx)


def test_qd_ptx_names_the_architecture():
    @qd.kernel
    def inc(x: qd.types.NDArray[qd.i32, 1]):
        for i in range(x.shape[0]):
            x[i] += 1

    a = np.zeros(4, np.int32)
    assert ".target sm_90" in qd.ptx(inc, a)
    p80 = qd.ptx(inc, a, sm="sm_80")
    assert ".target sm_80" in p80
    assert_ptxas_ok(p80, "sm_80")
    with pytest.raises(QdConfigError):
        qd.ptx(inc, a, sm="volta")


def test_module_bytes_and_target_without_runtime():
    @qd.kernel
    def inc(x: qd.types.NDArray[qd.i32, 1]) -> qd.i32:
        for i in range(x.shape[0]):
            x[i] += 1
        return 7

    v = compile_ptx(inc, np.zeros(4, np.int32))
    m = v.module
    assert CudaModule.from_bytes(m.to_bytes()) == m
    t = CudaTarget("sm_90")
    assert t.load(m.to_bytes(), m.tasks[0].entry) == m
    with pytest.raises(QdConfigError):
        t.entry_point(m)
    assert t.identity() == ("nvptx64-nvidia-cuda", "sm_90")


@pytest.mark.parametrize("dt", [qd.i8, qd.i32, qd.u64], ids=lambda d: d.name)
def test_bit_counts_assemble(dt):
    @qd.kernel
    def counts(x: qd.types.NDArray[dt, 1], out: qd.types.NDArray[qd.i32, 1]):
        for i in range(x.shape[0]):
            out[i] = qd.math.popcnt(x[i]) + qd.math.clz(x[i]) * 3 + qd.math.ffs(x[i]) * 7

    ptx = compile_ptx(counts, np.zeros(4, dt.np), np.zeros(4, np.int32)).module.ptx
    assert "popc" in ptx and "clz" in ptx
    assert_ptxas_ok(ptx)


def test_fns_assembles():
    @qd.kernel
    def scan(m: qd.types.NDArray[qd.u32, 1], out: qd.types.NDArray[qd.u32, 1]):
        for i in range(m.shape[0]):
            out[i] = qd.math.fns(m[i], qd.u32(i), i - 2)

    ptx = compile_ptx(scan, np.zeros(4, np.uint32), np.zeros(4, np.uint32)).module.ptx
    assert "shr.u32" in ptx
    assert_ptxas_ok(ptx)


def test_recursive_real_funcs_assemble():
    @qd.real_func
    def fib(n: qd.i32) -> qd.i32:
        r = n
        if n >= 2:
            r = fib(n - 1) + fib(n - 2)
        return r

    @qd.kernel
    def fibs(out: qd.types.NDArray[qd.i32, 1]):
        for i in range(out.shape[0]):
            out[i] = fib(i)

    ptx = compile_ptx(fibs, np.zeros(4, np.int32)).module.ptx
    assert ptx.count("call.uni") + ptx.count("call ") >= 2  # fib calls itself: a real call, not inlined
    assert_ptxas_ok(ptx)


def test_data_oriented_and_struct_field_kernels_assemble():
    """A kernel method of a data-oriented object (its member arrays are leaves) and a kernel
    over a struct field lower to PTX that `ptxas` accepts; only the used members are read."""

    @qd.data_oriented
    class Body:
        def __init__(self):
            self.x = qd.ndarray(qd.f32, (8,))
            self.v = qd.ndarray(qd.f32, (8,))
            self.unused = qd.ndarray(qd.f32, (8,))

        @qd.kernel
        def step(self, dt: qd.f32):
            for i in range(self.x.shape[0]):
                self.x[i] += self.v[i] * dt

    s = qd.Struct.field({"a": qd.f32, "b": qd.math.vec3}, shape=(8,))

    @qd.kernel
    def over_struct_field():
        for i in s:
            s[i].b[1] = s[i].a * 2

    body = Body()
    assert_ptxas_ok(qd.ptx(body.step, 0.5))  # the bound method, as a launch calls it
    v = compile_ptx(Body.step, body, 0.5)
    assert v.kept == ("self.v", "self.x", "dt") and v.pruned == ("self.unused",)
    assert_ptxas_ok(qd.ptx(over_struct_field))
