"""`qd.init` with quadrants' keywords, `qd.reset` and `qd.cfg`.

Programs written for quadrants pass options qd has no use for (profilers, IR dumps, GPU memory
sizes); they must run unchanged, each warned about once per process (one short warning naming all of
an init's new ones), and `qd.cfg` must
read back what they set. A misspelt option is refused with the closest known name.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import qd
from qd.lang import config


def _init_collecting(**kwargs) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        qd.init(arch=qd.cpu, **kwargs)
    return [str(w.message) for w in caught if issubclass(w.category, qd.QdWarning)]


QUADRANTS_OPTIONS = {
    "print_full_traceback": True, "real_matrix_scalarize": False, "short_circuit_operators": False,
    "gdb_trigger": False, "cuda_stack_limit": 8192, "timeline": True,
    "advanced_optimization": False, "device_memory_GB": 2.0, "device_memory_fraction": 0.5,
    "gpu_max_reg": 64, "check_out_of_bound": True, "print_ir": False,
    "offline_cache_cleaning_policy": "never", "src_ll_cache": False,
    "print_non_pure": False, "unrolling_limit": 8,
}


@pytest.mark.parametrize("key", sorted(QUADRANTS_OPTIONS))
def test_every_quadrants_option_is_accepted_with_one_warning_per_process(key):
    config._warned.clear()
    first = _init_collecting(**{key: QUADRANTS_OPTIONS[key]})
    assert len(first) == 1 and repr(key) in first[0], first
    assert _init_collecting(**{key: QUADRANTS_OPTIONS[key]}) == []  # once per process
    assert getattr(qd.cfg, key) == QUADRANTS_OPTIONS[key]


def test_ignored_options_are_one_short_warning_located_once_per_process():
    """Genesis' `gs.init` passes seven such options at every start: one line names them all, Python
    prints its location and source line once each, and a second init warns about nothing it already did."""
    config._warned.clear()
    options = {"print_ir": False, "timeline": True, "device_memory_GB": 2.0, "gdb_trigger": False,
               "offline_cache_cleaning_policy": "never", "print_full_traceback": False, "unrolling_limit": 8}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        qd.init(arch=qd.cpu, **options)  # the call
    (w,) = [w for w in caught if issubclass(w.category, qd.QdWarning)]
    shown = warnings.formatwarning(w.message, w.category, w.filename, w.lineno)  # what Python prints
    assert w.filename == __file__ and shown.count(f"{__file__}:{w.lineno}") == 1
    head, source = shown.rstrip("\n").split("\n")
    assert all(repr(k) in head for k in options), head
    assert len(str(w.message)) <= 40 + sum(len(repr(k)) + 2 for k in options), head  # the names and a few words
    assert source.strip().endswith("# the call")
    assert _init_collecting(**options) == [] and _init_collecting(print_ir=True) == []
    (again,) = _init_collecting(print_ir=True, verbose=False)  # a new one is named, alone
    assert "'verbose'" in again and "'print_ir'" not in again


def test_num_compile_threads_is_qd_s_own_option():
    """It bounds the processes that compile one large module's parts (at most one per core)."""
    config._warned.clear()
    assert _init_collecting() == [] and qd.cfg.num_compile_threads == 4  # quadrants' default
    assert _init_collecting(num_compile_threads=2) == []  # no "has no effect" warning
    assert qd.cfg.num_compile_threads == 2
    for bad in (-1, 1.5, "two", True):
        with pytest.raises(qd.QdConfigError, match="num_compile_threads must be a positive integer"):
            qd.init(arch=qd.cpu, num_compile_threads=bad)


def test_unknown_option_names_the_closest_known_one():
    with pytest.raises(qd.QdConfigError) as ei:
        qd.init(arch=qd.cpu, fast_maths=False)
    assert "'fast_maths'" in str(ei.value) and "'fast_math'" in str(ei.value)
    assert __file__ in str(ei.value)  # located at this call
    with pytest.raises(qd.QdConfigError, match="default_ip"):
        qd.init(arch=qd.cpu, default_up=qd.u32)  # quadrants refuses it too: it follows default_ip


