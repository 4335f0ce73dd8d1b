"""A field with an index offset is indexed from its offset wherever it reaches a kernel as
itself (a global, a `qd.template()` argument, a data-oriented member); an ndarray parameter
indexes from 0, so such a field given for one is refused, on the first launch and after a
variant for plain arrays exists. Fields without an offset pass as arrays."""

import dataclasses

import numpy as np
import pytest

import qd

DATA = np.arange(12, dtype=np.float32).reshape(4, 3)


def _offset_field(offset=(-1, 0)):
    f = qd.field(qd.f32, shape=(4, 3), offset=offset)
    f.from_numpy(DATA)
    return f


@qd.kernel
def read_arr(x: qd.types.NDArray[qd.f32, 2]) -> qd.f32:
    return x[1, 0]


@qd.kernel
def read_tpl(x: qd.template()) -> qd.f32:
    return x[1, 0]


@dataclasses.dataclass
class Holder:
    x: qd.types.NDArray


@qd.func
def first(s: Holder) -> qd.f32:
    return s.x[1, 0]


@qd.kernel
def read_holder(s: Holder) -> qd.f32:
    return first(s)


def test_ndarray_parameter_refuses_an_offset_field(arch):
    qd.init(arch=arch)
    with pytest.raises(qd.QdArgumentError, match="offset"):
        read_arr(_offset_field())
    assert read_arr(DATA + 100) == 103.0  # a variant for plain arrays now exists
    with pytest.raises(qd.QdArgumentError, match="offset"):
        read_arr(_offset_field())  # its fast path does not take the field either
    plain = qd.field(qd.f32, shape=(4, 3))
    plain.from_numpy(DATA)
    assert read_arr(plain) == DATA[1, 0]


def test_dataclass_member_refuses_an_offset_field(arch):
    qd.init(arch=arch)
    assert read_holder(Holder(DATA + 100)) == 103.0
    with pytest.raises(qd.QdArgumentError, match="offset"):
        read_holder(Holder(_offset_field()))


@pytest.mark.parametrize("offset", [(-1, 0), (0, 0), (1, -2)])
def test_template_field_is_indexed_from_its_offset(arch, offset):
    qd.init(arch=arch)
    f = _offset_field(offset)
    assert read_tpl(f) == DATA[1 - offset[0], 0 - offset[1]]
    g = _offset_field((-2, 0))  # another offset: another variant
    assert read_tpl(g) == DATA[3, 0]
    assert read_tpl(f) == DATA[1 - offset[0], 0 - offset[1]]


@qd.kernel(fastcache=True)
def read_tpl_cached(x: qd.template()) -> qd.f32:
    return x[1, 0]


def test_template_field_offset_survives_the_disk_cache(tmp_path):
    got = []
    for _ in range(2):
        qd.init(arch=qd.cpu, offline_cache_file_path=str(tmp_path))
        got.append((read_tpl_cached(_offset_field()), qd.launch_info(read_tpl_cached).source))
    assert [v for v, _ in got] == [DATA[2, 0]] * 2
    assert got[1][1] == "disk"


@qd.func
def pick(x: qd.types.NDArray) -> qd.f32:
    return x[1, 0]


@qd.kernel
def pick_open(x: qd.types.NDArray) -> qd.f32:
    return pick(x)


@qd.kernel
def pick_open_again(x: qd.types.NDArray) -> qd.f32:
    return pick(x)


def test_func_instances_are_keyed_by_element_shape(arch):
    """A vec3 array of shape (4,) and an f32 array of shape (4, 3) have the same components but
    not the same indexing: a func called with both gets two instantiations."""
    qd.init(arch=arch)
    assert pick_open(DATA) == DATA[1, 0]
    v = qd.Vector.ndarray(3, qd.f32, (4,))
    v.from_numpy(DATA)
    with pytest.raises(qd.QuadrantsIndexError, match="indexed with 2"):
        pick_open_again(v)
