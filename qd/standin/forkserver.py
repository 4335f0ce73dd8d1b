"""Importing this module installs the stand-in: the name a `multiprocessing` forkserver preloads
under the stand-in (and a spawned child's stowaway imports), so that process and every child
forked from it get qd for quadrants before anything imports quadrants (`qd.standin.children`)."""

from . import install

install()
