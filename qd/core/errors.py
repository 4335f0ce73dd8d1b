"""User-facing errors.

Every error a user can cause names the source position (file:line:col) and shows the
line with a caret, because kernels are compiled far from where they are called and a
bare message would leave the user guessing which expression was meant.
"""

from __future__ import annotations

import difflib
import linecache
import os
import sys
import sysconfig
import warnings
from dataclasses import dataclass


@dataclass(frozen=True)
class SourceLoc:
    """A span in a user's source file (1-based line, 0-based column, like `ast`)."""

    file: str
    line: int
    col: int
    end_col: int | None = None

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col + 1}"


def render(loc: SourceLoc | None, message: str) -> str:
    if loc is None:
        return message
    text = linecache.getline(loc.file, loc.line).rstrip("\n")
    head = f"{loc}: {message}"
    if not text:
        return head
    end = loc.end_col if loc.end_col is not None and loc.end_col > loc.col else len(text.rstrip())
    width = max(1, min(end, len(text)) - loc.col)
    return f"{head}\n    {text}\n    {' ' * loc.col}{'^' * width}"


def _frame(loc: SourceLoc, name: str, width: int = 80) -> str:
    """`File "f", line n, in name:`, the line (tabs expanded) and carets under the span, both cut
    into pieces of `width` columns."""
    raw = linecache.getline(loc.file, loc.line).rstrip("\n")
    head = f'File "{loc.file}", line {loc.line}, in {name}:'
    if not raw:
        return head
    text = raw.expandtabs(4)
    col = len(raw[:loc.col].expandtabs(4))
    end = len(raw[:loc.end_col].expandtabs(4)) if loc.end_col is not None and loc.end_col > loc.col \
        else len(text.rstrip())
    carets = " " * col + "^" * max(1, end - col)
    out = [head]
    for k in range(0, max(len(text), len(carets)), width):
        out.append(text[k:k + width])
        if carets[k:k + width].strip():
            out.append(carets[k:k + width].rstrip())
    return "\n".join(out)


