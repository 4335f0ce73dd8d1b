"""The disk cache: a second process skips compilation; stale or damaged entries are never used."""

import json
import os
import stat
import subprocess
import sys
import textwrap

import pytest
from _env import child_env

pytestmark = pytest.mark.slow  # starts Python processes

HELPER = textwrap.dedent("""
    import qd

    @qd.func
    def scale(v: qd.f32) -> qd.f32:
        return v * {factor}
""")

PROGRAM = textwrap.dedent("""
    import dataclasses, json, os, sys, typing, warnings
    import numpy as np
    import qd
    import helper

    qd.init(arch=qd.cpu, offline_cache_file_path=sys.argv[1], offline_cache=sys.argv[2] == "on")
    OFFSET = float(os.environ.get("OFFSET", "0"))

    @dataclasses.dataclass
    class State:
        x: qd.types.NDArray[qd.f32, 1]
        spare: qd.types.NDArray[qd.f32, 1]
        n: typing.Final[int]

    @qd.kernel(fastcache=True)
    def step(s: State, twice: qd.template()) -> qd.f32:
        for i in range(s.n):
            s.x[i] = helper.scale(s.x[i]) + OFFSET
            if qd.static(twice):
                s.x[i] = helper.scale(s.x[i])
        return s.x[0]

    @qd.kernel
    def plain(x: qd.types.NDArray[qd.f32, 1]):
        for i in range(x.shape[0]):
            x[i] += 1.0

    out = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for twice in (False, True):
            s = State(np.arange(4, dtype=np.float32), np.zeros(4, np.float32), 3)
            r = step(s, twice)
            info = qd.launch_info(step)
            out[str(twice)] = {"x": s.x.tolist(), "ret": r, "source": info.source, "kept": list(info.kept)}
        plain(np.zeros(2, np.float32))
        out["explain"] = qd.explain(step, "s.spare")
    out["warnings"] = [str(w.message) for w in caught]
    print(json.dumps(out))
""")


@pytest.fixture
def project(tmp_path):
    (tmp_path / "helper.py").write_text(HELPER.format(factor=2.0))
    (tmp_path / "prog.py").write_text(PROGRAM)
    return tmp_path


