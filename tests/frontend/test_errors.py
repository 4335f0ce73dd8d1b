"""User errors: class, location, source excerpt and a clean traceback.

Every user mistake must surface as a subclass of ``qd.QdError`` whose message starts with
``file:line:col:`` and shows the offending source line with carets under the offending node, and
must not drag an internal exception along as its cause or context. Expected lines are found
through ``# err:<name>`` markers on the offending lines, so editing this file never breaks the
expectations.

Kernels that must fail to compile are defined inside the ``pytest.raises`` block: whether the
error is detected at decoration time or at the first launch is an implementation choice, not
part of the contract.
"""

import os
import re

import numpy as np
import pytest

import qd

BASENAME = os.path.basename(__file__)
with open(__file__, encoding="utf-8") as _f:
    SOURCE = _f.read().splitlines()

CARET_LINE = re.compile(r"^ *\^+ *$")
HEADER = re.compile(r"^(?P<file>.*?):(?P<line>\d+):(?P<col>\d+): ")


def marker_line(name):
    """1-based line number of the unique source line ending in ``# err:<name>``."""
    tag = f"# err:{name}"
    hits = [
        n + 1 for n, text in enumerate(SOURCE) if tag in text and (text.split(tag, 1)[1][:1] in ("", " "))
    ]
    assert len(hits) == 1, f"marker {name!r} found {len(hits)} times"
    return hits[0]


def check_error(exc, cls, markers=None, *, lines=None, node=None):
    """Assert the contract on ``exc``.

    ``markers``: one marker name or several acceptable ones; ``lines``: explicit acceptable
    line numbers instead; ``node``: one or several acceptable texts that must start exactly
    at the first caret.
    """
    assert isinstance(exc, cls), f"expected {cls}, got {type(exc).__name__}: {exc}"
    assert isinstance(exc, qd.QdError)
    msg = str(exc)
    msg_lines = msg.splitlines()

    header = HEADER.match(msg_lines[0])
    assert header, f"message does not start with file:line:col:\n{msg}"
    assert os.path.basename(header.group("file")) == BASENAME, msg
    if markers is not None:
        names = [markers] if isinstance(markers, str) else list(markers)
        lines = {marker_line(name) for name in names}
    line = int(header.group("line"))
    assert line in set(lines), f"reported line {line}, expected one of {sorted(lines)}\n{msg}"
    assert f"{BASENAME}:{line}:" in msg

    source = SOURCE[line - 1].strip()
    shown = [
        k
        for k in range(len(msg_lines) - 1)
        if msg_lines[k].rstrip().endswith(source) and CARET_LINE.match(msg_lines[k + 1])
    ]
    assert shown, f"source line {source!r} followed by a caret line not found in:\n{msg}"
    if node is not None:
        candidates = [node] if isinstance(node, str) else list(node)
        k = shown[0]
        start = msg_lines[k + 1].index("^")
        under = msg_lines[k][start:]
        assert any(under.startswith(c) for c in candidates), (
            f"carets start under {under!r}, expected one of {candidates}\n{msg}"
        )

    # No internal exception may leak into the user's traceback.
    assert exc.__cause__ is None, f"chained cause: {exc.__cause__!r}"
    assert exc.__suppress_context__ or exc.__context__ is None, f"chained context: {exc.__context__!r}"


def f32_array(n=8):
    return np.arange(n, dtype=np.float32)


# --------------------------------------------------------------------------- QdSyntaxError


def test_syntax_try():
    with pytest.raises(qd.QdError) as ei:

        @qd.kernel
        def k(x: qd.types.NDArray[qd.f32, 1]):
            for i in range(x.shape[0]):
                try:  # err:try
                    x[i] = 1.0
                except ValueError:
                    x[i] = 2.0

        k(f32_array())
    check_error(ei.value, qd.QdSyntaxError, "try", node="try")


def test_syntax_with():
    with pytest.raises(qd.QdError) as ei:

        @qd.kernel
        def k(x: qd.types.NDArray[qd.f32, 1]):
            for i in range(x.shape[0]):
                with open("nothing"):  # err:with
                    x[i] = 1.0

        k(f32_array())
    check_error(ei.value, qd.QdSyntaxError, "with", node="with")


def test_syntax_lambda():
    with pytest.raises(qd.QdError) as ei:

        @qd.kernel
        def k(x: qd.types.NDArray[qd.f32, 1]):
            for i in range(x.shape[0]):
                x[i] = (lambda v: v + 1.0)(x[i])  # err:lambda

        k(f32_array())
    check_error(ei.value, qd.QdSyntaxError, "lambda", node="lambda")


