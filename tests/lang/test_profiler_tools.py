"""`qd.profiler` (the kernel profiler under `qd.init(kernel_profiler=True)`, its tables and
queries, the scoped and memory profilers) and `qd.tools` (the PLY and VTK writers), each
compared with quadrants 1.3.3 running the same program text.

quadrants records each task of a kernel (`fill_c60_0_kernel_0_range_for`); qd records each
launch under the kernel's name (`fill_c60_0`), the prefix of those names. So the programs
compared here launch one-task kernels, and quadrants' task suffix is dropped before comparing.
Times differ from run to run: a number with a decimal point is compared by its width only, and
the count table's rows (ordered by total time) as a set.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import warnings

import numpy as np
import pytest

import qd
from qd.compile import profiler
from tests._support import quadrants_oracle

# ---------------------------------------------------------------- comparing printed tables


def normalized(text: str) -> list[str]:
    """Lines of a program's output with quadrants' task suffixes dropped and each time replaced
    (with the blanks that pad it) by `#`s of that width; the rows of a count table (between its two rules) sorted."""
    lines = [re.sub(r"_kernel_\d+_[a-z_]+$", "", line) for line in text.splitlines()]
    lines = [re.sub(r" *\d+\.\d+", lambda m: "#" * len(m.group()), line) for line in lines]
    out, rows, in_count = [], [], False
    for line in lines:
        if line.startswith("[      %     total"):
            in_count = True
        elif in_count and line.startswith("-") and rows:
            out += sorted(rows)
            rows, in_count = [], False
        elif in_count and line.startswith("[") and not line.startswith("[100.00%]"):
            rows.append(line)
            continue
        elif in_count and line.startswith("[100.00%]"):
            in_count = False
        out.append(line)
    return out


def test_normalized_can_tell_tables_apart():
    """The comparison itself: widths, names, counts and row sets all count; order of count rows
    and the digits of times do not."""
    a = "[  1.00%   0.000 s      2x |    0.005 ms] f_c60_0_kernel_0_range_for"
    b = "[ 99.00%   0.000 s      2x |    0.125 ms] f_c60_0"
    assert normalized(a) == normalized(b)
    assert normalized(a) != normalized(b.replace("2x", "3x"))
    assert normalized(a) != normalized(b.replace("f_c60_0", "f_c62_0"))
    assert normalized(a) != normalized(b.replace("0.125", "  0.125"))  # a column's width
    head = "[      %     total   count |      min       avg       max   ] Kernel name\n-----\n"
    rows = "[ 1.0% 2x] a\n[ 2.0% 1x] b\n"
    flipped = "[ 2.0% 1x] b\n[ 1.0% 2x] a\n"
    assert normalized(head + rows + "-----") == normalized(head + flipped + "-----")
    assert normalized(head + rows + "-----") != normalized(head + rows.replace("1x", "4x") + "-----")


PROFILER_PROGRAM = """
import quadrants as qd
qd.init(arch=qd.cpu, kernel_profiler=True, offline_cache=False)
x = qd.field(qd.f32, shape=64)

@qd.kernel
def fill(v: qd.f32, t: qd.template()):
    for i in x:
        x[i] = v + t

@qd.kernel
def scale(s: qd.f32):
    for i in range(64):
        x[i] *= s

for _ in range(3):
    fill(1.0, 1)
fill(1.0, 2)
scale(2.0)
scale(0.5)
print(hasattr(qd, "print_kernel_profiler_info"), qd.cfg.kernel_profiler)
qd.profiler.print_kernel_profiler_info()
qd.profiler.print_kernel_profiler_info("trace")
for name in ["fill", "fill_c60_1", "scale", "sc.le", "nothing"]:
    r = qd.profiler.query_kernel_profiler_info(name)
    print(name, r.counter, type(r.min).__name__, r.min <= r.avg <= r.max, r.counter == 0 or r.min > 0)
