"""Generated launchers and dispatchers never confuse a user's parameter with their own names.

The internal names are not listed here: they are read from the generated source of probe
kernels that reach every branch of both generators (arrays, two- and many-array alias checks,
int/float/bool scalars, nested dataclasses, Final members, templates, open-dtype arrays,
keyword-only parameters and defaults, every kind of return value). Kernels whose parameters
and dataclass members carry each of those names, in every role, must then compute what numpy
computes. A new internal name is covered as soon as a generator emits it.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib.util
import typing

import numpy as np
import pytest

import qd
from qd.runtime.launcher import make_launcher
from qd_analysis.records import replace


@dataclasses.dataclass
class Leafy:
    a: qd.types.NDArray[qd.f64, 1]
    c: qd.f64


@dataclasses.dataclass
class Nest:
    inner: Leafy
    n: qd.i32
    fin: typing.Final[int]


@qd.kernel
def probe_many(x: qd.types.NDArray[qd.f64, 1], y: qd.types.ndarray(), n: qd.i32, s: qd.f64, nest: Nest,
               t: qd.template(), d: qd.i64 = 2, *, kw: qd.f64, kd: qd.u8 = 1):
    for i in range(x.shape[0]):
        x[i] = y[i] * s + n + nest.inner.a[i] * nest.inner.c + nest.n + nest.fin + t + d + kw + kd


@qd.kernel
def probe_pair(x: qd.types.NDArray[qd.f32, 1], y: qd.types.NDArray[qd.f32, 1]):
    for i in range(x.shape[0]):
        y[i] += x[i]


@qd.kernel
def probe_returns(n: qd.i32, u: qd.u64, f: qd.f32, b: qd.u1) -> tuple[qd.i32, qd.u64, qd.f32, qd.u1]:
    return n, u, f, b


def dispatcher_source(kernel) -> str:
    """Source of the kernel's dispatcher ("" when calls go straight to one launcher)."""
    fast = kernel._fast
    if fast is None or any(fast is v.launch for v in kernel.variants.values()):
        return ""
    return getattr(fast, "__qd_source__", "")


def generated_sources(kernel) -> list[str]:
    """Source of every launcher the kernel has compiled, and of its dispatcher."""
    return [v.launch.__qd_source__ for v in kernel.variants.values()] + [dispatcher_source(kernel)]


def names_in(src: str) -> set[str]:
    tree = ast.parse(src)
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.FunctionDef):
            names.add(node.name)
    return names


def internal_names_of(kernel) -> tuple[set[str], set[str]]:
    """(names in its launchers, names in its dispatcher) that are not its parameters."""
    params = set(kernel.signature.parameters)
    launchers = set().union(*(names_in(v.launch.__qd_source__) for v in kernel.variants.values()))
    dispatcher = names_in(dispatcher_source(kernel))
    return launchers - params, dispatcher - params


def probe_internal_names() -> tuple[set[str], set[str]]:
    x = np.zeros(4)
    nest = Nest(Leafy(np.ones(4), 2.0), 3, 4)
    probe_many(x, np.arange(4.0), 1, 1.0, nest, 5, kw=0.5)
    probe_many(x, np.arange(4.0), 1, 1.0, nest, 5, 3, kw=0.5, kd=2)
    probe_many(x, np.zeros(4, np.float32), 1, 1.0, nest, 6, kw=0.5)  # a second variant
    probe_pair(np.ones(4, np.float32), np.zeros(4, np.float32))
    probe_returns(1, 2, 3.0, True)
    launchers, dispatchers = set(), set()
    for k in (probe_many, probe_pair, probe_returns):
        a, b = internal_names_of(k)
        launchers |= a
        dispatchers |= b
    return launchers, dispatchers


def test_probes_reach_both_generators():
    launchers, dispatchers = probe_internal_names()
    assert len(launchers) >= 10 and len(dispatchers) >= 3, (launchers, dispatchers)
    x = np.zeros(4)
    probe_many(x, np.arange(4.0), 1, 1.0, Nest(Leafy(np.ones(4), 2.0), 3, 4), 5, kw=0.5)
    np.testing.assert_allclose(x, np.arange(4.0) + 1 + 2 + 3 + 4 + 5 + 2 + 0.5 + 1)


