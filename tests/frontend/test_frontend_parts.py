"""The frontend's parts on their own: ids, typing rules, the builtin table, a kernel's steps."""

import builtins
import math

import numpy as np
import pytest

import qd
from qd.compile import compile_path
from qd.core import dtypes, ir
from qd.core import typing_rules as rules
from qd.frontend import builtin_calls, ids
from qd.lang import ops as lang


def test_ids_round_trip():
    i = ids.inst_id("mod.<locals>.f", ("ctx", 1))
    assert i.startswith("mod.<locals>.f#") and ids.inst_name(i) == "mod.<locals>.f"
    s = ids.site_id("k", 12, 4, ("binds",))
    assert ids.site_position(s) == (12, 4)
    assert ids.site_position(ids.dead_site_id(i, 7, 0, 3)) == (7, 0)
    assert ids.site_position(i) is None
    assert ids.inst_id("f", (1,)) == ids.inst_id("f", (1,)) != ids.inst_id("f", (2,))


def test_typing_rules_are_pure():
    i32, f32, f64, u1 = dtypes.i32, dtypes.f32, dtypes.f64, dtypes.u1
    assert rules.binary_types("lt", f32, i32, f32) == ("lt", f32, u1)
    assert rules.binary_types("truediv", i32, i32, f64) == ("truediv", f64, f64)
    assert rules.binary_types("pow", u1, i32, f32) == ("ipow", i32, i32)
    assert rules.binary_types("pow", f32, i32, f32) == ("pow", f32, f32)
    assert rules.binary_types("and", u1, i32, f32) == ("and", u1, u1)
    assert rules.binary_types("shl", u1, i32, f32) == ("shl", i32, i32)
    with pytest.raises(qd.QdTypeError) as e:
        rules.binary_types("xor", f32, i32, f32)
    assert e.value.loc is None  # the lowering locates it
    assert rules.weak_literal(3, dtypes.i8, i32, f32) == (i32, 3)
    assert rules.weak_literal(3, dtypes.i8, i32, f32, "shl") == (dtypes.i8, 3)
    assert rules.weak_literal(0.5, f32, i32, f64) == (f64, 0.5)
    assert rules.weak_literal(1000, dtypes.i8, i32, f32) == (i32, 1000)
    assert rules.weak_literal(1.5, i32, i32, f64) == (f64, 1.5)
    assert rules.literal(2 ** 40, i32, f32) == (dtypes.i64, 2 ** 40)
    assert rules.unary_type("invert", u1, i32) == ("not", u1, u1)
    assert rules.math_type("abs", dtypes.u8, f32) is None
    assert rules.math_type("sqrt", i32, f64) == f64
    assert rules.cast_constant(1000, dtypes.i8) == np.int8(-24)


def test_every_builtin_has_one_entry():
    for f in [*lang.ATOMICS, *lang.MATH, *dtypes.ALL, lang.static, lang.cast, lang.ndrange,
              builtins.range, builtins.len, builtins.print, builtins.int, builtins.abs, math.pow]:
        assert builtin_calls.lookup(f) is not None, f
    assert builtin_calls.lookup(np.linspace) is None
    assert builtin_calls.lookup(lang.static).raw


def test_kernel_steps_in_order():
    @qd.func
    def fill(a: qd.types.NDArray[qd.f32, 1]):
        for i in range(a.shape[0]):
            a[i] = 1.0

    @qd.kernel
    def k(a: qd.types.NDArray[qd.f32, 1], flag: qd.template()):
        a[0] = 5.0
        for i in range(a.shape[0]):
            a[i] += 1.0
        if qd.static(flag):
            a[1] = 2.0
            for i in range(a.shape[0]):
                a[i] += 1.0
        fill(a)
        a[2] = 3.0

    a = np.zeros(4, np.float32)
    k(a, True)
    inst = compile_path.registry().insts[qd.launch_info(k).inst_id]
    kinds = [(t.index, t.kind.value, len(t.stmts)) for t in inst.tasks]
    assert kinds == [(0, "serial", 1), (1, "parallel", 1), (2, "serial", 1), (3, "parallel", 1),
                     (4, "parallel", 1), (5, "serial", 1)]
    loops = [t.loop for t in inst.tasks if t.kind is ir.TaskKind.PARALLEL]
    assert [lp.task for lp in loops] == [0, 1, 2]
    assert loops == [st for st in ir.walk_stmts(inst.body) if isinstance(st, ir.For) and st.task >= 0]
    assert all(t.loop is None for t in inst.tasks if t.kind is ir.TaskKind.SERIAL)
