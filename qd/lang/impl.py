"""`qd.lang.impl`: quadrants' host-side runtime object and configuration queries.

Libraries written for quadrants probe its runtime before choosing a code path (xuvdb reads
`get_runtime().prog` and `current_cfg().arch`, Genesis reads `current_cfg().debug`,
`get_runtime().default_fp` inside `qd.static(...)` and `get_max_shared_memory_bytes`). qd has no
separate program object: these answer from the configuration `qd.init` set, so a probe sees what
qd will actually do. `materialize()` has nothing to do (qd lays out fields when they are first
used); `clear()` and `reset()` drop the compiled kernels as quadrants' do.
"""

from __future__ import annotations

from ..core import dtypes as _dt
from ..core import variants as _variants
from ..core.errors import QdRuntimeError, caller_loc
from . import config as _config


def current_cfg() -> _config.ConfigView:
    """The configuration in force (`.arch`, `.debug`, `.default_fp`, ... as `qd.cfg` reads them)."""
    return _config.cfg


class Program:
    """What `get_runtime().prog` is: the program of the current configuration."""

    def config(self) -> _config.ConfigView:
        return _config.cfg

    def synchronize(self) -> None:
        _config.host().sync()

    def __repr__(self) -> str:
        return f"<qd program arch={_config.current().arch}>"


class PyQuadrants:
    """What `get_runtime()` returns: quadrants' runtime object (under its class name, since programs
    patch its methods: Genesis wraps `PyQuadrants.materialize` to run field fills it deferred),
    answered from qd's configuration. qd calls `materialize()` where quadrants does: before a
    kernel variant is first made in a process, before a field's memory is first handed to Python
    (element access, `to_numpy`, `to_torch`, `to_dlpack`) and in `qd.sync()`; `clear()` in `qd.reset()`."""

    _prog = Program()

    @property
    def prog(self) -> Program:
        return self._prog

    @property
    def default_fp(self) -> _dt.DType:
        return _config.current().default_fp

    @property
    def default_ip(self) -> _dt.DType:
        return _config.current().default_ip

    @property
    def default_up(self) -> _dt.DType:
        return _config.cfg.default_up

    @property
    def materialized(self) -> bool:
        return True

    def set_default_fp(self, fp) -> None:
        """quadrants' way to change the default float type: as `qd.init(default_fp=...)` does, keeping the rest."""
        self._reinit(default_fp=fp)

    def set_default_ip(self, ip) -> None:
        self._reinit(default_ip=ip)

    def _reinit(self, **change) -> None:
        c = _config.current()
        settings = {name: getattr(c, name) for name in _config.Config.__dataclass_fields__ if name != "generation"}
        settings.update(change)
        _config.init(**settings)

    def materialize(self) -> None:
        """Nothing of qd's own to do (a field's memory is laid out when it is first used); the hook
        programs extend."""

    def sync(self) -> None:
        """`qd.sync()`: materialize, then wait for the machine's queued work."""
        self.materialize()
        _config.host().sync()

    def clear(self) -> None:
        """Drop every compiled kernel (`qd.reset()` calls it before resetting the configuration)."""
        _variants.drop_all()

    def get_num_compiled_functions(self) -> int:
        return _variants.count()


Runtime = PyQuadrants
_runtime = PyQuadrants()


def get_runtime() -> PyQuadrants:
    """quadrants' runtime object (see `Runtime`)."""
    return _runtime


def reset() -> None:
    """`qd.reset()`: the runtime is cleared (every compiled kernel dropped), then the configuration is
    back to its defaults (the CPU, no debug, f32 / i32)."""
    _runtime.clear()
    _config.reset()


def default_cfg() -> _config.ConfigView:
    return _config.cfg


def get_max_shared_memory_bytes(*, is_lowerbound_ok: bool) -> int:
    """Shared memory per block in bytes: 0 on the CPU (it has none); on a GPU, the lower bound of
    its family when `is_lowerbound_ok`, else an error where qd does not query the device for it."""
    exact, lower_bound = _config.host().shared_memory_bytes
    if exact is not None:
        return exact
    if is_lowerbound_ok:
        return lower_bound
    raise QdRuntimeError(f"the shared memory size of arch {_config.current().arch} is not known exactly; pass "
                         "is_lowerbound_ok=True", caller_loc())


def inside_kernel() -> bool:
    """Whether a kernel is being compiled or run from this call (never, from Python scope)."""
    return False
