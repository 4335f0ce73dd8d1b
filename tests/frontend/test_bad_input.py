"""Bad input outside kernel bodies: odd annotations, dataclass members, decorator misuse, Python-level
calls into qd and bad settings. Each is a ``qd.QdError`` located on the user's line (this file), with
the source line and a caret, and without an internal exception chained to it.

Expected lines are marked with ``# at:<name>``, so editing this file never breaks the expectations.
"""

import dataclasses
import os
import re
import typing
import warnings

import numpy as np
import pytest

import qd

HERE = os.path.abspath(__file__)
with open(HERE, encoding="utf-8") as _f:
    SOURCE = _f.read().splitlines()
HEADER = re.compile(r"^(?P<file>.*?):(?P<line>\d+):(?P<col>\d+): ")


def marked(name: str) -> int:
    """1-based number of the unique line carrying ``# at:<name>``."""
    hits = [n + 1 for n, text in enumerate(SOURCE) if text.rstrip().endswith(f"# at:{name}")]
    assert len(hits) == 1, f"marker {name!r} found {len(hits)} times"
    return hits[0]


def check(exc: BaseException, cls: str, marker: str, under: str | None = None) -> None:
    """`exc` is a `qd.<cls>` reported at the marked line of this file, with that line and a caret
    (starting under the text `under` when given)."""
    cls = getattr(qd, cls)
    assert isinstance(exc, cls), f"expected {cls.__name__}, got {type(exc).__name__}: {exc}"
    lines = str(exc).splitlines()
    head = HEADER.match(lines[0])
    assert head, f"no file:line:col in {str(exc)!r}"
    assert os.path.abspath(head.group("file")) == HERE, lines[0]
    assert int(head.group("line")) == marked(marker), f"expected line {marked(marker)}: {lines[0]}"
    text = SOURCE[marked(marker) - 1]
    assert len(lines) >= 3 and lines[1].strip() == text.strip() and set(lines[2].strip()) == {"^"}, str(exc)
    if under is not None:
        start = lines[2].index("^")
        assert lines[1][start:].startswith(under), f"caret not under {under!r}:\n{exc}"
    assert exc.loc is not None and os.path.abspath(exc.loc.file) == HERE
    assert exc.__cause__ is None and (exc.__suppress_context__ or exc.__context__ is None)


def f32(n: int = 4) -> np.ndarray:
    return np.zeros(n, np.float32)


# ------------------------------------------------------------------ annotations of parameters


def test_negative_ndim_annotation():
    with pytest.raises(qd.QdError) as ei:
        @qd.kernel
        def k(x: qd.types.NDArray[qd.f32, -1]):  # at:neg-ndim
            pass
    check(ei.value, "QdTypeError", "neg-ndim", under="qd.types.NDArray")


def test_dtype_string_numpy_cannot_parse():
    with pytest.raises(qd.QdError) as ei:
        @qd.kernel
        def k(x: qd.types.NDArray["(qd.i32, 1)", 1]):  # at:np-parse
            pass
    check(ei.value, "QdTypeError", "np-parse", under="qd.types.NDArray")


def test_string_dtype_annotation():
    with pytest.raises(qd.QdError) as ei:
        @qd.kernel
        def k(x: qd.types.NDArray["f32", 1]):  # at:str-dtype
            pass
    check(ei.value, "QdTypeError", "str-dtype", under="qd.types.NDArray")


def test_bad_annotation_in_a_string_is_reported_at_its_parameter():
    @qd.kernel
    def k(x: "qd.types.NDArray[qd.f32, 1]", y: "qd.types.NDArray[qd.f32, 1.5]"):  # at:str-ann
        pass

    with pytest.raises(qd.QdError) as ei:
        k(f32(), f32())
    check(ei.value, "QdTypeError", "str-ann", under="y")


