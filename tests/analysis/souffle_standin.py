"""A stand-in `souffle` binary for tests on machines without Soufflé.

It accepts the backend's command line (`souffle -F facts -D out prog.dl`), reads the TSV facts
and writes the output relations as Soufflé does, evaluating with the embedded engine, so the
backend's files and command line are exercised end to end.
"""

from __future__ import annotations

import stat
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

FAKE = """#!{python}
import os
import sys
from pathlib import Path
sys.path.insert(0, {repo!r})
if os.environ.get("SOUFFLE_STANDIN_LOG"):
    with open(os.environ["SOUFFLE_STANDIN_LOG"], "a") as log:
        log.write("run\\n")
from qd_analysis.datalog import get_engine, parse_program

args = sys.argv[1:]
fact_dir = Path(args[args.index("-F") + 1])
out_dir = Path(args[args.index("-D") + 1])
prog = parse_program(Path(args[-1]).read_text(), args[-1])
facts = {{}}
for rel in prog.inputs:
    bases = prog.decls[rel].bases
    rows = []
    for line in (fact_dir / (rel + ".facts")).read_text().split("\\n")[:-1]:
        fields = line.split("\\t")
        rows.append(tuple(int(v) if b == "number" else v for v, b in zip(fields, bases)))
    facts[rel] = rows
for rel, rows in get_engine("embedded").run(prog, facts).items():
    with open(out_dir / (rel + ".csv"), "w") as f:
        for row in sorted(rows, key=repr):
            f.write("\\t".join(str(v) for v in row) + "\\n")
"""




def install(directory: Path) -> Path:
    """Write the stand-in as `directory/souffle` (executable); put `directory` on PATH to use it."""
    binary = directory / "souffle"
    binary.write_text(FAKE.format(python=sys.executable, repo=str(REPO)))
    binary.chmod(binary.stat().st_mode | stat.S_IXUSR)
    return binary
