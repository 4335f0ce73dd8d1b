"""quadrants' purity rule for disk-cached kernels: a number, string or field reached by a global
or closure name (not a parameter) is an error, a warning for UPPERCASE names and inside
`qd.static`; parameters, enums, math/numpy/qd constants and non-pure kernels are unaffected."""

import enum
import math
import warnings

import numpy as np
import pytest

import qd

HERE = __file__

count = 3
LIMIT = 4
label = "abc"
field = qd.field(qd.i32, shape=(8,))


class Cfg:
    SIZE = 32

    def __init__(self):
        self.flag = True
        self.n = 5


cfg = Cfg()


class Mode(enum.IntEnum):
    FAST = 2


def _violations(record) -> list[str]:
    return [str(w.message) for w in record if "[PURE.VIOLATION]" in str(w.message)]


def _run(k, *args):
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        value = k(*args)
    return value, _violations(record)


def test_a_lowercase_global_number_string_or_field_is_an_error_at_its_read():
    @qd.kernel(fastcache=True)
    def reads_count() -> qd.i32:
        return count + 1

    @qd.kernel(fastcache=True)
    def reads_label() -> qd.i32:
        return label == "abc"

    @qd.kernel(fastcache=True)
    def reads_field() -> qd.i32:
        return field[0]

    for k, name in ((reads_count, "count"), (reads_label, "label"), (reads_field, "field")):
        with pytest.raises(qd.QdCompileError, match=r"\[PURE\.VIOLATION\].*global variable " + name) as e:
            k()
        assert e.value.loc is not None and e.value.loc.file == HERE
    with pytest.raises(qd.QdCompileError) as e:
        reads_count()
    assert e.value.loc.line == reads_count.fn.__code__.co_firstlineno + 2


def test_a_closure_variable_and_an_attribute_chain_are_errors():
    step = 7

    @qd.kernel(fastcache=True)
    def closure() -> qd.i32:
        return step

    @qd.kernel(fastcache=True)
    def attribute() -> qd.i32:
        return cfg.n

    with pytest.raises(qd.QdCompileError, match="global variable step"):
        closure()
    with pytest.raises(qd.QdCompileError, match="global var n from outside function scope"):
        attribute()


def test_uppercase_names_and_static_scopes_warn_and_compute():
    @qd.kernel(fastcache=True)
    def upper() -> qd.i32:
        return LIMIT + cfg.SIZE

    @qd.kernel(fastcache=True)
    def static() -> qd.i32:
        r = 0
        if qd.static(cfg.flag and count == 3):
            r = 10
        return r

    value, warned = _run(upper)
    assert value == 36 and len(warned) == 2 and "LIMIT" in warned[0] and "SIZE" in warned[1]
    value, warned = _run(static)
    assert value == 10 and len(warned) == 2


def test_parameters_enums_and_library_constants_are_allowed():
    @qd.kernel(fastcache=True)
    def allowed(x: qd.template(), n: qd.i32) -> qd.f32:
        return x[0] + n + Mode.FAST + qd.math.pi + np.pi + math.pi

    @qd.data_oriented
    class Sim:
        def __init__(self):
            self.b = qd.field(qd.i32, shape=(4,))
            self.m = 6

        @qd.kernel(fastcache=True)
        def step(self) -> qd.i32:
            self.b[1] = self.m
            return self.b[1]

    field[0] = 1
    value, warned = _run(allowed, field, 2)
    assert value == pytest.approx(1 + 2 + 2 + 3 * math.pi, rel=1e-6) and warned == []
    value, warned = _run(Sim().step)
    assert value == 6 and warned == []


def test_kernels_that_are_not_pure_read_globals_freely():
    @qd.kernel
    def free() -> qd.i32:
        return count + field[0] + cfg.n

    field[0] = 10
    value, warned = _run(free)
    assert value == 18 and warned == []


def test_a_func_shared_with_an_impure_kernel_is_still_checked_in_a_pure_one():
    @qd.func
    def helper() -> qd.i32:
        return count * 2

    @qd.kernel
    def impure() -> qd.i32:
        return helper()

    @qd.kernel(fastcache=True)
    def pure_caller() -> qd.i32:
        return helper()

    assert impure() == 6
    with pytest.raises(qd.QdCompileError, match="pure kernel .*pure_caller reads global variable count"):
        pure_caller()


def test_pure_spellings_mean_fastcache():
    with pytest.warns(qd.QdWarning, match="`pure` is deprecated"):
        @qd.kernel(pure=True)
        def by_option() -> qd.i32:
            return count

    with pytest.warns(qd.QdWarning, match="deprecated"):
        @qd.pure
        @qd.kernel
        def by_decorator() -> qd.i32:
            return count

    assert by_option.fastcache and by_decorator.fastcache
    for k in (by_option, by_decorator):
        with pytest.raises(qd.QdCompileError, match="PURE.VIOLATION"):
            k()