def test_unknown_name_in_a_string_annotation():
    @qd.kernel
    def k(x: "NotDefinedAnywhere"):  # noqa: F821  # at:undef-ann
        pass

    with pytest.raises(qd.QdError) as ei:
        k(f32())
    check(ei.value, "QdArgumentError", "undef-ann", under="x")
    assert "NotDefinedAnywhere" in str(ei.value).splitlines()[0]


# ------------------------------------------------------------------ dataclass parameters


@dataclasses.dataclass
class HasStr:
    a: qd.types.NDArray[qd.f32, 1]
    name: str  # at:member-str


@dataclasses.dataclass
class HasList:
    xs: typing.List[int]  # noqa: UP006  # at:member-list


@dataclasses.dataclass
class Loop:
    nxt: "Loop"  # at:member-self


@dataclasses.dataclass
class Outer:
    inner: "Inner"


@dataclasses.dataclass
class Inner:
    back: Outer  # at:member-cycle


@dataclasses.dataclass
class Plain:
    a: qd.types.NDArray[qd.f32, 1]


@dataclasses.dataclass
class Nest:
    p: Plain


@pytest.mark.parametrize("cls, marker", [(HasStr, "member-str"), (HasList, "member-list"), (Loop, "member-self"),
                                         (Outer, "member-cycle")])
def test_unsupported_dataclass_member_is_reported_at_the_member(cls, marker):
    @qd.kernel
    def k(s: cls):
        pass

    with pytest.raises(qd.QdError) as ei:
        k(None)
    check(ei.value, "QdTypeError", marker)


def test_unsupported_dataclass_member_in_a_func_parameter():
    @qd.func
    def f(s: HasStr):
        pass

    @qd.kernel
    def k(x: qd.types.NDArray[qd.f32, 1]):
        f(x)

    with pytest.raises(qd.QdError) as ei:
        k(f32())
    check(ei.value, "QdTypeError", "member-str")


@qd.kernel
def uses_plain(s: Plain):  # at:plain-param
    for i in range(s.a.shape[0]):
        s.a[i] = 1.0


@qd.kernel
def uses_nest(n: Nest):  # at:nest-param
    for i in range(n.p.a.shape[0]):
        n.p.a[i] = 2.0


@pytest.mark.parametrize("value", [f32(), 3, None, {"a": f32()}, Nest(Plain(f32()))], ids=repr)
def test_non_dataclass_value_for_a_dataclass_parameter(value):
    with pytest.raises(qd.QdError) as ei:
        uses_plain(value)
    check(ei.value, "QdArgumentError", "plain-param", under="s")
    assert "'s'" in str(ei.value)


def test_non_dataclass_value_for_a_nested_member():
    with pytest.raises(qd.QdError) as ei:
        uses_nest(Nest(f32()))
    check(ei.value, "QdArgumentError", "nest-param", under="n")
    assert "'n.p'" in str(ei.value)
    s = Nest(Plain(f32()))
    uses_nest(s)  # a good call still works afterwards
    np.testing.assert_array_equal(s.p.a, np.full(4, 2.0, np.float32))


# ------------------------------------------------------------------ decorators


def test_kernel_on_a_lambda():
    with pytest.raises(qd.QdError) as ei:
        qd.kernel(lambda x: x)  # at:lambda
    check(ei.value, "QdSyntaxError", "lambda", under="qd.kernel(")


def test_kernel_on_a_class():
    with pytest.raises(qd.QdError) as ei:
        @qd.kernel  # at:class
        class A:
            pass
    check(ei.value, "QdSyntaxError", "class")


def test_func_with_options_on_a_class():
    with pytest.raises(qd.QdError) as ei:
        @qd.func(is_real_function=False)  # at:func-class
        class A:
            pass
    check(ei.value, "QdSyntaxError", "func-class")


def test_kernel_on_a_func():
    @qd.func
    def f(x):
        return x

    with pytest.raises(qd.QdError) as ei:
        qd.kernel(f)  # at:double
    check(ei.value, "QdSyntaxError", "double")


