"""The disk cache: entries keyed by kernel, specialisation and toolchain, verified on load.
"""