def run(project, cache="on", **env):
    e = child_env(**env)
    r = subprocess.run([sys.executable, "prog.py", str(project / "cache"), cache], cwd=project, env=e,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def entries(project):
    d = project / "cache" / "fastcache"
    return sorted(p for p in d.glob("*.qdk")) if d.exists() else []


def test_second_process_loads_from_disk(project):
    first = run(project)
    assert first["False"]["source"] == first["True"]["source"] == "compile"
    assert first["False"]["x"] == [0.0, 2.0, 4.0, 3.0] and first["True"]["x"] == [0.0, 4.0, 8.0, 3.0]
    assert first["False"]["kept"] == ["s.x"]
    assert len(entries(project)) == 2  # one per specialisation; the plain kernel is not cached
    mode = stat.S_IMODE(os.stat(project / "cache" / "fastcache").st_mode)
    assert mode == 0o700
    second = run(project)
    for flag in ("False", "True"):
        assert second[flag]["source"] == "disk"
        assert second[flag]["x"] == first[flag]["x"] and second[flag]["kept"] == first[flag]["kept"]
    assert "s.spare is pruned" in second["explain"] and second["explain"] == first["explain"]


def test_edited_helper_in_another_file_is_a_miss(project):
    run(project)
    (project / "helper.py").write_text(HELPER.format(factor=3.0))
    again = run(project)
    assert again["False"]["source"] == "compile"
    assert again["False"]["x"] == [0.0, 3.0, 6.0, 3.0]


def test_changed_global_constant_is_a_miss(project):
    run(project)
    shifted = run(project, OFFSET="10")
    assert shifted["False"]["source"] == "compile"
    assert shifted["False"]["x"] == [10.0, 12.0, 14.0, 3.0]
    assert run(project, OFFSET="10")["False"]["source"] == "disk"


@pytest.mark.parametrize("damage", ["garbage", "truncate", "flip"])
def test_damaged_entry_is_rebuilt_with_a_warning(project, damage):
    run(project)
    for p in entries(project):
        data = p.read_bytes()
        if damage == "garbage":
            p.write_bytes(b"not a cache entry")
        elif damage == "truncate":
            p.write_bytes(data[: len(data) // 2])
        else:
            p.write_bytes(data[:100] + bytes([data[100] ^ 0xFF]) + data[101:])
    again = run(project)
    assert again["False"]["source"] == "compile" and again["False"]["x"] == [0.0, 2.0, 4.0, 3.0]
    assert any("corrupt entry" in w for w in again["warnings"])
    assert run(project)["False"]["source"] == "disk"


def test_offline_cache_off_writes_nothing(project):
    out = run(project, cache="off")
    assert out["False"]["source"] == "compile"
    assert entries(project) == []


def test_edit_to_an_unrelated_function_in_the_same_file_still_hits(project):
    prog = project / "prog.py"
    prog.write_text(prog.read_text() + "\n\ndef unrelated():\n    return 1\n")
    run(project)
    prog.write_text(prog.read_text().replace("return 1", "return 2"))
    assert run(project)["False"]["source"] == "disk"


STATE = textwrap.dedent("""
    import dataclasses
    import qd

    @dataclasses.dataclass
    class State:
        x: qd.types.NDArray[qd.{dtype}, 1]
""")

USER = textwrap.dedent("""
    import json, sys
    import numpy as np
    import qd
    from state import State

    qd.init(arch=qd.cpu, offline_cache_file_path=sys.argv[1])

    @qd.kernel(fastcache=True)
    def half(s: State):
        for i in range(s.x.shape[0]):
            s.x[i] = s.x[i] / 2.0

    dt = np.float64 if sys.argv[2] == "f64" else np.float32
    s = State(np.arange(4, dtype=dt) + 1)
    half(s)
    print(json.dumps({"x": s.x.tolist(), "source": qd.launch_info(half).source}))
""")


def test_dataclass_edited_in_another_file_is_a_miss(tmp_path):
    (tmp_path / "state.py").write_text(STATE.format(dtype="f32"))
    (tmp_path / "user.py").write_text(USER)
    env = child_env()

    def go(dt):
        r = subprocess.run([sys.executable, "user.py", str(tmp_path / "cache"), dt], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout.strip().splitlines()[-1])

    assert go("f32")["source"] == "compile"
    assert go("f32")["source"] == "disk"
    (tmp_path / "state.py").write_text(STATE.format(dtype="f64"))
    out = go("f64")
    assert out == {"x": [0.5, 1.0, 1.5, 2.0], "source": "compile"}


LOOPS = textwrap.dedent("""
    import qd

    @qd.func
    def fill(x: qd.types.NDArray[qd.f32, 1]):
        for i in range(x.shape[0]):
            x[i] = {value}
""")

CALLER = textwrap.dedent("""
    import json, sys
    import numpy as np
    import qd
    import loops

    qd.init(arch=qd.cpu, offline_cache_file_path=sys.argv[1])

    @qd.kernel(fastcache=True)
    def k(x: qd.types.NDArray[qd.f32, 1]):
        loops.fill(x)  # a func with a top-level loop: lowered in place, no instantiation of its own

    x = np.zeros(3, np.float32)
    k(x)
    print(json.dumps({"x": x.tolist(), "source": qd.launch_info(k).source}))
""")


def test_edit_of_a_func_lowered_in_place_is_a_miss(tmp_path):
    (tmp_path / "loops.py").write_text(LOOPS.format(value="1.0"))
    (tmp_path / "caller.py").write_text(CALLER)
    env = child_env()

    def go():
        r = subprocess.run([sys.executable, "caller.py", str(tmp_path / "cache")], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout.strip().splitlines()[-1])

    assert go() == {"x": [1.0, 1.0, 1.0], "source": "compile"}
    assert go()["source"] == "disk"
    (tmp_path / "loops.py").write_text(LOOPS.format(value="7.0"))
    assert go() == {"x": [7.0, 7.0, 7.0], "source": "compile"}
