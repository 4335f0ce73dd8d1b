"""The LLVM IR text of every module qd compiles for the CPU, collected as it goes to LLVM."""

from qd.targets.cpu import jit


def collect_ir(monkeypatch) -> list[str]:
    """From now on (until the test ends), each module's IR text is appended to the list returned."""
    texts: list[str] = []
    real = jit.optimize

    def spy(text):
        texts.append(text)
        return real(text)

    monkeypatch.setattr(jit, "optimize", spy)
    return texts