def test_syntax_yield():
    with pytest.raises(qd.QdError) as ei:

        @qd.kernel
        def k(x: qd.types.NDArray[qd.f32, 1]):
            for i in range(x.shape[0]):
                yield x[i]  # err:yield

        k(f32_array())
    check_error(ei.value, qd.QdSyntaxError, "yield", node="yield")


def test_syntax_list_comprehension_over_a_runtime_range():
    """Comprehensions are unrolled (quadrants builds vectors with them), so they need a
    compile-time iterable; one over a run-time range is refused at the range."""
    with pytest.raises(qd.QdError) as ei:

        @qd.kernel
        def k(x: qd.types.NDArray[qd.f32, 1]):
            for i in range(x.shape[0]):
                vals = [x[j] for j in range(x.shape[0])]  # err:listcomp
                x[i] = vals[0]

        k(f32_array())
    check_error(ei.value, qd.QdSyntaxError, "listcomp", node="range(x.shape[0])]")


def test_syntax_generator_expression():
    with pytest.raises(qd.QdError) as ei:

        @qd.kernel
        def k(x: qd.types.NDArray[qd.f32, 1]):
            for i in range(x.shape[0]):
                x[i] = sum(x[j] for j in range(3))  # err:genexp

        k(f32_array())
    check_error(ei.value, qd.QdSyntaxError, "genexp", node=("x[j] for j", "(x[j] for j"))


def test_syntax_class_definition():
    with pytest.raises(qd.QdError) as ei:

        @qd.kernel
        def k(x: qd.types.NDArray[qd.f32, 1]):
            for i in range(x.shape[0]):

                class Local:  # err:class
                    pass

                x[i] = 1.0

        k(f32_array())
    check_error(ei.value, qd.QdSyntaxError, "class", node="class")


def test_syntax_error_inside_func_points_into_func():
    with pytest.raises(qd.QdError) as ei:

        @qd.func
        def helper(v: qd.f32) -> qd.f32:
            r = v
            try:  # err:func-try
                r = v * 2.0
            finally:
                r = v
            return r

        @qd.kernel
        def k(x: qd.types.NDArray[qd.f32, 1]):
            for i in range(x.shape[0]):
                x[i] = helper(x[i])

        k(f32_array())
    check_error(ei.value, qd.QdSyntaxError, "func-try", node="try")


# --------------------------------------------------------------------------- QdStaticError


def test_static_on_array_element():
    with pytest.raises(qd.QdError) as ei:

        @qd.kernel
        def k(x: qd.types.NDArray[qd.f32, 1]):
            if qd.static(x[0] > 0):  # err:static-array
                x[0] = 1.0

        k(f32_array())
    check_error(ei.value, qd.QdStaticError, "static-array", node=("qd.static(x[0] > 0)", "x[0] > 0", "x[0]"))


def test_static_on_runtime_scalar_param():
    with pytest.raises(qd.QdError) as ei:

        @qd.kernel
        def k(x: qd.types.NDArray[qd.f32, 1], s: qd.f32):
            for i in range(x.shape[0]):
                if qd.static(s > 1.0):  # err:static-scalar
                    x[i] = s

        k(f32_array(), 2.0)
    check_error(ei.value, qd.QdStaticError, "static-scalar", node=("qd.static(s > 1.0)", "s > 1.0", "s"))


def test_static_range_over_runtime_bound():
    with pytest.raises(qd.QdError) as ei:

        @qd.kernel
        def k(x: qd.types.NDArray[qd.f32, 1], n: qd.i32):
            for i in range(x.shape[0]):
                for j in qd.static(range(n)):  # err:static-range
                    x[i] += j

        k(f32_array(), 3)
    check_error(ei.value, qd.QdStaticError, "static-range", node=("qd.static(range(n))", "range(n)", "n"))


# --------------------------------------------------------------------------- QdNameError


def test_name_undefined_in_kernel():
    with pytest.raises(qd.QdError) as ei:

        @qd.kernel
        def k(x: qd.types.NDArray[qd.f32, 1]):
            for i in range(x.shape[0]):
                x[i] = undefined_thing + 1.0  # err:name-kernel  # noqa: F821

        k(f32_array())
    check_error(ei.value, qd.QdNameError, "name-kernel", node="undefined_thing")


