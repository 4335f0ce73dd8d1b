# Task runner; every recipe also works as the plain command it runs.

setup:
    python3 -m venv .venv && .venv/bin/pip install -q '.[dev]'

demo:
    .venv/bin/python examples/demo.py

test:
    .venv/bin/python -m pytest -q

bench:
    .venv/bin/python bench/throughput.py
    .venv/bin/python bench/launch.py
    .venv/bin/python bench/pruning.py
    .venv/bin/python bench/compile.py

lint:
    .venv/bin/ruff check qd analysis tests bench examples