total = qd.profiler.get_kernel_profiler_total_time()
print(type(total).__name__, total > 0, total < 1.0)
print(qd.profiler.set_kernel_profiler_toolkit("default"), qd.profiler.set_kernel_profiler_toolkit("cupti"))
qd.profiler.clear_kernel_profiler_info()
print(qd.profiler.get_kernel_profiler_total_time(), qd.profiler.query_kernel_profiler_info("fill").counter)
scale(1.0)
qd.profiler.print_kernel_profiler_info()
qd.init(arch=qd.cpu, kernel_profiler=True, offline_cache=False)
x = qd.field(qd.f32, shape=64)
qd.profiler.print_kernel_profiler_info()
fill(3.0, 2)
qd.profiler.print_kernel_profiler_info("trace")
qd.profiler.print_memory_profiler_info()
qd.init(arch=qd.cpu)
print(qd.profiler.print_kernel_profiler_info(), qd.profiler.query_kernel_profiler_info("fill"),
      qd.profiler.get_kernel_profiler_total_time(), qd.profiler.set_kernel_profiler_toolkit("default"))
"""


@pytest.mark.slow  # two interpreters
def test_profiler_tables_and_queries_as_in_quadrants(tmp_path):
    ref, got = quadrants_oracle.both(tmp_path, PROFILER_PROGRAM)
    want, have = normalized(ref), normalized(got)
    assert "fill_c60_1" in ref and "scale_c62_0" in ref  # the programs' names, as numbered there
    want = [line for line in want if not line.startswith("SNode")]  # quadrants' placement tree
    assert have == want


# ---------------------------------------------------------------- the kernel profiler in this process


@pytest.fixture
def profiled():
    qd.init(arch=qd.cpu, kernel_profiler=True, offline_cache=False)
    yield
    qd.init(arch=qd.cpu)


def test_names_count_launches_per_kernel_and_specialisation(profiled, capsys):
    a = qd.field(qd.i32, shape=8)

    @qd.kernel
    def put(v: qd.i32, t: qd.template()):
        for i in a:
            a[i] = v + t

    for t in (1, 2, 1, 1):
        put(5, t)
    first = re.escape(put.fn.__name__) + r"_c(\d+)_0"
    r0 = qd.profiler.query_kernel_profiler_info(f"{put.fn.__name__}_c{put.number}_0")
    r1 = qd.profiler.query_kernel_profiler_info(f"{put.fn.__name__}_c{put.number}_1")
    assert (r0.counter, r1.counter) == (3, 1)
    assert 0 < r0.min <= r0.avg <= r0.max
    qd.profiler.print_kernel_profiler_info("trace")
    names = [line.rsplit("] ", 1)[1] for line in capsys.readouterr().out.splitlines() if " ms ] " in line]
    assert len(names) == 4 and re.fullmatch(first, names[0]) and names[1].endswith("_1")
    assert put.number % 2 == 0 and put.number >= 60  # quadrants' numbering: two per kernel after its own 30
    total_ms = sum(r.avg * r.counter for r in (r0, r1))
    assert qd.profiler.get_kernel_profiler_total_time() * 1000 == pytest.approx(total_ms)


def test_a_launch_is_one_record_even_through_the_aliasing_twin(profiled):
    @qd.kernel
    def shift(src: qd.types.NDArray[qd.f32, 1], dst: qd.types.NDArray[qd.f32, 1]):
        for i in range(src.shape[0] - 1):
            dst[i + 1] = src[i]

    a = np.arange(5, dtype=np.float32)
    shift(a, a)  # the same array twice: the variant compiled for aliasing arguments runs it
    shift(a, np.zeros(5, np.float32))
    assert qd.profiler.query_kernel_profiler_info("shift").counter == 2


def test_the_launcher_is_wrapped_only_under_the_option():
    """Without `kernel_profiler=True` the launch path is exactly the launcher: nothing to pay."""
    for on in (False, True):
        qd.init(arch=qd.cpu, kernel_profiler=on)

        @qd.kernel
        def one(v: qd.types.NDArray[qd.f32, 1]):
            for i in range(v.shape[0]):
                v[i] = 1.0

        one(np.zeros(3, np.float32))
        (variant,) = one.variants.values()
        assert hasattr(variant.launch, "__wrapped__") is on
        assert one._fast is variant.launch
    qd.init(arch=qd.cpu)


def test_records_belong_to_one_init(profiled):
    @qd.kernel
    def k():
        pass

    k()
    assert qd.profiler.query_kernel_profiler_info("k_c").counter == 1
    qd.init(arch=qd.cpu, kernel_profiler=True)
    assert qd.profiler.get_kernel_profiler_total_time() == 0.0
    k()
    assert qd.profiler.query_kernel_profiler_info(f"k_c{k.number}_0").counter == 1  # the same instance number


def test_query_adds_matching_names_of_the_same_count_and_warns_on_others(capsys):
    records = [("a_c60_0", 1.0), ("a_c60_1", 2.0), ("a_c60_0", 3.0), ("a_c60_1", 4.0), ("b_c62_0", 8.0)]
    qd.init(arch=qd.cpu, kernel_profiler=True)
    profiler._current().extend(records)
    r = qd.profiler.query_kernel_profiler_info("a")
    assert (r.counter, r.min, r.max, r.avg) == (2, 1.0 + 2.0, 3.0 + 4.0, 2.0 + 3.0)
    r = qd.profiler.query_kernel_profiler_info("")
    assert r.counter == 2 and "counter(2) != b_c62_0.counter(1)" in capsys.readouterr().err
    qd.profiler.print_kernel_profiler_info()
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("[") and "x |" in line]
    assert [row.split()[-1] for row in rows] == ["b_c62_0", "a_c60_1", "a_c60_0"]  # largest total first
    assert rows[0].startswith("[ 44.44%   0.008 s      1x |    8.000     8.000     8.000 ms]")
    with pytest.raises(ValueError, match="'count' or 'trace'"):
        qd.profiler.print_kernel_profiler_info("table")
    qd.init(arch=qd.cpu)


def test_off_it_warns_and_answers_nothing(capsys):
    qd.init(arch=qd.cpu)
    assert qd.profiler.query_kernel_profiler_info("k") is None
    assert qd.profiler.get_kernel_profiler_total_time() == 0.0
    assert qd.profiler.print_kernel_profiler_info() is None
    assert "kernel_profiler = True" in capsys.readouterr().err


def test_kernel_profiler_is_an_option_of_init_not_an_ignored_one():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # quadrants-only options warn; this one is qd's own now
        qd.init(arch=qd.cpu, kernel_profiler=True)
    assert qd.cfg.kernel_profiler is True and qd.lang.config.current().kernel_profiler is True
    qd.init(arch=qd.cpu)
    assert qd.cfg.kernel_profiler is False


def test_scoped_profiler_prints_the_compile_phases(capsys):
    qd.init(arch=qd.cpu, offline_cache=False)
    qd.profiler.clear_scoped_profiler_info()
    qd.profiler.print_scoped_profiler_info()
    assert "frontend" not in capsys.readouterr().out

    @qd.kernel
    def k(v: qd.types.NDArray[qd.f32, 1]):
        v[0] = 1.0

    k(np.zeros(1, np.float32))
    qd.profiler.print_scoped_profiler_info()
    out = capsys.readouterr().out
    assert re.search(r"ms +\d+\.\d\d%  frontend +\[1 x", out) and "llvm" in out


# ---------------------------------------------------------------- qd.tools

PLY_PROGRAM = """
import os
import numpy as np
import quadrants as qd
out = "out_" + qd.__name__
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(7)
n = 6
w = qd.tools.PLYWriter(num_vertices=n, num_faces=4, comment="made by a test")
w.add_vertex_pos(rng.random(n), rng.random(n), rng.random(n))
w.add_vertex_normal(rng.random(n), rng.random(n), rng.random(n))
w.add_vertex_rgba(rng.random(n), rng.random(n), rng.random(n), rng.random(n))
w.add_vertex_id()
w.add_vertex_channel("flags", "uchar", np.arange(n) * 40)
w.add_vertex_channel("temp", "double", rng.random(n) * 1e3)
w.add_vertex_channel("uv", "float", rng.random((n, 2)))
w.add_vertex_channel("bad", "half", rng.random(n))
w.add_vertex_channel("x", "short", np.arange(n))
w.add_faces(np.array([[0, 1, 2], [2, 3, 4], [4, 5, 0], [1, 3, 5]]))
w.add_face_id()
w.add_face_channel("area", "float", rng.random(4))
w.add_face_piece(np.array([1, 1, 2, 2]))
w.export(f"{out}/tri.ply")
w.export_ascii(f"{out}/tri_ascii.ply")
w.export_frame(3, f"{out}/frame.ply")
w.export_frame_ascii(12, f"{out}/frame")
q = qd.tools.PLYWriter(4, 1, "quad")
q.add_vertex_pos(np.arange(4.0), np.zeros(4), np.ones(4))
q.add_vertex_vel(np.ones(4), np.ones(4), np.ones(4))
q.add_vertex_color(np.ones(4), np.zeros(4), np.ones(4))
q.add_faces(np.arange(4))
q.export(f"{out}/quad.ply")
q.export_ascii(f"{out}/quad_ascii.ply")
p = qd.tools.PLYWriter(3)
p.add_vertex_pos(np.arange(3), np.arange(3), np.arange(3))
p.add_vertex_alpha(np.ones(3))
p.add_vertex_piece(np.array([4, 5, 6]))
p.export(f"{out}/points.ply")
p.export_ascii(f"{out}/points_ascii.ply")
for bad in (lambda: qd.tools.PLYWriter(0), lambda: qd.tools.PLYWriter(3, 1, "hex"),
            lambda: qd.tools.PLYWriter(3, 1).export(f"{out}/unset.ply"),
            lambda: qd.tools.PLYWriter(3).export(f"{out}/nopos.ply"),
            lambda: qd.tools.PLYWriter(3).add_vertex_channel("a", "float", np.ones(4))):
    try:
        bad()
    except AssertionError as e:
        print("AssertionError", e)