def test_name_undefined_function():
    with pytest.raises(qd.QdError) as ei:

        @qd.kernel
        def k(x: qd.types.NDArray[qd.f32, 1]):
            for i in range(x.shape[0]):
                x[i] = no_such_helper(x[i])  # err:name-call  # noqa: F821

        k(f32_array())
    check_error(ei.value, qd.QdNameError, "name-call", node="no_such_helper")


def test_name_undefined_inside_func():
    with pytest.raises(qd.QdError) as ei:

        @qd.func
        def scale(v: qd.f32) -> qd.f32:
            return v * missing_scale  # err:name-func  # noqa: F821

        @qd.kernel
        def k(x: qd.types.NDArray[qd.f32, 1]):
            for i in range(x.shape[0]):
                x[i] = scale(x[i])

        k(f32_array())
    check_error(ei.value, qd.QdNameError, "name-func", node="missing_scale")


def test_name_undefined_attribute_of_qd():
    with pytest.raises(qd.QdError) as ei:

        @qd.kernel
        def k(x: qd.types.NDArray[qd.f32, 1]):
            for i in range(x.shape[0]):
                x[i] = qd.no_such_function(x[i])  # err:name-attr

        k(f32_array())
    check_error(ei.value, (qd.QdNameError, qd.QdTypeError), "name-attr", node="qd.no_such_function")


# --------------------------------------------------------------------------- QdTypeError


def test_type_too_few_indices():
    with pytest.raises(qd.QdError) as ei:

        @qd.kernel
        def k(a: qd.types.NDArray[qd.f32, 2], y: qd.types.NDArray[qd.f32, 1]):
            for i in range(y.shape[0]):
                y[i] = a[i]  # err:type-index

        k(np.zeros((8, 8), np.float32), f32_array())
    check_error(ei.value, qd.QuadrantsIndexError, "type-index", node="a[i]")


def test_type_too_many_indices():
    with pytest.raises(qd.QdError) as ei:

        @qd.kernel
        def k(y: qd.types.NDArray[qd.f32, 1]):
            for i in range(y.shape[0]):
                y[i, 0] = 1.0  # err:type-index2

        k(f32_array())
    check_error(ei.value, qd.QuadrantsIndexError, "type-index2", node="y[i, 0]")


def test_type_array_plus_scalar():
    with pytest.raises(qd.QdError) as ei:

        @qd.kernel
        def k(x: qd.types.NDArray[qd.f32, 1], y: qd.types.NDArray[qd.f32, 1]):
            for i in range(y.shape[0]):
                y[i] = x + 1.0  # err:type-array-add

        k(f32_array(), f32_array())
    check_error(ei.value, qd.QdTypeError, "type-array-add", node=("x + 1.0", "x"))


def test_type_call_non_callable():
    with pytest.raises(qd.QdError) as ei:

        @qd.kernel
        def k(y: qd.types.NDArray[qd.f32, 1]):
            for i in range(y.shape[0]):
                v = 2.0
                y[i] = v(3)  # err:type-call

        k(f32_array())
    check_error(ei.value, qd.QdTypeError, "type-call", node=("v(3)", "v"))


# --------------------------------------------------------------------------- QdArgumentError


@qd.kernel
def scaled_copy(  # err:def-scaled_copy
    x: qd.types.NDArray[qd.f32, 1],  # err:param-x
    y: qd.types.NDArray[qd.f32, 1],  # err:param-y
    a: qd.f32,  # err:param-a
):
    for i in range(x.shape[0]):
        y[i] = a * x[i]


def _def_lines():
    return set(range(marker_line("def-scaled_copy"), marker_line("param-a") + 2))


def _launch_error(*args, **kwargs):
    with pytest.raises(qd.QdError) as ei:
        scaled_copy(*args, **kwargs)
    return ei.value


def test_argument_missing():
    exc = _launch_error(f32_array(), f32_array())
    check_error(exc, qd.QdArgumentError, "param-a", node="a")


def test_argument_too_many():
    exc = _launch_error(f32_array(), f32_array(), 1.0, 2.0)
    check_error(exc, qd.QdArgumentError, lines=_def_lines())


def test_argument_unknown_keyword():
    exc = _launch_error(f32_array(), f32_array(), a=1.0, b=2.0)
    check_error(exc, qd.QdArgumentError, lines=_def_lines())