def test_func_called_from_python():
    @qd.func
    def f(x):
        return x

    with pytest.raises(qd.QdError) as ei:
        f(1)  # at:func-call
    check(ei.value, "QdCallError", "func-call", under="f(1)")


def test_launch_info_and_explain_of_a_non_kernel():
    with pytest.raises(qd.QdError) as ei:
        qd.launch_info(len)  # at:launch-info
    check(ei.value, "QdArgumentError", "launch-info")
    with pytest.raises(qd.QdError) as ei:
        qd.explain(len)  # at:explain
    check(ei.value, "QdArgumentError", "explain")


# ------------------------------------------------------------------ qd.ndarray


@pytest.mark.parametrize("shape", [1.5, (1, 0.5), "ab", (2, None), (True, 2), np.float64(3.0), np.zeros((3, 3)) + 0.5],
                         ids=["1.5", "(1, 0.5)", "'ab'", "(2, None)", "(True, 2)", "float64", "2-d array"])
def test_ndarray_shape_that_is_not_ints(shape):
    with pytest.raises(qd.QdError) as ei:
        qd.ndarray(qd.f32, shape)  # at:shape
    check(ei.value, "QdArgumentError", "shape", under="qd.ndarray")


def test_ndarray_negative_shape_and_unknown_dtype():
    with pytest.raises(qd.QdError) as ei:
        qd.ndarray(qd.f32, (2, -1))  # at:neg-shape
    check(ei.value, "QdArgumentError", "neg-shape")
    with pytest.raises(qd.QdError) as ei:
        qd.ndarray("nothing", 3)  # at:dtype
    check(ei.value, "QdArgumentError", "dtype")
    with pytest.raises(qd.QdError) as ei:
        qd.ndarray([1], 3)  # at:dtype-list
    check(ei.value, "QdArgumentError", "dtype-list")


def test_ndarray_good_shapes_and_copies():
    a = qd.ndarray(qd.i32, (2, np.int64(3)))
    assert a.shape == (2, 3)
    a.from_numpy(np.arange(6).reshape(2, 3))
    np.testing.assert_array_equal(a.to_numpy(), np.arange(6).reshape(2, 3))
    with pytest.raises(qd.QdError) as ei:
        a.from_numpy(np.zeros(5))  # at:from-numpy
    check(ei.value, "QdArgumentError", "from-numpy")
    with pytest.raises(qd.QdError) as ei:
        a.from_numpy(np.array([["a", "b", "c"]] * 2))  # at:from-str
    check(ei.value, "QdArgumentError", "from-str")
    with pytest.raises(qd.QdError) as ei:
        a.copy_from(np.zeros((2, 3)))  # at:copy-from
    check(ei.value, "QdArgumentError", "copy-from")


# ------------------------------------------------------------------ qd.init and environment variables


@pytest.mark.parametrize("value", ["abc", "-3", "2.5"])
def test_bad_qd_num_threads(monkeypatch, value):
    monkeypatch.setenv("QD_NUM_THREADS", value)
    with pytest.raises(qd.QdError) as ei:
        qd.init(arch=qd.cpu)  # at:num-threads
    check(ei.value, "QdConfigError", "num-threads", under="qd.init")
    assert "QD_NUM_THREADS" in str(ei.value)


def test_good_qd_num_threads(monkeypatch):
    monkeypatch.setenv("QD_NUM_THREADS", " 3 ")
    qd.init(arch=qd.cpu)
    assert qd.lang.config.current().cpu_max_num_threads == 3


