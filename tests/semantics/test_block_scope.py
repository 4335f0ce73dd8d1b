"""Block scope, as in quadrants: a variable first assigned inside a run-time if or loop body
(and a loop's own variables) ends with that block, so reading it afterwards is a located
`QdNameError` instead of a value that may never have been assigned. Variables assigned before
the block keep the values the block gives them; the taken arm of a static if is no block."""

import numpy as np
import pytest

import qd


@pytest.mark.parametrize("body", [
    "    if n > 0:\n        a = 7\n    return a\n",
    "    if n > 0:\n        pass\n    else:\n        a = 7\n    return a\n",
    "    i = 0\n    while i < n:\n        a = 5\n        i += 1\n    return a\n",
    "    for i in range(n):\n        a = i\n    return a\n",
    "    for i in range(n):\n        pass\n    return i\n",
    "    s = 0\n    for i in range(n):\n        for j in range(2):\n            t = j\n        s += t\n    return s\n",
])
def test_a_name_first_assigned_in_a_block_ends_with_it(tmp_path, arch, body):
    src = tmp_path / "scoped_kernel.py"
    src.write_text("import qd\n\n\n@qd.kernel\ndef k(n: qd.i32) -> qd.i32:\n" + body)
    ns: dict = {}
    exec(compile(src.read_text(), str(src), "exec"), ns)
    with pytest.raises(qd.QdNameError, match="is not defined here: it was first assigned inside the block") as e:
        ns["k"](3)
    assert e.value.loc is not None and e.value.loc.file == str(src)


def test_names_assigned_before_a_block_keep_its_values(arch):
    @qd.kernel
    def k(n: qd.i32, out: qd.types.NDArray[qd.i32, 1]):
        a = -1
        last = -1
        i = 0
        while i < n:
            a = i * 10
            i += 1
        for j in range(n):
            last = j
        if n > 2:
            a += 1
        out[0] = a
        out[1] = last
        out[2] = i

    for n, want in ((0, [-1, -1, 0]), (3, [21, 2, 3])):
        out = np.zeros(3, np.int32)
        k(n, out)
        np.testing.assert_array_equal(out, want)


def test_the_taken_arm_of_a_static_if_is_no_block(arch):
    @qd.kernel
    def k(flag: qd.template()) -> qd.i32:
        if qd.static(flag):
            a = 1
        else:
            a = 2
        return a

    assert (k(True), k(False)) == (1, 2)