def test_argument_wrong_dtype():
    exc = _launch_error(np.zeros(8, dtype=np.float64), f32_array(), 1.0)
    check_error(exc, qd.QdArgumentError, "param-x", node="x")
    assert "f32" in str(exc) or "float32" in str(exc)


def test_argument_wrong_dtype_qd_ndarray():
    wrong = qd.ndarray(qd.i32, (8,))
    exc = _launch_error(f32_array(), wrong, 1.0)
    check_error(exc, qd.QdArgumentError, "param-y", node="y")


def test_argument_wrong_ndim():
    exc = _launch_error(np.zeros((2, 4), dtype=np.float32), f32_array(), 1.0)
    check_error(exc, qd.QdArgumentError, "param-x", node="x")


def test_argument_non_contiguous():
    strided = np.zeros(16, dtype=np.float32)[::2]
    assert not strided.flags.c_contiguous
    exc = _launch_error(f32_array(), strided, 1.0)
    check_error(exc, qd.QdArgumentError, "param-y", node="y")
    assert isinstance(exc, ValueError) and "Non contiguous numpy arrays are not supported" in str(exc)


def test_argument_list_instead_of_array():
    exc = _launch_error([1.0, 2.0, 3.0], f32_array(3), 1.0)
    check_error(exc, qd.QdArgumentError, "param-x", node="x")


@pytest.mark.parametrize("bad", ["hello", None, object(), [1.0]], ids=["str", "None", "object", "list"])
def test_argument_non_numeric_scalar(bad):
    exc = _launch_error(f32_array(), f32_array(), bad)
    check_error(exc, qd.QdArgumentError, "param-a", node="a")


def test_argument_error_leaves_kernel_usable():
    _launch_error(np.zeros(8, dtype=np.float64), f32_array(), 1.0)
    x = f32_array()
    y = np.zeros(8, dtype=np.float32)
    scaled_copy(x, y, 2.0)
    np.testing.assert_array_equal(y, 2.0 * x)


# --------------------------------------------------------------------------- QdCallError


@qd.kernel
def fill_ones(x: qd.types.NDArray[qd.f32, 1]):
    for i in range(x.shape[0]):
        x[i] = 1.0


def test_call_kernel_from_kernel():
    with pytest.raises(qd.QdError) as ei:

        @qd.kernel
        def outer(x: qd.types.NDArray[qd.f32, 1]):
            for i in range(x.shape[0]):
                x[i] = 0.0
            fill_ones(x)  # err:call-kernel

        outer(f32_array())
    check_error(ei.value, qd.QdCallError, "call-kernel", node=("fill_ones(x)", "fill_ones"))


@qd.func
def ping(v: qd.f32) -> qd.f32:
    return pong(v) + 1.0  # err:call-ping


@qd.func
def pong(v: qd.f32) -> qd.f32:
    return ping(v) * 2.0  # err:call-pong


def test_call_mutual_recursion():
    with pytest.raises(qd.QdError) as ei:

        @qd.kernel
        def k(x: qd.types.NDArray[qd.f32, 1]):
            for i in range(x.shape[0]):
                x[i] = ping(x[i])

        k(f32_array())
    # Either edge of the cycle is a fair place to report it.
    check_error(
        ei.value, qd.QdCallError, ["call-ping", "call-pong"], node=("pong(v)", "ping(v)", "pong", "ping")
    )


def test_call_self_recursion():
    with pytest.raises(qd.QdError) as ei:

        @qd.func
        def fact(n: qd.i32) -> qd.i32:
            r = 1
            if n > 1:
                r = n * fact(n - 1)  # err:call-self
            return r

        @qd.kernel
        def k(x: qd.types.NDArray[qd.i32, 1]):
            for i in range(x.shape[0]):
                x[i] = fact(x[i])

        k(np.arange(5, dtype=np.int32))
    check_error(ei.value, qd.QdCallError, "call-self", node=("fact(n - 1)", "fact"))


@qd.func
def mul(v: qd.f32, w: qd.f32) -> qd.f32:
    return v * w


def test_call_func_missing_argument():
    with pytest.raises(qd.QdError) as ei:

        @qd.kernel
        def k(x: qd.types.NDArray[qd.f32, 1]):
            for i in range(x.shape[0]):
                x[i] = mul(x[i])  # err:call-missing

        k(f32_array())
    check_error(ei.value, qd.QdCallError, "call-missing", node=("mul(x[i])", "mul"))


