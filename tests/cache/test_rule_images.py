"""The compiled rules kept between processes (`qd.cache.rule_images`): the first process that compiles
a kernel makes the image, later ones use it without parsing the rules; an image that was
tampered with, or copied under another image's name, is not used (the rules are compiled again
and the image made again), and results are right either way; `offline_cache=False` keeps none."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from _env import child_env

from qd.cache.rule_images import RuleImages

pytestmark = pytest.mark.slow  # starts Python processes

PROGRAM = textwrap.dedent("""
    import json, sys
    import numpy as np
    import qd_analysis.datalog.program as program
    import qd

    parsed = []
    real = program.build_program
    program.build_program = lambda sources: parsed.append(len(sources)) or real(sources)
    qd.init(arch=qd.cpu, offline_cache=sys.argv[1] == "on", offline_cache_file_path=sys.argv[2])

    @qd.kernel
    def axpy(x: qd.types.NDArray[qd.f32, 1], y: qd.types.NDArray[qd.f32, 1], unused: qd.types.NDArray[qd.f32, 1]):
        for i in range(x.shape[0]):
            y[i] += 2.0 * x[i]

    x = np.arange(4, dtype=np.float32)
    y = np.ones(4, np.float32)
    axpy(x, y, y)
    print(json.dumps({"y": y.tolist(), "kept": qd.launch_info(axpy).kept, "parsed": len(parsed)}))
""")


def _run(tmp_path, cache="on") -> dict:
    (tmp_path / "prog.py").write_text(PROGRAM)
    r = subprocess.run([sys.executable, "prog.py", cache, str(tmp_path / "kernels")], cwd=tmp_path,
                       env=child_env(XDG_CACHE_HOME=str(tmp_path / "home-cache")), capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["y"] == [1.0, 3.0, 5.0, 7.0] and out["kept"] == ["x", "y"]
    return out


def _images(tmp_path):
    d = tmp_path / "home-cache" / "qd" / "rules"
    return sorted(d.glob("rules-*.qdr")) if d.exists() else []


def test_the_first_process_makes_the_image_and_the_next_one_uses_it(tmp_path):
    assert _run(tmp_path)["parsed"] == 1
    (image,) = _images(tmp_path)
    assert image.name.startswith("rules-decide-") and image.stat().st_mode & 0o077 == 0
    before = image.read_bytes()
    assert _run(tmp_path)["parsed"] == 0  # the rules were neither parsed nor compiled
    assert image.read_bytes() == before


def test_an_image_whose_checksum_is_wrong_is_not_used(tmp_path):
    _run(tmp_path)
    (image,) = _images(tmp_path)
    good = image.read_bytes()
    image.write_bytes(good[:-32] + bytes(32))  # a well-formed image, but not authenticated with this user's secret
    assert _run(tmp_path)["parsed"] == 1
    assert RuleImages(image.parent).get(image.name[len("rules-"):-len(".qdr")]) is not None  # made again


def test_an_image_made_for_another_name_is_not_used(tmp_path):
    _run(tmp_path)
    (image,) = _images(tmp_path)
    store = RuleImages(image.parent)
    body = store.get(image.name[len("rules-"):-len(".qdr")])
    assert body is not None
    store.put("explain-elsewhere", body)  # authentic, with this user's secret, but for another name
    image.unlink()
    (image.parent / "rules-explain-elsewhere.qdr").rename(image)
    assert _run(tmp_path)["parsed"] == 1
    assert store.get(image.name[len("rules-"):-len(".qdr")]) == body  # made again under its own name


def test_no_image_without_the_disk_cache(tmp_path):
    assert _run(tmp_path, cache="off")["parsed"] == 1
    assert _images(tmp_path) == []
