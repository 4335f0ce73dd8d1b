"""Cache entries are programs, so they are trusted only when this user wrote them: a forged or
edited entry, a FIFO or a link at an entry's name, or a directory others can write, is refused
with a warning and the kernel is compiled instead; nothing from an entry reaches generated code."""

import hashlib
import json
import os
import resource
import stat
import struct
import subprocess
import sys

import pytest
from _env import TWO_VARIANTS as PROG
from _env import Project, child_env

pytestmark = pytest.mark.slow  # starts Python processes

GOOD = [[1.0, 1.0], [2.0, 2.0]]


@pytest.fixture
def project(tmp_path):
    p = Project(tmp_path)
    p.write("prog.py", PROG)
    out = p.run()
    assert out["results"] == [[GOOD[0], "compile"], [GOOD[1], "compile"]]
    return p


def values(out):
    return [r[0] for r in out["results"]]


def sources(out):
    return [r[1] for r in out["results"]]


def warned(out, text):
    return [w[0] for w in out["warnings"] if text in w[0]]


def _sections(body: bytes):
    """The length-prefixed sections of an entry (header, facts, launcher code), then the object."""
    at, out = 4, []
    for _ in range(3):
        (n,) = struct.unpack("<Q", body[at:at + 8])
        out.append(body[at + 8:at + 8 + n])
        at += 8 + n
    return out, body[at:]


def unpack(data: bytes):
    """(the header with the facts section as its "facts" and the launcher section as its
    "launcher_code", the object bytes) of an entry."""
    (blob, facts, code), obj = _sections(data[:-32])
    header = json.loads(blob)
    header["facts"] = json.loads(facts)
    header["launcher_code"] = code
    return header, obj


def seal(header, obj: bytes, *, secret: bool = True, facts: bytes | None = None) -> bytes:
    """An entry as this user's qd writes it (`secret=False`: as someone without the secret can;
    `facts`: this facts section instead of the header's "facts")."""
    own = header if isinstance(header, dict) else header[0]  # (a header that is not an object: [header])
    fblob = json.dumps(own.get("facts", {})).encode() if facts is None else facts
    code = own.get("launcher_code", b"")
    own = {k: v for k, v in own.items() if k not in ("facts", "launcher_code")}
    header = own if isinstance(header, dict) else [own]
    blob = json.dumps(header).encode()
    body = b"QDK2" + b"".join(struct.pack("<Q", len(b)) + b for b in (blob, fblob, code)) + obj
    try:
        from qd.cache import trust as fastcache_trust
    except ImportError:  # the entry format of 60ed478: a plain checksum
        fastcache_trust = None
    if secret and fastcache_trust is not None:
        return body + fastcache_trust.mac(body)
    return body + hashlib.sha256(body).digest()


def test_header_text_never_reaches_generated_code(project):
    for p in project.entries():
        header, obj = unpack(p.read_bytes())
        injected = "x if open('pwned', 'w') else x"
        slot = header["module"]["slots"][0]
        header["kept"] = [injected if q == slot[0] else q for q in header["kept"]]
        slot[0] = injected
        p.write_bytes(seal(header, obj))
    out = project.run()
    assert not (project.root / "pwned").exists()
    assert values(out) == GOOD and sources(out) == ["compile", "compile"]
    assert len(warned(out, "corrupt entry")) == 2
    assert sources(project.run()) == ["disk", "disk"]


MALFORMED = {
    "not-an-object": lambda h: [h],
    "no-module": lambda h: {k: v for k, v in h.items() if k != "module"},
    "slots-text": lambda h: {**h, "module": {**h["module"], "slots": "x"}},
    "n-slots-text": lambda h: {**h, "module": {**h["module"], "n_slots": "7"}},
    "n-slots-big": lambda h: {**h, "module": {**h["module"], "n_slots": 1 << 40}},
    "slot-moved": lambda h: {**h, "module": {**h["module"],
                                             "slots": [s[:4] + [s[4] + 5] for s in h["module"]["slots"]]}},
    "bad-dtype": lambda h: {**h, "module": {**h["module"],
                                            "slots": [s[:2] + ["f128"] + s[3:] for s in h["module"]["slots"]]}},
    "wrong-dtype": lambda h: {**h, "module": {**h["module"],
                                              "slots": [s[:2] + ["f64"] + s[3:] for s in h["module"]["slots"]]}},
    "bool-ndim": lambda h: {**h, "module": {**h["module"],
                                            "slots": [s[:3] + [True] + s[4:] for s in h["module"]["slots"]]}},
    "entry-symbol": lambda h: {**h, "module": {**h["module"], "entry": "system"}},
    "returns": lambda h: {**h, "module": {**h["module"], "returns": [5]}},
    "check-locs": lambda h: {**h, "module": {**h["module"], "check_locs": [[1, 2]]}},
    "kept-unknown": lambda h: {**h, "kept": ["nope"]},
    "pruned-extra": lambda h: {**h, "pruned": ["x"]},
    "written": lambda h: {**h, "written": ["elsewhere"]},
    "sources": lambda h: {**h, "sources": {"a": 1}},
    "captures": lambda h: {**h, "captures": [["g"]]},
    "capture-kind": lambda h: {**h, "captures": [["zz", "", "a", 1]]},
    "inst-id": lambda h: {**h, "inst_id": None},
}


