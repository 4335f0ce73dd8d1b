"""The LLVM IR text of every module qd builds for the CPU, collected as it goes to LLVM (or to
the store of object code compiled before, `qd.cache.objects`, which may answer instead)."""

from qd.cache import objects


def collect_ir(monkeypatch) -> list[str]:
    """From now on (until the test ends), each module's IR text is appended to the list returned."""
    texts: list[str] = []
    real = objects.compiled

    def spy(compiler, identity, ir_text, compile_text, directory):
        texts.append(ir_text)
        return real(compiler, identity, ir_text, compile_text, directory)

    monkeypatch.setattr(objects, "compiled", spy)
    return texts