MODULE = '''
import dataclasses
import typing

import qd


@dataclasses.dataclass
class Inner:
    {m_arr}: qd.types.NDArray[qd.f64, 1]
    {m_scal}: qd.f64


@dataclasses.dataclass
class Outer:
    {m_inner}: Inner
    {m_int}: qd.i32
    {m_final}: typing.Final[int]


@qd.kernel
def main({a}: qd.types.NDArray[qd.f64, 1], {b}: qd.types.ndarray(), {i}: qd.i32, {f}: qd.f64, {s}: Outer,
         {t}: qd.template(), {d}: qd.i64 = 7, *, {kf}: qd.f64, {ka}: qd.types.NDArray[qd.f64, 1],
         {kd}: qd.i32 = 3):
    for {j} in range({a}.shape[0]):
        {a}[{j}] = ({b}[{j}] * {f} + {i} + {s}.{m_inner}.{m_arr}[{j}] * {s}.{m_inner}.{m_scal} + {s}.{m_int}
                    + {s}.{m_final} + {t} + {d} + {kf} * {ka}[{j}] + {kd})


@qd.kernel
def ret({ri}: qd.i32, /, {ru}: qd.u64, {rf}: qd.f32, *, {rb}: qd.u1 = True) -> tuple[qd.i32, qd.u64, qd.f32, qd.u1]:
    return {ri} * 2, {ru}, {rf} * 2.0, {rb}
'''

ROLES = ["a", "b", "i", "f", "s", "t", "d", "kf", "ka", "kd",  # parameters of main
         "m_arr", "m_scal", "m_inner", "m_int", "m_final",  # dataclass members
         "ri", "ru", "rf", "rb"]  # parameters of ret
MAIN_PARAMS = ROLES[:10]
RET_PARAMS = ROLES[15:]