@pytest.mark.parametrize("kwargs, cls, marker", [
    ({"arch": "nothing"}, "QdConfigError", "init-1"),
    ({"default_fp": qd.i32}, "QdConfigError", "init-2"),
    ({"default_ip": qd.f32}, "QdConfigError", "init-3"),
    ({"no_such_option": 1}, "QdConfigError", "init-4"),
    ({"cpu_max_num_threads": -2}, "QdConfigError", "init-5"),
    ({"cpu_max_num_threads": 2.5}, "QdConfigError", "init-6"),
    ({"offline_cache_file_path": 5}, "QdConfigError", "init-7"),
])
def test_bad_init_option(kwargs, cls, marker):
    calls = {
        "init-1": lambda: qd.init(**kwargs),  # at:init-1
        "init-2": lambda: qd.init(**kwargs),  # at:init-2
        "init-3": lambda: qd.init(**kwargs),  # at:init-3
        "init-4": lambda: qd.init(**kwargs),  # at:init-4
        "init-5": lambda: qd.init(**kwargs),  # at:init-5
        "init-6": lambda: qd.init(**kwargs),  # at:init-6
        "init-7": lambda: qd.init(**kwargs),  # at:init-7
    }
    with pytest.raises(qd.QdError) as ei:
        calls[marker]()
    check(ei.value, cls, marker, under="qd.init")


def test_init_warnings_point_at_the_callers_line():
    qd.lang.config._warned.clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        qd.init(arch=qd.metal, verbose=True)  # at:init-warn
    assert len(caught) == 2, [str(w.message) for w in caught]
    for w in caught:
        assert issubclass(w.category, qd.QdWarning)
        assert os.path.abspath(w.filename) == HERE and w.lineno == marked("init-warn")
        shown = warnings.formatwarning(w.message, w.category, w.filename, w.lineno)  # what Python prints
        assert shown.count(f"{w.filename}:{w.lineno}") == 1 and shown.count("at:init-warn") == 1, shown


@pytest.mark.parametrize("engine", ["souffle", "nonsense"])
def test_unavailable_datalog_engine(monkeypatch, engine):
    monkeypatch.setenv("QD_DATALOG_ENGINE", engine)
    monkeypatch.setenv("PATH", os.devnull)  # no souffle binary can be found

    @qd.kernel
    def k(x: qd.types.NDArray[qd.f32, 1]):
        for i in range(x.shape[0]):
            x[i] = 1.0

    with pytest.raises(qd.QdError) as ei:
        k(f32())  # at:engine
    check(ei.value, "QdConfigError", "engine", under="k(")
    monkeypatch.delenv("QD_DATALOG_ENGINE")
    x = f32()
    k(x)  # the default engine works again
    np.testing.assert_array_equal(x, np.ones(4, np.float32))


# ------------------------------------------------------------------ found by the mutation generator


def test_qd_functions_called_from_python():
    with pytest.raises(qd.QdError) as ei:
        qd.u8(-1)  # at:u8
    check(ei.value, "QdTypeError", "u8", under="qd.u8(-1)")
    with pytest.raises(qd.QdError) as ei:
        qd.cast(1, "nothing")  # at:cast
    check(ei.value, "QdTypeError", "cast")
    with pytest.raises(qd.QdError) as ei:
        qd.atomic_add(1, 2)  # at:atomic
    check(ei.value, "QdCallError", "atomic")
    assert qd.cast(float("inf"), qd.u8) == 255  # saturates, as inside kernels (not an error)
    with pytest.raises(qd.QdError) as ei:
        qd.min()  # at:min
    check(ei.value, "QdTypeError", "min")
    with pytest.raises(qd.QdError) as ei:
        qd.max([1, [2, 3]], 3)  # at:max-mixed
    check(ei.value, "QdTypeError", "max-mixed")
    with pytest.raises(qd.QdError) as ei:
        list(qd.ndrange(2, "a"))  # at:ndrange
    check(ei.value, "QdTypeError", "ndrange")
    assert list(qd.ndrange(2, (1, 3))) == [(0, 1), (0, 2), (1, 1), (1, 2)]
    assert qd.u8(300 % 256) == 44 and qd.cast(2.5, qd.i32) == 2 and qd.max(1, 5, 3) == 5


