"""Checks that an error points at the right spot of a test file.

The expected line is found through a `# at:<name>` marker on it, so editing a test file never
breaks its expectations; the caret must start under the expected source text.
"""

from __future__ import annotations

import os
import re

import qd

_HEADER = re.compile(r"^(?P<file>.*?):(?P<line>\d+):(?P<col>\d+): ")
_CARETS = re.compile(r"^ *\^+ *$")


def marker_line(path: str, name: str) -> int:
    """1-based number of the unique line of `path` carrying `# at:<name>`."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    tag = f"# at:{name}"
    hits = [n + 1 for n, text in enumerate(lines) if text.rstrip().endswith(tag)]
    assert len(hits) == 1, f"marker {name!r} found {len(hits)} times in {path}"
    return hits[0]


def check_located(exc: BaseException, cls: type, path: str, marker: str, node: str) -> str:
    """`exc` is a `cls` located at the marked line of `path`, carets starting under `node`;
    returns the message for further checks."""
    assert isinstance(exc, cls), f"expected {cls.__name__}, got {type(exc).__name__}: {exc}"
    assert isinstance(exc, qd.QdError)
    msg = check_located_text(str(exc), path, marker, node)
    assert exc.__cause__ is None and (exc.__suppress_context__ or exc.__context__ is None)
    return msg


def check_located_text(msg: str, path: str, marker: str, node: str) -> str:
    """`msg` (an error's text, or a printed report) starts with the marked line of `path` as
    file:line:col and shows that line with carets starting under `node`."""
    lines = msg.splitlines()
    head = _HEADER.match(lines[0])
    assert head, f"no file:line:col in\n{msg}"
    assert os.path.basename(head.group("file")) == os.path.basename(path), msg
    assert int(head.group("line")) == marker_line(path, marker), msg
    shown = [k for k in range(len(lines) - 1) if _CARETS.match(lines[k + 1])]
    assert shown, f"no caret line in\n{msg}"
    k = shown[0]
    under = lines[k][lines[k + 1].index("^"):]
    assert under.startswith(node), f"carets start under {under!r}, expected {node!r}\n{msg}"
    return msg