def build(tmp_path, index: int, roles: dict[str, str]):
    src = MODULE.format(**roles)
    path = tmp_path / f"hygiene_{index}.py"
    path.write_text(src, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(f"hygiene_{index}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def check_main(mod, r: dict[str, str]) -> None:
    n = 8
    b = np.arange(n, dtype=np.float64)
    m_arr = np.arange(n, dtype=np.float64) * 10
    ka = np.arange(n, dtype=np.float64) * 3
    s = mod.Outer(mod.Inner(**{r["m_arr"]: m_arr, r["m_scal"]: 0.25}), **{r["m_int"]: 100, r["m_final"]: 1000})
    a1 = np.zeros(n)
    mod.main(a1, b, 3, 0.5, s, 20000, **{r["kf"]: 0.125, r["ka"]: ka})  # compiles, defaults
    a2 = np.zeros(n)
    mod.main(a2, b, 3, 0.5, s, 20000, 5, **{r["kf"]: 0.125, r["ka"]: ka, r["kd"]: 4})  # dispatcher
    a3 = np.zeros(n)
    mod.main(a3, b, **{r["i"]: -9, r["f"]: 2.0, r["s"]: s, r["t"]: 20000, r["kf"]: 1.0, r["ka"]: ka})  # keywords
    base = m_arr * 0.25 + 100 + 1000 + 20000
    np.testing.assert_allclose(a1, b * 0.5 + 3 + base + 7 + 0.125 * ka + 3)
    np.testing.assert_allclose(a2, b * 0.5 + 3 + base + 5 + 0.125 * ka + 4)
    np.testing.assert_allclose(a3, b * 2.0 - 9 + base + 7 + 1.0 * ka + 3)


def check_ret(mod, r: dict[str, str]) -> None:
    got = mod.ret(-21, 2**63 + 5, 1.5)
    assert got == (-42, 2**63 + 5, 3.0, True)
    got = mod.ret(7, **{r["ru"]: 2**64 - 1, r["rf"]: -0.25, r["rb"]: False})
    assert got == (14, 2**64 - 1, -0.5, False)


def no_parameter_is_assigned(kernel) -> list[str]:
    """Generated code may read a parameter, never store into one."""
    params = set(kernel.signature.parameters)
    bad = []
    for src in generated_sources(kernel):
        for node in ast.walk(ast.parse(src)):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id in params:
                bad.append(node.id)
    return bad


def test_every_internal_name_in_every_role(tmp_path):
    launchers, dispatchers = probe_internal_names()
    names = sorted(launchers | dispatchers)
    fillers = [f"plain{i}" for i in range(len(ROLES))]
    pool = names + [f for f in fillers if f not in names][: max(0, len(ROLES) - len(names))]
    failures = []
    for x in range(len(pool)):
        roles = {role: pool[(x + q) % len(pool)] for q, role in enumerate(ROLES)}
        roles["j"] = "loop_index"
        try:
            mod = build(tmp_path, x, roles)
            check_main(mod, roles)
            check_ret(mod, roles)
            assigned = no_parameter_is_assigned(mod.main) + no_parameter_is_assigned(mod.ret)
            assert not assigned, f"generated code assigns parameters {assigned}"
        except Exception as e:  # collect all: each failing role assignment is reported
            failures.append(f"{roles}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
    assert not failures, "\n".join(failures)


# -- text from outside the process never becomes code -----------------------------------------

@qd.kernel
def scaled(x: qd.types.NDArray[qd.f64, 1], c: qd.f64):
    for i in range(x.shape[0]):
        x[i] = x[i] * c


def compiled_scaled():
    x = np.ones(3)
    scaled(x, 2.0)
    (variant,) = scaled.variants.values()
    return variant


@pytest.mark.parametrize("path", ["c; import os", "c.real()", "x[0]", "c .imag", "os.c", "c.", "", "c.for",
                                  "c\nimport os", 7])
def test_leaf_path_that_is_not_an_identifier_chain_is_rejected(path):
    variant = compiled_scaled()
    km = variant.module
    slots = [replace(s, path=path) if s.path == "c" else s for s in km.slots]
    with pytest.raises(qd.QdInternalError) as info:
        make_launcher(scaled, replace(km, slots=slots), 0, set(), None, variant.info)
    assert "leaf path" in str(info.value)


@pytest.mark.parametrize("field,value", [("slot", "3] = 0; import os #"), ("slot", 0), ("slot", 1), ("slot", 99),
                                         ("slot", 2.0), ("ndim", "1); import os #"), ("ndim", -1)])
def test_slot_numbers_must_be_small_ints(field, value):
    variant = compiled_scaled()
    km = variant.module
    slots = [replace(s, **{field: value}) if s.kind == "array" else s for s in km.slots]
    with pytest.raises(qd.QdInternalError):
        make_launcher(scaled, replace(km, slots=slots), 0, set(), None, variant.info)
    x = np.ones(2)
    scaled(x, 3.0)  # the real launcher is unaffected
    np.testing.assert_array_equal(x, [3.0, 3.0])


# A forged disk entry whose leaf path is Python code: tests/cache/test_fastcache_trust.py
# (test_header_text_never_reaches_generated_code) checks it is rebuilt and never runs.


@dataclasses.dataclass(frozen=True)
class _AB:
    b: qd.f32


def test_leaf_paths_that_differ_only_in_punctuation_get_distinct_llvm_names():
    """`a.b` (a member), `a_b` (a parameter), `v[0]` (a vector component) and `v_0_` must stay
    four parameters in the generated functions, not one name defined twice."""

    @qd.func
    def f(a: _AB, a_b: qd.f32, v: qd.math.vec2, v_0_: qd.f32) -> qd.f32:
        return a.b * 10 + a_b + v[0] * 100 + v_0_ * 1000

    @qd.kernel
    def k(a: _AB, a_b: qd.f32, v: qd.math.vec2, v_0_: qd.f32) -> qd.f32:
        return f(a, a_b, v, v_0_)

    assert k(_AB(1.0), 2.0, [3.0, 4.0], 5.0) == 10 + 2 + 300 + 5000
