"""Backend that runs a program through an external ``souffle`` binary.

It exists so the very same rule files can be checked against (and, for large programs, run on)
the reference implementation of the dialect.  Facts go in as Soufflé's native TSV, which has no
quoting, so strings containing a tab or newline are refused instead of being corrupted.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from .errors import DatalogError, EngineUnavailableError
from .program import Program

Row = tuple[Any, ...]


def _format_value(value: Any, rel: str) -> str:
    if isinstance(value, str):
        if "\t" in value or "\n" in value or "\r" in value:
            raise DatalogError(
                f"cannot pass {value!r} in '{rel}' to souffle: tabs and newlines are not allowed"
            )
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise DatalogError(f"unsupported value {value!r} in '{rel}' (only str and int)")


class SouffleEngine:
    """Runs programs with ``souffle -F <facts> -D <out> prog.dl`` (Soufflé's interpreter)."""

    name = "souffle"

    def __init__(self, binary: str | None = None, extra_args: Iterable[str] = ()) -> None:
        found = binary or shutil.which("souffle")
        if found is None:
            raise EngineUnavailableError(
                "the 'souffle' Datalog engine was requested but no 'souffle' binary is on PATH; "
                "install Soufflé 2.5 or use the embedded engine (QD_DATALOG_ENGINE=embedded)"
            )
        self.binary = found
        self.extra_args = tuple(extra_args)

    def run(self, program: Program, facts: Mapping[str, Iterable[Row]]) -> dict[str, set[Row]]:
        """Evaluate ``program`` on ``facts`` with Soufflé and return every ``.output`` relation."""
        for rel in facts:
            if rel not in program.decls:
                raise DatalogError(f"facts given for unknown relation '{rel}'")
            if rel not in program.inputs:
                raise DatalogError(f"facts given for '{rel}', which is not an .input relation")
        with tempfile.TemporaryDirectory(prefix="qd-souffle-") as tmp:
            root = Path(tmp)
            fact_dir, out_dir = root / "in", root / "out"
            fact_dir.mkdir()
            out_dir.mkdir()
            for rel in program.inputs:
                arity = program.decls[rel].arity
                lines = []
                for row in facts.get(rel, ()):
                    if len(row) != arity:
                        raise DatalogError(f"facts for '{rel}' must have {arity} column(s); got {len(row)}")
                    lines.append("\t".join(_format_value(v, rel) for v in row) + "\n")
                (fact_dir / f"{rel}.facts").write_text("".join(lines), encoding="utf-8")
            prog_path = root / "prog.dl"
            prog_path.write_text(program.text(), encoding="utf-8")
            cmd = [self.binary, *self.extra_args, "-F", str(fact_dir), "-D", str(out_dir), str(prog_path)]
            try:
                proc = subprocess.run(cmd, capture_output=True, text=True)
            except OSError as e:  # not executable, not a program, vanished since it was found
                raise EngineUnavailableError(f"cannot run souffle binary {self.binary!r}: {e}") from None
            if proc.returncode != 0:
                raise DatalogError(
                    f"souffle failed (exit {proc.returncode}): {proc.stderr.strip() or proc.stdout.strip()}"
                )
            return {rel: self._read_output(out_dir / f"{rel}.csv", program, rel) for rel in program.outputs}

    @staticmethod
    def _read_output(path: Path, program: Program, rel: str) -> set[Row]:
        bases = program.decls[rel].bases
        if not path.exists():
            raise DatalogError(f"souffle produced no output file for '{rel}'")
        result: set[Row] = set()
        arity = len(bases)
        lines = path.read_text(encoding="utf-8").split("\n")
        if lines and lines[-1] == "":
            lines.pop()  # the final newline
        for line in lines:
            if arity == 0:
                if line.strip() in ("", "()"):
                    result.add(())
                    continue
                raise DatalogError(f"unexpected line in souffle output for '{rel}': {line!r}")
            fields = line.split("\t")
            if len(fields) != arity:
                raise DatalogError(f"unexpected line in souffle output for '{rel}': {line!r}")
            result.add(tuple(int(v) if b == "number" else v for v, b in zip(fields, bases)))
        return result
