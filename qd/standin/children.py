"""The stand-in in `multiprocessing` children: a program run under the stand-in gets qd for quadrants
in every process it starts, whatever the start method.

A child made by `fork` inherits the stand-in. One started by `spawn` or `forkserver` is a fresh
interpreter, which imports the program's main script again (as `__mp_main__`) before it runs its
target, and would import the real quadrants (or fail, where none is installed) unless the stand-in
is in place first:

- spawn: the preparation data a child applies before importing the main script carries a stowaway
  (`multiprocessing.spawn.get_preparation_data`, as coverage.py carries its own), and unpickling it
  installs the stand-in. The child has not taken the parent's `sys.path` yet at that point, so the
  stowaway imports qd from the directory the parent's qd came from.
- forkserver: a child forked from the server unpickles the same stowaway. The server must not have
  imported the main script (nor quadrants) before: it preloads no main script, so each child
  imports it itself, as a spawned child does, under the stand-in. Modules the program asks the
  server to preload (`set_forkserver_preload`) are preloaded after `qd.standin.forkserver`, which
  installs the stand-in there; that one is found on the server's own `sys.path` (its working
  directory, `PYTHONPATH`, site-packages), as those modules are.
"""

from __future__ import annotations

import multiprocessing.spawn as _spawn
import os

try:
    import multiprocessing.forkserver as _forkserver
except ImportError:  # a platform without fork (Windows) has no forkserver
    _forkserver = None

__all__ = ["follow", "unfollow"]

PRELOAD = "qd.standin.forkserver"  # the module whose import installs the stand-in
_KEY = "qd_standin"  # the stowaway's key in the preparation data (`prepare` ignores keys it does not know)
_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # holds the qd package
_INSTALL = f"""
import sys
sys.path.insert(0, {_ROOT!r})
try:
    import {PRELOAD}
finally:
    sys.path.remove({_ROOT!r})
"""


class _Stowaway:
    """Unpickled in a spawned child, it installs the stand-in there (pickle calls `exec` on the
    few lines above: a function of qd's could not be found before qd is importable)."""

    def __reduce__(self):
        return exec, (_INSTALL, {})  # its own globals: not those of the module unpickling it


_originals: dict[str, object] = {}


def _get_preparation_data(name):
    data = _originals["get_preparation_data"](name)
    data[_KEY] = _Stowaway()
    return data


def _server_preload(modules: list[str]) -> list[str]:
    """What the server preloads in place of `modules`: not the main script (the server would import
    it, and the quadrants it imports, before any stand-in), and the stand-in before the others."""
    rest = [m for m in modules if m not in ("__main__", PRELOAD)]
    return [PRELOAD, *rest] if rest else []


def _set_forkserver_preload(modules_names) -> None:
    _originals["set_forkserver_preload"](_server_preload(list(modules_names)))


def follow() -> None:
    """From now on, children this process starts install the stand-in before they import anything."""
    if "get_preparation_data" in _originals:
        return
    _originals["get_preparation_data"] = _spawn.get_preparation_data
    _spawn.get_preparation_data = _get_preparation_data
    if _forkserver is not None:  # the module's function, which `multiprocessing.set_forkserver_preload` calls
        _originals["set_forkserver_preload"] = _forkserver.set_forkserver_preload
        _originals["server_preload"] = _forkserver._forkserver._preload_modules
        _forkserver.set_forkserver_preload = _set_forkserver_preload
        _forkserver._forkserver._preload_modules = _server_preload(_forkserver._forkserver._preload_modules)


def unfollow() -> None:
    """Undo `follow()`: children started from now on are plain again."""
    if "get_preparation_data" not in _originals:
        return
    _spawn.get_preparation_data = _originals.pop("get_preparation_data")
    if _forkserver is not None:
        _forkserver.set_forkserver_preload = _originals.pop("set_forkserver_preload")
        before, server = _originals.pop("server_preload"), _forkserver._forkserver
        server._preload_modules = before if server._preload_modules == _server_preload(before) \
            else [m for m in server._preload_modules if m != PRELOAD]  # the program set its own since