def test_cfg_reads_the_settings_in_force():
    qd.init(arch=qd.cpu, debug=True, default_fp=qd.f64, default_ip=qd.i64, offline_cache=False)
    assert qd.cfg.arch == qd.cpu
    assert qd.cfg.debug is True and qd.cfg.check_out_of_bound is True  # debug implies it, as in quadrants
    assert qd.cfg.default_fp == qd.f64 and qd.cfg.default_ip == qd.i64 and qd.cfg.default_up == qd.u64
    assert qd.cfg.offline_cache is False
    assert qd.cfg.opt_level == 1  # quadrants' default when not given
    assert qd.cfg.fast_math is True  # quadrants' default, and qd's
    qd.init(arch=qd.cpu, fast_math=False)
    assert qd.cfg.fast_math is False  # honoured
    with pytest.raises(AttributeError, match="opt_level"):
        qd.cfg.opt_levl  # noqa: B018
    with pytest.raises(qd.QdConfigError, match="read-only"):
        qd.cfg.debug = False


def test_reset_restores_defaults_and_drops_compiled_variants():
    qd.init(arch=qd.cpu, default_fp=qd.f64, debug=True)

    @qd.kernel
    def half(x: float) -> float:
        return x / 3

    assert half(1.0) == pytest.approx(1 / 3, rel=1e-15)  # f64 under default_fp=f64
    qd.reset()
    assert qd.cfg.default_fp == qd.f32 and qd.cfg.debug is False and qd.cfg.arch == qd.cpu
    # recompiled under the defaults: `float` is f32 again
    assert half(1.0) == pytest.approx(float(np.float32(1) / np.float32(3)), rel=1e-7)
    assert half(1.0) != pytest.approx(1 / 3, rel=1e-12)


def test_raise_on_templated_floats_refuses_float_compile_time_values():
    @qd.data_oriented
    class WithFloat:
        def __init__(self):
            self.n = 3
            self.scale = 1.5

    @qd.kernel
    def k(a: qd.template()) -> qd.i32:
        return 1

    for flag in (False, True):
        qd.init(arch=qd.cpu, raise_on_templated_floats=flag)
        assert qd.cfg.raise_on_templated_floats is flag
        assert k(123) == 1 and k((1, 2)) == 1
        for value in (1.25, WithFloat(), (1, 2.0)):
            if flag:
                with pytest.raises(ValueError, match="raise_on_templated_floats"):
                    k(value)
            else:
                assert k(value) == 1


def test_extensions_qd_supports_are_enabled_and_the_others_not():
    enabled = {e.name for e in qd.extension if qd.is_extension_enabled(e)}
    assert enabled == {"data64", "assertion"}
    assert not qd.is_extension_enabled(qd.extension.sparse) and not qd.is_extension_enabled(qd.extension.adstack)

    @qd.kernel
    def k():
        pass

    with pytest.raises(qd.QdCompileError):  # what a program that asked first expects of the missing adstack
        k.grad()
    with pytest.raises(qd.QdConfigError, match="qd.extension member"):
        qd.is_extension_enabled("not-an-extension")


def test_raise_on_templated_floats_refuses_float_globals_too():
    scale = 1.5
    count = 3

    @qd.kernel
    def reads_float() -> qd.f32:
        return scale * 2

    @qd.kernel
    def reads_int() -> qd.i32:
        return count

    @qd.kernel
    def decomposes() -> qd.f32:  # qd's own kernel-language code is not the user's globals
        u, s, v = qd.svd(qd.Matrix([[2.0, 0.0], [0.0, 1.0]]))
        return s[0, 0]

    assert reads_float() == 3.0
    qd.init(arch=qd.cpu, raise_on_templated_floats=True)
    with pytest.raises(qd.QdCompileError, match="Not permitted to access floats as global values: scale = 1.5"):
        reads_float()
    assert reads_int() == 3 and decomposes() == pytest.approx(2.0)


def test_an_unknown_option_is_a_key_error_as_in_quadrants():
    """quadrants 1.3.3 raises `KeyError` for a keyword `qd.init` does not know: an `except KeyError`
    written for it catches qd's error, which is still a located `QdConfigError`."""
    with pytest.raises(KeyError) as info:
        qd.init(arch=qd.cpu, fast_mth=True)
    assert isinstance(info.value, qd.QdConfigError)
    assert type(info.value).__name__ == "KeyError"
    assert "did you mean 'fast_math'" in str(info.value)
    assert "test_init_config.py" in str(info.value)
