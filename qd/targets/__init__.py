"""Code-generation targets: the interface (`base.Target`) and one package per machine.

`qd.codegen` is target-neutral and never imports from here; the pipeline picks a target and
hands it to codegen, the launcher and the disk cache.
"""
