"""The differential tester: qd against quadrants on a seeded slice of generated programs, and
the pieces that decide what counts as a difference.

The slice fails on a value divergence where the plain-Python reference agrees with quadrants
(a qd bug), on any crash or hang of qd, and on a program quadrants runs that qd refuses (unless
`runner.ALLOWED_REFUSALS` documents the construct). Divergences the reference blames on
quadrants, and programs quadrants refuses, are reported by `bench/difftest.py`, not failed.
"""

from __future__ import annotations

import numpy as np
import pytest

from difftest import compare, refqd, runner
from difftest.generator import generate

SLICE = range(0, 120)  # the seeds run on every test run (about 2 minutes)


def _failing(v: runner.Verdict) -> bool:
    if v.category == "differ":
        return v.verdict == "qd bug"
    return v.category in ("qd_crash", "qd_hang", "qd_refused")


def _line(v: runner.Verdict) -> str:
    what = v.verdict if v.category == "differ" else v.kind
    detail = "; ".join(v.detail[:2])
    return f"seed {v.seed}: {v.category}: {what} {detail}".strip()


@pytest.mark.slow
def test_generated_programs_agree_with_quadrants():
    ok, why = runner.quadrants_available()
    if not ok:
        pytest.skip(why)
    verdicts = runner.run_seeds(SLICE)
    skipped = [v for v in verdicts if v.category == "skipped"]
    assert len(skipped) < len(verdicts) / 2, (
        f"quadrants refused {len(skipped)} of {len(verdicts)} programs; is it working? "
        f"first: {skipped[0].kind if skipped else ''}")
    failures = [v for v in verdicts if _failing(v)]
    assert not failures, (
        f"{len(failures)} of {len(verdicts)} programs diverge (reproduce one with "
        "`python bench/difftest.py --seeds N:N+1`; the program is saved under bench/results/difftest/):\n"
        + "\n".join(_line(v) for v in failures))


# ---------------------------------------------------------------- the comparator


def test_compare_detects_a_value_difference():
    a = {"o": np.array([1.0, 2.0, 3.0], np.float32)}
    b = {"o": np.array([1.0, 2.5, 3.0], np.float32)}
    diff = compare.differences(a, b)
    assert len(diff) == 1 and "1 of 3 differ" in diff[0] and "(1,)" in diff[0]


def test_compare_floats_within_tolerance_agree():
    a = np.array([1.0, 1000.0, 0.0], np.float32)
    b = a + np.array([1e-6, 1e-2, 1e-6], np.float32)
    assert compare.agree({"x": a}, {"x": b})
    assert not compare.agree({"x": a}, {"x": a + np.float32(0.5)})


def test_compare_nan_equals_nan_and_inf_signs_matter():
    a = np.array([np.nan, np.inf, 1.0])
    assert compare.agree([a], [a.copy()])
    assert not compare.agree([a], [np.array([np.nan, -np.inf, 1.0])])
    assert not compare.agree([a], [np.array([0.0, np.inf, 1.0])])
    assert compare.agree(float("nan"), float("nan"))


def test_compare_integers_are_exact():
    big = np.array([2**40 + 1], np.int64)
    assert not compare.agree(big, big + 1)
    assert compare.agree(big, big.copy())
    assert not compare.agree(3, 4)
    assert compare.differences(3, 3.0)  # an int result where a float was expected is a difference


def test_compare_shapes_dtypes_and_keys():
    assert compare.differences(np.zeros(3, np.int32), np.zeros(3, np.int64))
    assert compare.differences(np.zeros(3), np.zeros((3, 1)))
    assert compare.differences({"a": 1}, {"b": 1})
    assert compare.differences([1, 2], [1, 2, 3])


# ---------------------------------------------------------------- classification


def _ok(out):
    return runner.SideResult("ok", out=out)