def test_call_func_too_many_arguments():
    with pytest.raises(qd.QdError) as ei:

        @qd.kernel
        def k(x: qd.types.NDArray[qd.f32, 1]):
            for i in range(x.shape[0]):
                x[i] = mul(x[i], 1.0, 2.0)  # err:call-extra

        k(f32_array())
    check_error(ei.value, qd.QdCallError, "call-extra", node=("mul(x[i], 1.0, 2.0)", "mul", "2.0"))


def test_call_func_unknown_keyword():
    with pytest.raises(qd.QdError) as ei:

        @qd.kernel
        def k(x: qd.types.NDArray[qd.f32, 1]):
            for i in range(x.shape[0]):
                x[i] = mul(x[i], u=1.0)  # err:call-kw

        k(f32_array())
    check_error(ei.value, qd.QdCallError, "call-kw", node=("mul(x[i], u=1.0)", "mul", "u=1.0"))


# --------------------------------------------------------------------------- QdRuntimeError


@qd.kernel
def shifted_read(x: qd.types.NDArray[qd.f32, 1], y: qd.types.NDArray[qd.f32, 1], off: qd.i32):
    for i in range(y.shape[0]):
        y[i] = x[i + off]  # err:oob-read


@qd.kernel
def shifted_write(x: qd.types.NDArray[qd.f32, 1], y: qd.types.NDArray[qd.f32, 1], off: qd.i32):
    for i in range(x.shape[0]):
        y[i + off] = x[i]  # err:oob-write


@qd.kernel
def shifted_2d(a: qd.types.NDArray[qd.f32, 2], out: qd.types.NDArray[qd.f32, 2], off: qd.i32):
    for i, j in qd.ndrange(out.shape[0], out.shape[1]):
        out[i, j] = a[i, j + off]  # err:oob-2d


@pytest.fixture
def debug_mode(qd_cache_dir):
    qd.init(arch=qd.cpu, debug=True, offline_cache_file_path=str(qd_cache_dir))


def test_runtime_out_of_bounds_read_then_valid_launch(debug_mode):
    x = np.arange(16, dtype=np.float32)
    y = np.zeros(16, dtype=np.float32)
    with pytest.raises(qd.QdError) as ei:
        shifted_read(x, y, 1)
    check_error(ei.value, qd.QdRuntimeError, "oob-read", node="x[i + off]")
    # The process survives and the same kernel runs again with valid indices.
    shifted_read(x, y, 0)
    np.testing.assert_array_equal(y, x)


def test_runtime_negative_index_is_out_of_bounds(debug_mode):
    x = np.arange(16, dtype=np.float32)
    y = np.zeros(16, dtype=np.float32)
    with pytest.raises(qd.QdError) as ei:
        shifted_read(x, y, -1)
    check_error(ei.value, qd.QdRuntimeError, "oob-read", node="x[i + off]")


def test_runtime_out_of_bounds_write(debug_mode):
    x = np.arange(10, dtype=np.float32)
    y = np.zeros(12, dtype=np.float32)
    with pytest.raises(qd.QdError) as ei:
        shifted_write(x, y, 5)
    check_error(ei.value, qd.QdRuntimeError, "oob-write", node="y[i + off]")
    y[:] = 0
    shifted_write(x, y, 2)
    np.testing.assert_array_equal(y[2:], x)


def test_runtime_out_of_bounds_second_axis(debug_mode):
    a = np.ones((6, 7), dtype=np.float32)
    out = np.zeros((6, 7), dtype=np.float32)
    with pytest.raises(qd.QdError) as ei:
        shifted_2d(a, out, 1)
    check_error(ei.value, qd.QdRuntimeError, "oob-2d", node="a[i, j + off]")
    shifted_2d(a, out, 0)
    assert (out == 1).all()


def test_runtime_out_of_bounds_qd_ndarray(debug_mode):
    x = qd.ndarray(qd.f32, (8,))
    y = qd.ndarray(qd.f32, (8,))
    with pytest.raises(qd.QdError) as ei:
        shifted_read(x, y, 3)
    check_error(ei.value, qd.QdRuntimeError, "oob-read", node="x[i + off]")


def test_runtime_out_of_bounds_in_large_parallel_range(debug_mode):
    n = 2_000_003
    x = np.zeros(n, dtype=np.float32)
    y = np.zeros(n, dtype=np.float32)
    with pytest.raises(qd.QdError) as ei:
        shifted_read(x, y, 1)
    check_error(ei.value, qd.QdRuntimeError, "oob-read", node="x[i + off]")
    shifted_read(x, y, 0)
    assert (y == 0).all()