for name in sorted(os.listdir(out)):
    print(name)
"""


@pytest.mark.slow  # two interpreters
def test_ply_files_are_the_bytes_quadrants_writes(tmp_path):
    ref, got = quadrants_oracle.both(tmp_path, PLY_PROGRAM)
    assert ref == got and "duplicate key x" in got and "Unknown type half" in got
    files = sorted(p.name for p in (tmp_path / "out_quadrants").iterdir())
    assert files == sorted(p.name for p in (tmp_path / "out_qd").iterdir()) and "frame_000003.ply" in files
    for name in files:
        assert (tmp_path / "out_qd" / name).read_bytes() == (tmp_path / "out_quadrants" / name).read_bytes(), name


def test_ply_binary_rows_in_channel_types(tmp_path):
    w = qd.tools.PLYWriter(2, 1)
    w.add_vertex_pos(np.array([1.5, 2.5]), np.zeros(2), np.zeros(2))
    w.add_vertex_channel("c", "uchar", np.array([7, 9]))
    w.add_faces(np.array([0, 1, 1]))
    w.export(str(tmp_path / "a.ply"))
    data = (tmp_path / "a.ply").read_bytes()
    header, body = data.split(b"end_header\n")
    assert b"property uchar c\n" in header and b"element face 1\n" in header
    row = np.array([(1.5, 0, 0, 7)], dtype=[("x", "f4"), ("y", "f4"), ("z", "f4"), ("c", "u1")]).tobytes()
    face = bytes([3]) + np.array([0, 1, 1], np.int32).tobytes()
    assert body == row + np.array([(2.5, 0, 0, 9)], dtype=[("x", "f4"), ("y", "f4"), ("z", "f4"),
                                                            ("c", "u1")]).tobytes() + face


VTK_PROGRAM = """
import os
import numpy as np
import quadrants as qd
qd.init(arch=qd.cpu)
out = "out_" + qd.__name__
os.makedirs(out, exist_ok=True)
os.chdir(out)  # the file name is also the data's name in the file
f2 = qd.field(qd.f32, shape=(4, 3))
f3 = qd.field(qd.f64, shape=(3, 2, 5))
i3 = qd.field(qd.i32, shape=(2, 2, 2))
f2.from_numpy(np.arange(12, dtype=np.float32).reshape(4, 3) / 7)
f3.from_numpy(np.linspace(-1, 1, 30).reshape(3, 2, 5))
i3.from_numpy(np.arange(8, dtype=np.int32).reshape(2, 2, 2))
qd.tools.vtk.write_vtk(f2, "plane")
qd.tools.write_vtk(f3, "volume")
qd.tools.write_vtk(i3, "ints")
try:
    qd.tools.write_vtk(qd.field(qd.f32, shape=5), "line")