def show(value: object, limit: int = 60) -> str:
    """A user's value for a message: its repr on one line, shortened (a numpy array's repr spans
    lines and would push the caret away from the source line it belongs under)."""
    text = " ".join(repr(value).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


_QD_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep  # the qd package
_STDLIB_DIR = os.path.abspath(sysconfig.get_paths()["stdlib"]) + os.sep


def is_user_file(file: str) -> bool:
    """True for a real source file that is neither part of qd nor of Python's standard library
    (annotations are evaluated inside `typing`, decorators run through `functools`...)."""
    if file.startswith("<"):
        return False
    path = os.path.abspath(file)
    if path.startswith(_QD_DIR):
        return False
    return not (path.startswith(_STDLIB_DIR) and "site-packages" not in path and "dist-packages" not in path)


SITE_LOCAL = "_qd_user_site"


def caller_loc() -> SourceLoc | None:
    """Where user code called into qd: the innermost frame outside the qd package.

    Errors raised by a Python-level call (`qd.ndarray(shape=1.5)`, a `@qd.func` called from
    Python, `qd.init` with a bad setting) have no kernel source to point into; the caller's
    line is where the bad value was written, so that is the location the user needs.
    """
    frame = sys._getframe(1)
    while frame is not None:
        file = frame.f_code.co_filename
        if not is_user_file(file):
            # the frontend evaluating a kernel's compile-time call (`qd.ndarray(...)` in a kernel body)
            # names the kernel expression in this local: that, not the launch, is the user's line
            site = frame.f_locals.get(SITE_LOCAL) if os.path.abspath(file).startswith(_QD_DIR) else None
            if isinstance(site, SourceLoc):
                return site
        else:
            col, end = 0, None
            positions = getattr(frame.f_code, "co_positions", None)
            if positions is not None and frame.f_lasti >= 0:
                try:
                    pos = list(positions())[frame.f_lasti // 2]
                except IndexError:
                    pos = None
                if pos is not None and pos[0] == frame.f_lineno and pos[2] is not None:
                    col = pos[2]
                    end = pos[3] if pos[1] == pos[0] else None
            return SourceLoc(file, frame.f_lineno, col, end)
        frame = frame.f_back
    return None


class QdWarning(UserWarning):
    """A warning about user input, whose file and line are the user's code (`warn_at`)."""


def warn_at(message: str, loc: SourceLoc | None = None, category: type[Warning] = QdWarning) -> None:
    """Warn about user input at `loc` (the caller's line by default): the warning's own file and
    line are the user's code rather than qd's. The message itself carries no location: Python
    prints a warning as `file:line: Category: message` followed by the source line, so a located
    message would show both twice."""
    if loc is None:
        loc = caller_loc()
    if loc is None:
        warnings.warn(message, category, stacklevel=2)
        return
    warnings.warn_explicit(message, category, loc.file, loc.line)


class QdError(Exception):
    """Base of every error qd reports about user code or user input.

    An error met while compiling also carries the chain of calls that reached it (`frames`:
    (call site, name of the function it is in), outermost first, ending with the error's own
    place), shown after the located message as a traceback of the kernel, in quadrants' form."""

    def __init__(self, message: str, loc: SourceLoc | None = None):
        self.message = message
        self.loc = loc
        self.frames: tuple[tuple[SourceLoc, str], ...] = ()
        super().__init__(render(loc, message))

    def in_function(self, name: str) -> None:
        """The function the error's own place is in (set once, by the innermost lowering)."""
        if not self.frames and self.loc is not None:
            self._set_frames(((self.loc, name),))

    def called_from(self, site: SourceLoc | None, name: str) -> None:
        """One more call on the way to the error: `site`, in function `name`. An error inside
        qd's own funcs (`qd.simt`'s reductions, `qd.linalg`) is located at the user's call that
        reached it; the frames still show the way."""
        if self.frames and site is not None:
            if self.loc is not None and not is_user_file(self.loc.file) and is_user_file(site.file):
                self.loc = site
            self._set_frames(((site, name), *self.frames))

    def _set_frames(self, frames) -> None:
        self.frames = frames
        self.args = (render(self.loc, self.message) + "\n" + "\n".join(_frame(loc, name) for loc, name in frames),
                     *self.args[1:])


def _shown_as(name: str):
    """Give a class of qd's own the name of the class quadrants raises in its place, so a program
    that prints `type(e).__name__` prints what it prints on quadrants. The class stays qd's
    (`except QdStaticError:` still tells it apart) and a subclass of that one, so every `except`
    written for quadrants catches it. Its qualified name stays qd's: a traceback says
    `qd.core.errors.QdStaticError`, and pickle finds the class by it."""
    def rename(cls: type) -> type:
        cls.__name__ = name
        return cls
    return rename


@_shown_as("SyntaxWarning")
class QdSyntaxWarning(QdWarning, SyntaxWarning):
    """Code qd compiles where quadrants warns that it may not work as expected (a plain Python
    function called in a kernel with run-time values): the SyntaxWarning quadrants gives, so the
    filters a program sets for quadrants apply."""


# The classes quadrants also has carry quadrants' names (`QuadrantsTypeError`, ...), which a program
# written for quadrants catches and prints; qd's own names (`QdTypeError`, ...) are the same classes.
class QuadrantsCompilationError(QdError):
    """A kernel or func could not be compiled."""


QdCompileError = QuadrantsCompilationError


class QuadrantsSyntaxError(QdCompileError, SyntaxError):
    """Python syntax that the kernel language does not support."""

    def __str__(self) -> str:  # SyntaxError formats itself differently; keep ours
        return self.args[0]


QdSyntaxError = QuadrantsSyntaxError


class QuadrantsNameError(QdCompileError, NameError):
    """A name in a kernel that is neither a local, a parameter nor a global."""


QdNameError = QuadrantsNameError


class QuadrantsTypeError(QdCompileError, TypeError):
    """Operands or values whose types do not fit the operation."""


QdTypeError = QuadrantsTypeError


@_shown_as("QuadrantsCompilationError")
class QdStaticError(QdCompileError):
    """`qd.static(...)` applied to a value that is only known at run time."""


@_shown_as("QuadrantsCompilationError")
class QdCallError(QdCompileError):
    """A call qd cannot compile: a kernel from a kernel, recursion, wrong arguments to a func."""


@_shown_as("TypeError")
class QdArgumentError(QdError, TypeError):
    """A kernel, or a qd function called from Python, got arguments that do not match its signature."""


@_shown_as("QuadrantsSyntaxError")
class QdSignatureError(QdCallError, QdArgumentError, QdSyntaxError):
    """A call whose arguments do not match the kernel's or func's signature: missing, unexpected,
    repeated or too many arguments. It is each of qd's classes such a call was reported with (a
    bad call, a bad argument) and, as quadrants reports it, a syntax error."""


_BIND_WORDS = (("missing a required argument: ", "Missing argument "),
               ("got an unexpected keyword argument ", "Unexpected argument "),
               ("too many positional arguments", "Too many arguments"),
               ("multiple values for argument ", "Multiple values for argument "))


def unexpected_keywords(what: str, given: dict, accepted: tuple[str, ...]) -> None:
    """Refuse keywords a decorator or factory does not take (`@qd.kernel(fastcahce=True)`) at the
    caller's line, with the accepted one it most resembles: accepted silently, a misspelt option
    would do nothing. A TypeError, as Python's own for such a call."""
    if not given:
        return
    name = sorted(given)[0]
    close = difflib.get_close_matches(name, accepted, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else f"; it takes {', '.join(accepted)}"
    raise QdArgumentError(f"{what} got an unexpected keyword argument {name!r}{hint}", caller_loc())


def signature_error(what: str, e: TypeError, loc: SourceLoc | None) -> QdSignatureError:
    """`inspect.Signature.bind`'s complaint in quadrants' words, then qd's: `Missing argument 'b':
    bad call of foo(): missing a required argument: 'b'`."""
    text = str(e)
    for python, words in _BIND_WORDS:
        if text.startswith(python):
            return QdSignatureError(f"{words}{text[len(python):]}: bad call of {what}(): {text}", loc)
    return QdSignatureError(f"bad call of {what}(): {text}", loc)


@_shown_as("ValueError")
class QdValueError(QdArgumentError, ValueError):
    """An argument of the right type with a value qd cannot use (a negative shape, a mismatched copy)."""


@_shown_as("IndexError")
class QdIndexError(QdArgumentError, IndexError):
    """A `qd.ndarray` indexed from Python out of its bounds (an IndexError, so iteration still stops)."""


class QuadrantsIndexError(QdCompileError, IndexError):
    """An array or field indexed in a kernel with more or fewer indices than it has dimensions:
    a compilation error and an IndexError, the class quadrants raises for it."""


@_shown_as("QuadrantsIndexError")
class QdIndexCountError(QdIndexError, QuadrantsIndexError):
    """A field or ndarray indexed from Python with more or fewer indices than it has dimensions:
    qd's IndexError of a bad index, and the QuadrantsIndexError quadrants raises for it."""


class QdConfigError(QdError, ValueError):
    """A bad setting: an option of `qd.init`, an environment variable, an unavailable engine."""


@_shown_as("KeyError")
class QdUnknownOptionError(QdConfigError, KeyError):
    """A keyword `qd.init` does not know: a `KeyError`, as quadrants raises for it, and still a
    `QdConfigError`."""

    def __str__(self) -> str:  # KeyError would print the message quoted, as a key
        return QdConfigError.__str__(self)


class QuadrantsRuntimeError(QdError, RuntimeError):
    """A check inside a running kernel failed (bounds checks under `qd.init(debug=True)`)."""


QdRuntimeError = QuadrantsRuntimeError


@_shown_as("RuntimeError")
class QdResumeError(QdRuntimeError):
    """`kernel.resume(from_checkpoint=label)` for a label the kernel has no checkpoint for."""


class QdShapeError(QdValueError, QdRuntimeError):
    """A shape an array or field cannot have (a dimension that is not an int in 1..2**31-1). A
    bad argument value, and the RuntimeError quadrants raises for it."""


class QuadrantsAssertionError(QdRuntimeError, AssertionError):
    """An `assert` inside a kernel failed (checked under `qd.init(debug=True)`); also an
    AssertionError, as quadrants' is."""


QdAssertionError = QuadrantsAssertionError


@_shown_as("QuadrantsAssertionError")
class QdBoundsError(QdIndexError, QdAssertionError):
    """A field or ndarray indexed from Python out of its bounds: an IndexError (iteration stops at
    it) and, as quadrants reports it under `debug=True`, an AssertionError."""


class QdInternalError(QdError):
    """A bug in qd itself; the location says which user code triggered it."""


QdSyntaxError = QuadrantsSyntaxError
