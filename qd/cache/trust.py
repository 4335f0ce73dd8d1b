"""Whether a disk-cache entry may be trusted, and reading and writing entries safely.

An entry holds native code that qd runs, so reading one is reading a program. Anyone who can
write into the cache directory could otherwise plant one, and a FIFO or a link to a device at
an entry's name could hang the process or exhaust its memory. Hence:

- every entry is authenticated with an HMAC keyed by a per-user secret that lives outside
  the cache (`$QD_CONFIG_DIR`, else `$XDG_CONFIG_HOME/qd`, else `~/.config/qd`), created 0600
  on first use; without a usable secret the disk cache is off, with one warning;
- a cache directory or entry not owned by the current user, or writable by group or others,
  is refused with one warning;
- entries are opened without following symbolic links and without blocking, and only a
  regular file below a size cap is read.
"""

from __future__ import annotations

import errno
import hashlib
import hmac
import json
import os
import stat
import tempfile
import warnings
from pathlib import Path

MAX_ENTRY_BYTES = 256 << 20  # far above any kernel's object and facts; stops a runaway read
SECRET_BYTES = 32
MAC_BYTES = 32
SECRET_NAME = "fastcache.key"


class FastcacheWarning(UserWarning):
    """The disk cache could not be used for a kernel; it still runs, compiled in memory."""


class Untrusted(Exception):
    """An entry or directory that must not be used; the message says why."""


_warned: set = set()


def warn_once(key, message: str, loc=None) -> None:
    """Warn once per process for `key`, at the user's kernel definition when `loc` (a
    SourceLoc, or a callable giving one only when a warning is due) is known."""
    if key in _warned:
        return
    _warned.add(key)
    if callable(loc):
        loc = loc()
    if loc is not None:
        warnings.warn_explicit(message, FastcacheWarning, loc.file, loc.line)
    else:
        warnings.warn(message, FastcacheWarning, stacklevel=3)


# ---------------------------------------------------------------- the per-user secret


def config_dir() -> Path:
    base = os.environ.get("QD_CONFIG_DIR")
    if base:
        return Path(base)
    root = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(root) / "qd"


_secrets: dict[tuple, bytes | None] = {}


def secret(loc=None) -> bytes | None:
    """The HMAC key, created on first use; None (after one warning) when it cannot be had."""
    env = os.environ
    k = (env.get("QD_CONFIG_DIR"), env.get("XDG_CONFIG_HOME"), env.get("HOME"))
    if k in _secrets:
        return _secrets[k]
    d = config_dir()
    try:
        value = _read_or_create_secret(d)
    except (OSError, Untrusted) as e:
        warn_once(("secret", str(d)), f"qd fastcache: disk cache disabled: no usable secret in {d} ({e})", loc)
        value = None
    _secrets[k] = value
    return value


def _read_or_create_secret(d: Path) -> bytes:
    d.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = d / SECRET_NAME
    try:
        return _read_secret(path)
    except FileNotFoundError:
        pass
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".tmp-key-")  # 0600
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(os.urandom(SECRET_BYTES))
        try:
            os.link(tmp, path)  # never replaces a secret another process made first
        except FileExistsError:
            pass
    finally:
        os.unlink(tmp)
    return _read_secret(path)


def _read_secret(path: Path) -> bytes:
    fd = _open_no_follow(path)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Untrusted(f"{path} is not a regular file")
        if st.st_uid != _uid():
            raise Untrusted(f"{path} is owned by another user")
        if st.st_mode & 0o077:
            raise Untrusted(f"{path} is readable or writable by group or others")
        data = os.read(fd, SECRET_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) != SECRET_BYTES:
        raise Untrusted(f"{path} does not hold a {SECRET_BYTES}-byte secret")
    return data


def mac(body: bytes) -> bytes | None:
    key = secret()
    return None if key is None else hmac.new(key, body, hashlib.sha256).digest()


def verify(data: bytes) -> bytes:
    """The body of `data` if its trailing MAC is right; ValueError otherwise."""
    if len(data) < MAC_BYTES:
        raise ValueError("truncated")
    body, tag = data[:-MAC_BYTES], data[-MAC_BYTES:]
    expected = mac(body)
    if expected is None:
        raise ValueError("no secret to check it with")
    if not hmac.compare_digest(expected, tag):
        raise ValueError("bad checksum or truncated")
    return body


# ---------------------------------------------------------------- directory and entries


def _uid() -> int:
    """The effective user id; on systems without one, every file counts as the user's own."""
    geteuid = getattr(os, "geteuid", None)
    return geteuid() if geteuid is not None else 0


def _owned_privately(st, what: str) -> None:
    if st.st_uid != _uid():
        raise Untrusted(f"{what} is owned by another user (uid {st.st_uid})")
    if st.st_mode & 0o022:
        raise Untrusted(f"{what} is writable by group or others")


def usable_dir(d: Path, create: bool, loc=None) -> bool:
    """Whether `d` may hold entries (creating it 0700 when asked); one warning if refused."""
    try:
        if create:
            d.mkdir(parents=True, exist_ok=True, mode=0o700)
        st = os.stat(d)
    except FileNotFoundError:
        return False
    except OSError as e:
        warn_once(("dir", str(d)), f"qd fastcache: cannot use cache directory {d}: {e}", loc)
        return False
    try:
        if not stat.S_ISDIR(st.st_mode):
            raise Untrusted(f"{d} is not a directory")
        _owned_privately(st, f"cache directory {d}")
    except Untrusted as e:
        warn_once(("dir", str(d)), f"qd fastcache: not using the disk cache: {e}", loc)
        return False
    return True


def _open_no_follow(path: Path) -> int:
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        return os.open(path, flags)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise Untrusted(f"{path} is a symbolic link") from None
        raise


def read_entry(path: Path) -> bytes | None:
    """The bytes of the entry at `path`; None when there is none. Untrusted when the file is not
    a private regular file of this user below the size cap (it is then never read)."""
    try:
        fd = _open_no_follow(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Untrusted(f"{path.name} is not a regular file")
        _owned_privately(st, f"entry {path.name}")
        if st.st_size > MAX_ENTRY_BYTES:
            raise Untrusted(f"{path.name} is larger than {MAX_ENTRY_BYTES} bytes")
        chunks, left = [], st.st_size + 1  # one byte more shows a file that grew meanwhile
        while left > 0:
            b = os.read(fd, min(left, 1 << 24))
            if not b:
                break
            chunks.append(b)
            left -= len(b)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > st.st_size:
        raise Untrusted(f"{path.name} changed while it was read")
    return data


def write_entry(path: Path, data: bytes) -> None:
    """Atomically replace `path` with a private file holding `data`."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".qdk")  # 0600
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


# ---------------------------------------------------------------- small JSON files beside the entries

def read_json(path: Path) -> object | None:
    """The JSON value in the authenticated file at `path`; None when there is none or it is not
    this user's own and intact (the files read so only make later lookups faster)."""
    try:
        data = read_entry(path)
        return None if data is None else json.loads(verify(data))
    except (OSError, ValueError, Untrusted):
        return None


def write_json(path: Path, value: object) -> None:
    """`value` as JSON at `path`, authenticated; nothing is written without a secret, and a
    failed write is ignored (the next process only does more work)."""
    body = json.dumps(value, sort_keys=True).encode()
    tag = mac(body)
    if tag is None:
        return
    try:
        write_entry(path, body + tag)
    except OSError:
        pass