def test_ndarray_element_access_from_python():
    a = qd.ndarray(qd.f32, 3)
    a[1] = 2.5
    assert [a[0], a[1], a[2]] == [0.0, 2.5, 0.0]
    assert list(a) == [0.0, 2.5, 0.0]  # iteration still ends at the IndexError
    with pytest.raises(IndexError) as ei:
        a[3]  # at:getitem
    check(ei.value, "QdIndexError", "getitem")
    with pytest.raises(ValueError) as ei:
        a[0] = [1.0, 2.0]  # at:setitem
    check(ei.value, "QdValueError", "setitem")
    with pytest.raises(qd.QdError) as ei:
        len(qd.ndarray(qd.f32, ()))  # at:len
    check(ei.value, "QdArgumentError", "len")


def test_identical_kernels_in_two_files_report_their_own_file(tmp_path):
    """Code objects compare equal across files, so a source cache keyed by them alone handed the
    second file's kernel the first file's source and located its errors in the wrong file."""
    import importlib.util

    text = "import qd\n\n\n@qd.kernel\ndef k(x: qd.types.NDArray[qd.f32, 1]):\n    for i in range(x.shape[0]):\n" \
           "        x[i] = 1.0\n"
    kernels = []
    for name in ("first_copy", "second_copy"):
        path = tmp_path / f"{name}.py"
        path.write_text(text)
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        kernels.append((path, mod.k))
    for path, k in kernels:
        with pytest.raises(qd.QdArgumentError) as ei:
            k(np.zeros(3, np.int32))
        assert str(ei.value).startswith(f"{path}:5:"), str(ei.value)


def test_bare_ndarray_annotation_takes_any_array():
    @qd.kernel
    def double(a: qd.types.NDArray):
        for i in range(a.shape[0]):
            a[i] = a[i] * 2

    for dtype in (np.int64, np.float32):
        a = np.arange(5, dtype=dtype)
        double(a)
        np.testing.assert_array_equal(a, np.arange(5, dtype=dtype) * 2)


def test_array_return_annotation_on_a_kernel():
    from qd.lang.types import NDArray

    @qd.kernel
    def k(x: NDArray[qd.f32, 1]) -> NDArray:  # at:ret-ndarray
        for i in range(x.shape[0]):
            x[i] = 1.0

    with pytest.raises(qd.QdError) as ei:
        k(f32())
    check(ei.value, "QdTypeError", "ret-ndarray", under="NDArray")

    @qd.kernel
    def k2(x: NDArray[qd.f32, 1]) -> NDArray[qd.f32, 1]:  # at:ret-ndarray-typed
        for i in range(x.shape[0]):
            x[i] = 1.0
        return x

    with pytest.raises(qd.QdError) as ei:  # numpy used to read NDArray's .dtype and fail
        k2(f32())
    check(ei.value, "QdTypeError", "ret-ndarray-typed", under="NDArray")


# ------------------------------------------------------------------ quadrants' scalar builtins given non-numbers


def test_python_scope_builtins_refuse_non_numbers():
    with pytest.raises(qd.QdError) as ei:
        qd.raw_div(qd, 0)  # at:raw-div-py
    check(ei.value, "QdTypeError", "raw-div-py", under="qd.raw_div")
    with pytest.raises(qd.QdError) as ei:
        qd.bit_shr("a", 1)  # at:bit-shr-py
    check(ei.value, "QdTypeError", "bit-shr-py", under="qd.bit_shr")


def test_kernel_builtins_refuse_non_numbers():
    @qd.kernel
    def k(a: qd.types.NDArray[qd.i32, 1]):
        a[0] = qd.raw_div(qd, 0)  # at:raw-div-kernel

    with pytest.raises(qd.QdError) as ei:
        k(np.zeros(1, np.int32))
    check(ei.value, "QdTypeError", "raw-div-kernel", under="qd.raw_div")


def test_dtype_conversion_overflow_is_inf_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's overflow RuntimeWarning would point inside qd
        assert qd.f32(1e300) == np.inf and qd.f32(-1e300) == -np.inf