except ValueError as e:
    print("ValueError", e)
print([hasattr(qd.tools, n) for n in ("np2ply", "vtk", "diagnose", "PLYWriter", "write_vtk", "imwrite")])
for name in sorted(os.listdir()):
    print(name)
"""


@pytest.mark.slow  # two interpreters
def test_vtk_files_are_the_bytes_quadrants_writes(tmp_path):
    pytest.importorskip("pyevtk")
    ref, got = quadrants_oracle.both(tmp_path, VTK_PROGRAM)
    assert ref == got and "volume.vtr" in got
    for name in ("plane.vtr", "volume.vtr", "ints.vtr"):
        assert (tmp_path / "out_qd" / name).read_bytes() == (tmp_path / "out_quadrants" / name).read_bytes(), name


def test_tools_load_on_use_and_under_quadrants_module_paths():
    """`import qd` imports neither pyevtk nor subprocess for `qd.tools`; its modules have one
    identity under every name."""
    import qd.tools.np2ply
    import qd.tools.vtk

    assert qd.tools.np2ply.PLYWriter is qd.tools.PLYWriter is sys.modules["qd.lang.tools.np2ply"].PLYWriter
    assert sys.modules["qd.tools.vtk"] is qd.tools.vtk and sys.modules["qd.profiler"] is qd.profiler


@pytest.mark.slow  # starts interpreters
def test_diagnose_reports_the_cpu(capsys):
    qd.tools.diagnose.main()
    out = capsys.readouterr().out
    assert out.startswith("qd system diagnose:") and "\ncpu: True\n" in out and f"python: {sys.version}" in out


STANDIN_PROGRAM = """
import numpy as np
import quadrants as qd
import quadrants.tools.vtk
from quadrants.profiler import print_kernel_profiler_info, query_kernel_profiler_info
from quadrants.tools.np2ply import PLYWriter

