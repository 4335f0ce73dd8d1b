"""The launch path reads only kept leaves and reports where each variant came from."""

import dataclasses

import numpy as np
import pytest

import qd


class Exploding:
    """Stands in for a pruned field: any use of it by the launcher fails loudly."""

    def __getattr__(self, name):
        raise AssertionError(f"launcher touched a pruned argument (.{name})")


@dataclasses.dataclass
class Model:
    pos: qd.types.NDArray[qd.f32, 1]
    spare: qd.types.NDArray[qd.f32, 1]
    scale: qd.f32


@qd.kernel
def scale_pos(m: Model):
    for i in range(m.pos.shape[0]):
        m.pos[i] = m.pos[i] * m.scale


def test_pruned_field_is_never_read():
    pos = np.arange(8, dtype=np.float32)
    m = Model(pos, np.zeros(8, np.float32), 2.0)
    scale_pos(m)
    info = qd.launch_info(scale_pos)
    assert info.kept == ("m.pos", "m.scale")
    assert info.pruned == ("m.spare",)
    # A second launch goes through the generated fast path; the pruned member is an object
    # that fails on any attribute access, and must not be touched.
    m2 = Model(pos, Exploding(), 3.0)
    scale_pos(m2)
    np.testing.assert_array_equal(pos, np.arange(8, dtype=np.float32) * 6)


def test_prune_off_passes_every_leaf():
    qd.init(arch=qd.cpu, prune=False)
    pos = np.arange(4, dtype=np.float32)
    scale_pos(Model(pos, np.zeros(4, np.float32), 2.0))
    info = qd.launch_info(scale_pos)
    assert info.kept == ("m.pos", "m.spare", "m.scale") and info.pruned == ()
    with pytest.raises(qd.QdArgumentError):
        scale_pos(Model(pos, Exploding(), 2.0))


@qd.kernel
def add_one(x: qd.types.NDArray[qd.i32, 1], flag: qd.template()):
    for i in range(x.shape[0]):
        if qd.static(flag):
            x[i] += 1


def test_launch_info_sources_and_specialisations():
    x = np.zeros(4, np.int32)
    add_one(x, True)
    first = qd.launch_info(add_one)
    assert first.source == "compile"
    add_one(x, True)
    assert qd.launch_info(add_one).source == "memory"
    add_one(x, False)
    other = qd.launch_info(add_one)
    assert other.source == "compile" and other.specialization != first.specialization
    assert other.kept == ("x",) and first.kept == ("x",)
    add_one(x, True)
    again = qd.launch_info(add_one)
    assert again.source == "memory" and again.specialization == first.specialization
    np.testing.assert_array_equal(x, [3, 3, 3, 3])


@qd.kernel
def copy_into(src: qd.types.NDArray[qd.f32, 1], dst: qd.types.NDArray[qd.f32, 1]):
    for i in range(src.shape[0]):
        dst[i] = src[i] * 2.0


def test_aliased_arrays_take_the_safe_variant():
    a = np.arange(6, dtype=np.float32)
    copy_into(a, a)  # same buffer as input and output: must not use the noalias variant wrongly
    np.testing.assert_array_equal(a, np.arange(6, dtype=np.float32) * 2)
    b = np.arange(7, dtype=np.float32)
    copy_into(b[1:], b[:-1])  # overlapping views (element i+1 read, element i written)
    np.testing.assert_array_equal(b[:-1], np.arange(1, 7, dtype=np.float32) * 2)


def test_readonly_input_is_accepted_but_not_as_output():
    ro = np.ones(3, np.float32)
    ro.flags.writeable = False
    out = np.zeros(3, np.float32)
    copy_into(ro, out)
    np.testing.assert_array_equal(out, [2, 2, 2])
    with pytest.raises(qd.QdArgumentError, match="read-only"):
        copy_into(out, ro)


@qd.kernel
def copy_then_double(src: qd.types.NDArray[qd.f32, 1], dst: qd.types.NDArray[qd.f32, 1]):
    for i in range(src.shape[0]):
        dst[i] = src[i]
    for i in range(src.shape[0]):  # the second loop reads its arguments again
        dst[i] = dst[i] * 2.0


def test_concurrent_launches_from_python_threads():
    import threading

    arrays = [np.full(20_000, i, np.float32) for i in range(6)]
    copy_then_double(arrays[0], np.zeros(20_000, np.float32))  # compile first
    wrong = []

    def work(i):
        for _ in range(150):
            out = np.zeros(20_000, np.float32)
            copy_then_double(arrays[i], out)
            if not np.array_equal(out, 2.0 * arrays[i]):
                wrong.append(i)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert wrong == []
