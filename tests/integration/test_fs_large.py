# SPDX-License-Identifier: MIT
"""Volume: a 1 GiB file and a 10,000-entry directory, on memfs and
passthrough."""

import hashlib
import os

BLOCK = 1 << 20
GIB_BLOCKS = 1024


def blocks():
    """1 GiB of data; every block differs (its index leads it) so a block
    written to or read from the wrong offset is caught."""
    base = os.urandom(BLOCK)
    for i in range(GIB_BLOCKS):
        yield i.to_bytes(8, "little") + base[8:]


def sha256_of(path):
    h = hashlib.sha256()
    with open(path, "rb", buffering=0) as f:
        # Drop the cached pages so the data really comes from the server.
        os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
        while True:
            chunk = f.read(BLOCK)
            if not chunk:
                break
            h.update(chunk)
    return h.hexdigest()


def test_1gib_file_roundtrip(fs):
    p = fs / "big"
    written = hashlib.sha256()
    with open(p, "wb", buffering=0) as f:
        for b in blocks():
            assert f.write(b) == BLOCK
            written.update(b)
    assert os.stat(p).st_size == GIB_BLOCKS * BLOCK
    assert sha256_of(p) == written.hexdigest()
    if fs.source:
        assert sha256_of(os.path.join(fs.source, "big")) == written.hexdigest()
    os.unlink(p)


def test_readdir_10000_entries(fs):
    d = fs / "many"
    os.mkdir(d)
    names = {"entry-%05d" % i for i in range(10000)}
    for n in names:
        os.close(os.open(d / n, os.O_CREAT | os.O_WRONLY, 0o644))

    listed = os.listdir(d)
    assert len(listed) == len(names), "duplicates or misses in listdir"
    assert set(listed) == names

    with os.scandir(d) as it:
        entries = list(it)
    assert len(entries) == len(names), "duplicates or misses in scandir"
    assert {e.name for e in entries} == names
    assert all(e.is_file(follow_symlinks=False) for e in entries)
    if fs.source:
        assert set(os.listdir(os.path.join(fs.source, "many"))) == names