def test_classify_blames_the_side_the_reference_disagrees_with():
    qd, qa = _ok({"x": 1}), _ok({"x": 2})
    assert runner.classify(0, qd, qa, _ok({"x": 2})).verdict == "qd bug"
    assert runner.classify(0, qd, qa, _ok({"x": 1})).verdict == "quadrants bug"
    assert runner.classify(0, qd, qa, _ok({"x": 3})).verdict == "unresolved"
    assert runner.classify(0, qd, _ok({"x": 1})).category == "agree"


def test_classify_crashes_hangs_and_refusals():
    qa = _ok({})
    internal = runner.SideResult("error", etype="QdInternalError", mro=["QdInternalError", "QdError", "Exception"])
    refusal = runner.SideResult("error", etype="QdTypeError", mro=["QdTypeError", "QdError", "Exception"],
                                msg="f.py:3:4: something unsupported")
    python_error = runner.SideResult("error", etype="AttributeError", mro=["AttributeError", "Exception"])
    assert runner.classify(0, runner.SideResult("hang"), qa).category == "qd_hang"
    assert runner.classify(0, runner.SideResult("crash"), qa).category == "qd_crash"
    both = runner.classify(0, runner.SideResult("crash"), runner.SideResult("crash"))
    assert both.category == "skipped" and both.kind == "both sides crashed"
    assert runner.classify(0, runner.SideResult("crash"), runner.SideResult("hang")).category == "qd_crash"
    assert runner.classify(0, internal, qa).category == "qd_crash"
    assert runner.classify(0, python_error, qa).category == "qd_crash"
    assert runner.classify(0, refusal, qa).category == "qd_refused"
    quadrants_refuses = runner.SideResult("error", etype="QuadrantsSyntaxError", msg="no")
    v = runner.classify(0, refusal, quadrants_refuses)
    assert v.category == "skipped" and v.kind.startswith("QuadrantsSyntaxError")


# ---------------------------------------------------------------- generator and reference


def test_generator_is_deterministic_and_writes_python():
    for seed in (0, 1, 7):
        src = generate(seed)
        assert src == generate(seed)
        assert "\nimport qd\n" in src and "OUT = {}" in src
        compile(src, f"seed_{seed}.py", "exec")
    assert generate(0) != generate(1)


def test_reference_follows_quadrants_typing():
    u8 = refqd.scalar(np.uint8(250))
    assert (u8 + 10).t == "i32" and int(u8 + 10) == 260  # a literal is an i32 operand
    assert (refqd.cast(u8, refqd.i64) + 1).t == "i64"
    assert (refqd.cast(u8, refqd.u32) + 1).t == "u32"
    assert (refqd.scalar(7) / 2).t == "f32"
    i8 = refqd.cast(-13, refqd.i8)
    assert int(i8 // refqd.cast(6, refqd.i8)) == -3 and int(i8 % refqd.cast(6, refqd.i8)) == 5
    assert int(refqd.cast(300, refqd.u8)) == 44
    assert int(refqd.cast(refqd.scalar(-2.75), refqd.i32)) == -2


@pytest.mark.slow  # starts Python processes
def test_worker_survives_hangs_and_crashes(tmp_path):
    """A hung program is reported as a hang and a dying one as a crash; the next program still
    runs (in a fresh worker)."""
    (tmp_path / "ok.py").write_text("import numpy as np\nimport qd\nOUT = {'a': np.arange(3)}\n")
    (tmp_path / "hang.py").write_text("import qd\nwhile True:\n    pass\n")
    (tmp_path / "crash.py").write_text("import os\nimport qd\nos.abort()\n")
    w = runner.Worker("ref", tmp_path, timeout=2.0)
    try:
        got = [w.run(i, tmp_path / f) for i, f in enumerate(["ok.py", "hang.py", "ok.py", "crash.py", "ok.py"])]
    finally:
        w.close()
    assert [r.status for r in got] == ["ok", "hang", "ok", "crash", "ok"]
    assert compare.agree(got[-1].out, {"a": np.arange(3)})