qd.init(arch=qd.cpu, kernel_profiler=True)

@qd.kernel
def twice(a: qd.types.NDArray[qd.f32, 1]):
    for i in range(a.shape[0]):
        a[i] *= 2

a = np.ones(4, np.float32)
for _ in range(5):
    twice(a)
print(a.tolist(), query_kernel_profiler_info("twice").counter, PLYWriter is qd.tools.PLYWriter,
      quadrants.tools.vtk.write_vtk is qd.tools.vtk.write_vtk, qd.cfg.kernel_profiler)
"""


@pytest.mark.slow  # two interpreters
def test_quadrants_module_paths_under_the_stand_in(tmp_path):
    """A quadrants program importing `quadrants.profiler` and `quadrants.tools.*` runs unmodified
    under `python -m qd.standin`, with quadrants' results."""
    script = tmp_path / "prog.py"
    script.write_text(STANDIN_PROGRAM)
    env = {**os.environ, "PYTHONPATH": str(quadrants_oracle.ROOT)}
    ref = quadrants_oracle.run(tmp_path, STANDIN_PROGRAM, on_qd=False)
    p = subprocess.run([sys.executable, "-m", "qd.standin", str(script)], capture_output=True, text=True, env=env,
                       cwd=tmp_path, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    assert p.stdout.strip() == ref == "[32.0, 32.0, 32.0, 32.0] 5 True True True"
