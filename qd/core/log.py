"""quadrants' logging surface (`qd._logging`, `qd.set_logging_level`, `qd.WARN`, ...).

Programs written for quadrants configure its log: they pass `log_level=qd.WARN` to `qd.init`,
call `qd.set_logging_level`, and replace the module's level functions with their own logger's
(`setattr(qd._logging, "warn", logger.info)`, then restore them with `_get_logging(level)`).
Levels are quadrants' strings, most verbose first; a message is printed when its level is at or
above the current one, on stderr, in quadrants' layout (`[W mm/dd/yy hh:mm:ss.mmm pid] [file:func@line]
msg`). qd's own diagnostics about user code stay located warnings and errors; this log is for
what a program itself chooses to log.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable

from .errors import QdConfigError, caller_loc

TRACE = "trace"
DEBUG = "debug"
INFO = "info"
WARN = "warn"
ERROR = "error"
CRITICAL = "critical"

supported_log_levels = [DEBUG, TRACE, INFO, WARN, ERROR, CRITICAL]  # quadrants' list, in its order
_RANK = {TRACE: 0, DEBUG: 1, INFO: 2, WARN: 3, ERROR: 4, CRITICAL: 5}
_level = INFO  # quadrants' default


def _checked(level: str) -> str:
    if level not in _RANK:
        raise QdConfigError(f"unknown logging level {level!r}; expected one of {', '.join(supported_log_levels)}",
                            caller_loc())
    return level


def set_logging_level(level: str) -> None:
    """Print messages of `level` and above from now on (`qd.init(log_level=...)` sets it too)."""
    global _level
    _level = _checked(level)


def is_logging_effective(level: str) -> bool:
    """Whether a message of `level` would be printed now."""
    return _RANK[_checked(level)] >= _RANK[_level]


def _get_logging(level: str) -> Callable[..., None]:
    """The function that logs at `level`: `msg.format(*args, **kwargs)`, prefixed with the caller's
    place, printed when the level is effective. Programs reinstall these after redirecting them."""
    _checked(level)
    tag = level[0].upper()

    def log(msg: str, *args, **kwargs) -> None:
        if _RANK[level] < _RANK[_level]:
            return
        text = msg.format(*args, **kwargs) if args or kwargs else str(msg)
        frame = sys._getframe(1)
        where = f"{os.path.basename(frame.f_code.co_filename)}:{frame.f_code.co_name}@{frame.f_lineno}"
        now = time.time()
        stamp = time.strftime("%m/%d/%y %H:%M:%S", time.localtime(now)) + f".{int(now * 1000) % 1000:03d}"
        print(f"[{tag} {stamp} {os.getpid()}] [{where}] {text}", file=sys.stderr)

    log.__name__ = log.__qualname__ = level
    return log


trace = _get_logging(TRACE)
debug = _get_logging(DEBUG)
info = _get_logging(INFO)
warn = _get_logging(WARN)
error = _get_logging(ERROR)
critical = _get_logging(CRITICAL)