@pytest.mark.parametrize("call,words", [
    ("k(1)", "Missing argument 'b'"), ("k(b=2)", "Missing argument 'a'"), ("k(1, 2, c=3)", "Unexpected argument 'c'"),
    ("k(1, 2, 3)", "Too many arguments"), ("k(1, a=2)", "Multiple values for argument 'a'")])
def test_bad_kernel_call_says_what_is_wrong(call, words):
    """A kernel called with arguments its signature does not take: quadrants' words, as the
    signature error (also an argument error and, as quadrants has it, a syntax error)."""
    @qd.kernel
    def k(a: qd.i32, b: qd.i32):
        pass

    with pytest.raises(qd.QdSignatureError, match=re.escape(words)) as e:
        eval(call, {"k": k})
    assert isinstance(e.value, qd.QdArgumentError) and isinstance(e.value, qd.QdSyntaxError)


@qd.func
def _foo(a, b, c=3):
    return a + b + c


@qd.kernel
def _missing() -> qd.i32:
    return _foo(1, c=3)


@qd.kernel
def _unexpected() -> qd.i32:
    return _foo(1, 2, 3, d=3)


@qd.kernel
def _too_many() -> qd.i32:
    return _foo(1, 2, 3, 4)


@qd.kernel
def _repeated() -> qd.i32:
    return _foo(1, a=3, b=3)


@pytest.mark.parametrize("kernel,words", [
    (_missing, "Missing argument 'b'"), (_unexpected, "Unexpected argument 'd'"), (_too_many, "Too many arguments"),
    (_repeated, "Multiple values for argument 'a'")], ids=["missing", "unexpected", "too-many", "repeated"])
def test_bad_func_call_says_what_is_wrong(kernel, words):
    with pytest.raises(qd.QdSignatureError, match=re.escape(words)) as e:
        kernel()
    assert isinstance(e.value, qd.QdCallError) and e.value.loc.line > 0


@qd.func
def _inner_bad():
    undefined_name_here()  # noqa: F821  # err:chain-inner


@qd.func
def _middle():
    _inner_bad()  # err:chain-middle


@qd.kernel
def _outer():
    _middle()  # err:chain-outer


def test_error_in_a_func_shows_the_chain_of_calls():
    """An error inside nested funcs is located where it is, then followed by the calls that
    reached it, outermost first (quadrants' `File ..., line n, in f:` form, carets under the call)."""
    with pytest.raises(qd.QdNameError) as e:
        _outer()
    text = e.value.args[0]
    check_error(e.value, qd.QdNameError, "chain-inner", node="undefined_name_here")
    frames = [(ln, name) for ln, name in re.findall(r'^File ".*test_errors.py", line (\d+), in (\w+):$', text, re.M)]
    assert frames == [(str(marker_line("chain-outer")), "_outer"), (str(marker_line("chain-middle")), "_middle"),
                      (str(marker_line("chain-inner")), "_inner_bad")], text
    lines = text.splitlines()
    k = lines.index(next(ln for ln in lines if ln.startswith("File") and "_middle" in ln))
    assert lines[k + 1].strip() == "_inner_bad()  # err:chain-middle"
    assert lines[k + 2] == " " * lines[k + 1].index("_inner_bad") + "^" * len("_inner_bad()")


_GLOBAL_NDARRAYS = [qd.ndarray(qd.f32, 4)]


@qd.kernel
def _reads_a_global_ndarray():
    for i in range(4):
        _GLOBAL_NDARRAYS[0][i] = i  # err:global-ndarray


def test_a_global_ndarray_is_refused_with_what_to_do():
    # quadrants raises its compilation error for it (QuadrantsCompilationError), not a type error
    with pytest.raises(qd.QdCompileError, match="pass it as an argument") as e:
        _reads_a_global_ndarray()
    check_error(e.value, qd.QdCompileError, "global-ndarray", node="_GLOBAL_NDARRAYS[0]")


@qd.kernel
def _slices_with_a_variable(i: qd.i32) -> qd.i32:
    a = qd.Vector([0, 1, 2, 3, 4, 5, 6])
    b = a[i::2]  # err:slice-variable
    return b[0]


def test_a_slice_with_a_run_time_bound_is_refused_in_quadrants_words():
    with pytest.raises(qd.QdCompileError, match="does not support variables in slice now") as e:
        _slices_with_a_variable(1)
    check_error(e.value, qd.QdTypeError, "slice-variable", node="i")