@pytest.mark.parametrize("damage", sorted(MALFORMED))
def test_authentic_entry_with_a_malformed_header_is_rebuilt(project, damage):
    for p in project.entries():
        header, obj = unpack(p.read_bytes())
        p.write_bytes(seal(MALFORMED[damage](header), obj))
    out = project.run()
    assert values(out) == GOOD and sources(out) == ["compile", "compile"]
    assert len(warned(out, "corrupt entry")) == 2, out["warnings"]
    assert sources(project.run()) == ["disk", "disk"]


@pytest.mark.parametrize("facts", [b'{"Inst_Param": 5}', b'{"Inst_Param": [[1.5]]}', b"[", b"\xff"])
def test_authentic_entry_with_malformed_facts_is_refused_where_they_are_read(project, facts):
    """A launch never reads the analysis facts (they are decoded only for an explanation), so
    the validated code still runs from the disk cache; qd-explain skips the entry, saying so."""
    for p in project.entries():
        header, obj = unpack(p.read_bytes())
        p.write_bytes(seal(header, obj, facts=facts))
    out = project.run()
    assert values(out) == GOOD and sources(out) == ["disk", "disk"]
    r = subprocess.run([sys.executable, "-m", "qd.explain.cli", "--cache-dir", str(project.root / "cache"), "k"],
                       env=child_env(), capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and r.stderr.count("analysis facts are damaged") == 2, r.stderr


def test_entry_planted_without_the_secret_is_refused(project):
    one, two = project.entries()
    h1, _ = unpack(one.read_bytes())
    h2, obj2 = unpack(two.read_bytes())
    if "key" in h1:
        h2["key"] = h1["key"]  # everything right but the secret's MAC
    one.write_bytes(seal(h2, obj2, secret=False))  # the other value's code under this name
    out = project.run()
    assert values(out) == GOOD
    assert sorted(sources(out)) == ["compile", "disk"] and len(warned(out, "corrupt entry")) == 1


def test_fifo_at_an_entry_name_does_not_hang(project):
    for p in project.entries():
        p.unlink()
        os.mkfifo(p, 0o600)
    out = project.run(timeout=60)
    assert values(out) == GOOD and sources(out) == ["compile", "compile"]
    assert len(warned(out, "not a regular file")) == 2


def _limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))


def test_link_to_dev_zero_is_not_read(project):
    for p in project.entries():
        p.unlink()
        p.symlink_to("/dev/zero")
    out = project.run(timeout=60, preexec_fn=_limit_memory)
    assert values(out) == GOOD and sources(out) == ["compile", "compile"]
    assert len(warned(out, "symbolic link")) == 2


def test_link_to_a_valid_entry_is_refused(project, tmp_path_factory):
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    for p in project.entries():
        target = elsewhere / p.name
        p.rename(target)
        p.symlink_to(target)
    out = project.run()
    assert values(out) == GOOD and sources(out) == ["compile", "compile"]
    assert len(warned(out, "symbolic link")) == 2


def test_entry_writable_by_others_is_refused(project):
    for p in project.entries():
        os.chmod(p, 0o666)
    out = project.run()
    assert values(out) == GOOD and sources(out) == ["compile", "compile"]
    assert len(warned(out, "writable by group or others")) == 2


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_entry_owned_by_another_user_is_refused(project):
    for p in project.entries():
        os.chown(p, 4242, -1)
    out = project.run()
    assert values(out) == GOOD and sources(out) == ["compile", "compile"]
    assert len(warned(out, "owned by another user")) == 2


def test_cache_directory_writable_by_others_is_refused_once(project):
    d = project.root / "cache" / "fastcache"
    before = {p.name: p.read_bytes() for p in project.entries()}
    os.chmod(d, 0o777)
    out = project.run()
    assert values(out) == GOOD and sources(out) == ["compile", "compile"]
    assert len(warned(out, "writable by group or others")) == 1
    assert {p.name: p.read_bytes() for p in project.entries()} == before  # nothing written there either


def test_without_a_usable_secret_the_disk_cache_is_off(project, tmp_path_factory):
    blocker = tmp_path_factory.mktemp("cfg") / "a-file"
    blocker.write_text("")
    for p in project.entries():
        p.unlink()
    out = project.run(QD_CONFIG_DIR=str(blocker / "qd"))
    assert values(out) == GOOD and sources(out) == ["compile", "compile"]
    assert len(warned(out, "disk cache disabled")) == 1
    assert project.entries() == []


def test_secret_is_private_and_outside_the_cache(project):
    d = os.environ["QD_CONFIG_DIR"]
    key = os.path.join(d, "fastcache.key")
    assert stat.S_IMODE(os.stat(key).st_mode) == 0o600 and stat.S_IMODE(os.stat(d).st_mode) == 0o700
    assert os.path.getsize(key) == 32
    assert not os.path.realpath(key).startswith(os.path.realpath(project.root / "cache"))


def test_explain_cli_skips_a_fifo_among_the_entries(project):
    os.mkfifo(project.root / "cache" / "fastcache" / ("0" * 32 + ".qdk"), 0o600)
    r = subprocess.run([sys.executable, "-m", "qd.explain.cli", "--cache-dir", str(project.root / "cache"), "k"],
                       env=child_env(), capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("(cache entry ") == 2 and "not a regular file" in r.stderr
