"""Fields a func reads out of a `qd.template()` argument (`x[k][i]` of a list of fields) are the
caller's: the func finds them through the caller's global or closure variable, and a func
instantiation is shared only by calls that reach the same variable, so two lists of fields of
one type never read each other's data."""

import _fields_helpers as helpers
import numpy as np

import qd

LISTED = [qd.field(qd.f32, shape=(4, 3)) for _ in range(2)]
OTHER = [qd.field(qd.f32, shape=(4, 3)) for _ in range(2)]
OUT = qd.field(qd.f32, shape=(4, 3))
PAIR = (qd.field(qd.i32, shape=(4, 3)), qd.field(qd.i32, shape=(4, 3)))


@qd.func
def pick(x: qd.template(), k: qd.template(), i, j):
    return x[k][i, j]


@qd.kernel
def from_listed(k: qd.template()):
    for i, j in OUT:
        OUT[i, j] = pick(LISTED, k, i, j) * 2


@qd.kernel
def from_other(k: qd.template()):
    for i, j in OUT:
        OUT[i, j] = pick(OTHER, k, i, j) * 2


@qd.kernel
def from_pair():
    for i, j in OUT:
        OUT[i, j] = helpers.read_second(PAIR, i, j)


def _data(seed):
    return np.random.default_rng(seed).random((4, 3)).astype(np.float32)


def test_two_lists_of_fields_of_one_type_are_read_each_from_its_own():
    data = {(w, k): _data(10 * w + k) for w in range(2) for k in range(2)}
    for w, fields in enumerate((LISTED, OTHER)):
        for k in range(2):
            fields[k].from_numpy(data[w, k])
    for k in (1, 0):
        from_listed(k)
        np.testing.assert_array_equal(OUT.to_numpy(), data[0, k] * 2)
        from_other(k)
        np.testing.assert_array_equal(OUT.to_numpy(), data[1, k] * 2)
    assert set(qd.launch_info(from_other).kept) == {"@" + __name__ + ".OTHER[0]", "@" + __name__ + ".OUT"}


def test_closure_lists_of_two_kernels_made_by_one_factory():
    def make(base):
        a = [qd.field(qd.f32, shape=(4, 3)) for _ in range(2)]

        @qd.kernel
        def fill(k: qd.template()):
            for i, j in a[k]:
                a[k][i, j] = base + k * 10 + i - j

        @qd.kernel
        def copy(k: qd.template()):
            for i, j in OUT:
                OUT[i, j] = pick(a, k, i, j)

        return fill, copy

    i, j = np.indices((4, 3))
    made = [make(0.0), make(500.0)]
    for fill, _ in made:
        fill(0)
        fill(1)
    for base, (_, copy) in zip((0.0, 500.0), made):
        for k in range(2):
            copy(k)
            np.testing.assert_array_equal(OUT.to_numpy(), base + k * 10 + i - j)


def test_a_func_of_another_module_reads_the_callers_tuple_of_fields():
    PAIR[1].from_numpy(np.arange(12, dtype=np.int32).reshape(4, 3))
    from_pair()
    np.testing.assert_array_equal(OUT.to_numpy(), np.arange(12).reshape(4, 3) + 1)


def test_a_rebound_element_is_read_at_the_next_launch():
    LISTED[1].from_numpy(_data(1))
    from_listed(1)
    old = LISTED[1]
    LISTED[1] = qd.field(qd.f32, shape=(4, 3))
    try:
        LISTED[1].from_numpy(_data(2))
        from_listed(1)
        np.testing.assert_array_equal(OUT.to_numpy(), _data(2) * 2)
    finally:
        LISTED[1] = old
