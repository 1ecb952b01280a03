#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write the fuzz seed corpora (run from anywhere; output is deterministic).

corpus/decode/: valid requests for every FUSE opcode (plus a few unknown
ones), each in the classic /dev/fuse form and the two-part io_uring form,
under several plugin behaviours. Each file is fuzz_decode's framing
(fuzz.h): flags, behaviour, split (LE16), scratch size (LE16), then the
request.

corpus/ring/: io_uring request arrivals for fuzz_ring (its framing is in
fuzz_ring.c): per-entry buffers, pools, zero-copy queues, offsets inside
and outside the pool, commit id 0, teardown results, held, stale and
doubled replies, data-path services.

corpus/config/: copies of tests/unit/config/*.yaml ("unit-*") and
plugins/*/example.yaml ("example-*"); hand-written "extra-*" seeds are
left alone.
"""
import pathlib
import shutil
import struct

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]

# fuzz.h
TWO_PART, FIX_LEN, XATTR_EXT, SCRATCH, PARALLEL, MISALIGN = 0x01, 0x02, 0x04, 0x08, 0x40, 0x80
MAXW_1M = 3 << 4
B_CORRECT, B_ERRNO, B_ANYKIND, B_TWICE, B_LATER, B_DEFAULTS, B_FD, B_DIRNAMES = range(8)
URING_OP_IN = 128  # FUSE_URING_OP_IN_OUT_SZ: the io_uring arg area


def name(*parts):
    return b"".join(p.encode() + b"\0" for p in parts)


def q(*v):
    return struct.pack("<%dQ" % len(v), *v)


def i(*v):
    return struct.pack("<%dI" % len(v), *v)


READ_IN = q(7, 4096) + i(4096, 0) + q(0) + i(0x8002, 0)          # fh off size . owner flags
WRITE_IN = q(7, 0) + i(11, 0) + q(0) + i(0x8002, 0)
LK_IN = q(7, 99) + q(0, 0x7FFFFFFFFFFFFFFF) + i(1, 42) + i(0, 0)  # fh owner lock lk_flags

# opcode: (name, arg 0, payload)
OPS = {
    1: ("lookup", b"", name("file.txt")),
    2: ("forget", q(3), b""),
    3: ("getattr", i(1, 0) + q(7), b""),
    4: ("setattr", i(0x3F, 0) + q(7, 4096, 0, 1, 2, 3) + i(4, 5, 6, 0o644, 0, 1000, 100, 0), b""),
    5: ("readlink", b"", b""),
    6: ("symlink", b"", name("link", "/target/path")),
    8: ("mknod", i(0o10644, 0x0801, 0o22, 0), name("fifo")),
    9: ("mkdir", i(0o755, 0o22), name("dir")),
    10: ("unlink", b"", name("file.txt")),
    11: ("rmdir", b"", name("dir")),
    12: ("rename", q(1), name("old", "new")),
    13: ("link", q(5), name("hard")),
    14: ("open", i(2, 0), b""),
    15: ("read", READ_IN, b""),
    16: ("write", WRITE_IN, b"hello world"),
    17: ("statfs", b"", b""),
    18: ("release", q(7) + i(2, 0) + q(0), b""),
    20: ("fsync", q(7) + i(1, 0), b""),
    21: ("setxattr", i(5, 1, 0, 0), name("user.k") + b"value"),
    22: ("getxattr", i(64, 0), name("user.k")),
    23: ("listxattr", i(0, 0), b""),
    24: ("removexattr", b"", name("user.k")),
    25: ("flush", q(7) + i(0, 0) + q(99), b""),
    26: ("init", i(7, 45, 131072, 0x73FFFFFB, 0x7FD) + bytes(44), b""),
    27: ("opendir", i(0, 0), b""),
    28: ("readdir", q(7, 0) + i(4096, 0) + q(0) + i(0, 0), b""),
    29: ("releasedir", q(7) + i(0, 0) + q(0), b""),
    30: ("fsyncdir", q(7) + i(0, 0), b""),
    31: ("getlk", LK_IN, b""),
    32: ("setlk", LK_IN, b""),
    33: ("setlkw", LK_IN, b""),
    34: ("access", i(4, 0), b""),
    35: ("create", i(0o102, 0o100644, 0o22, 0), name("new.txt")),
    36: ("interrupt", q(0x1000), b""),
    37: ("bmap", q(0) + i(4096, 0), b""),
    38: ("destroy", b"", b""),
    39: ("ioctl", q(7) + i(0, 0x5401) + q(0) + i(0, 0), b""),
    40: ("poll", q(7, 1) + i(0, 1), b""),
    41: ("notify_reply", q(0, 0) + i(0, 0) + q(0, 0), b""),
    42: ("batch_forget", i(2, 0), q(5, 1, 6, 2)),
    43: ("fallocate", q(7, 0, 8192) + i(0, 0), b""),
    44: ("readdirplus", q(7, 0) + i(4096, 0) + q(0) + i(0, 0), b""),
    45: ("rename2", q(1) + i(1, 0), name("a", "b")),
    46: ("lseek", q(7, 0) + i(3, 0), b""),
    47: ("copy_file_range", q(7, 0, 5, 8, 0, 65536, 0), b""),
    48: ("setupmapping", q(7, 0, 4096, 0, 0), b""),
    49: ("removemapping", i(1), b""),
    50: ("syncfs", q(0), b""),
    51: ("tmpfile", i(0o2, 0o100600, 0o22, 0), name("tmp")),
    52: ("statx", i(0, 0) + q(7) + i(0, 0x7FF), b""),
    53: ("copy_file_range_64", q(7, 0, 5, 8, 0, 1 << 33, 0), b""),
    99: ("unknown99", q(0), b""),
    4096: ("cuse_init", i(7, 45, 0, 0), b""),
}


def header(opcode, length, uid=1000, extlen=0):
    return struct.pack("<IIQQIIIHH", length, opcode, 0x1000 + 2 * opcode, 1,
                       uid, 100, 4242, extlen, 0)


def framed(flags, beh, split, scratch, req):
    return bytes([flags, beh]) + struct.pack("<HH", split, scratch) + req


def classic(op, arg, payload, flags=FIX_LEN, beh=B_CORRECT, uid=1000, scratch=0):
    body = arg + payload
    return framed(flags, beh, 0, scratch, header(op, 40 + len(body), uid) + body)


def two_part(op, arg, payload, pad=True, flags=0, beh=B_CORRECT, uid=1000):
    # The io_uring transport hands over a fixed-size arg area.
    if pad:
        arg = arg + bytes(max(0, URING_OP_IN - len(arg)))
    return framed(flags | TWO_PART, beh, len(arg), 0,
                  header(op, 40 + len(arg) + len(payload), uid) + arg + payload)


def decode_seeds():
    seeds = {}
    for op, (n, arg, pay) in OPS.items():
        seeds[n + "-classic"] = classic(op, arg, pay, FIX_LEN | XATTR_EXT | MAXW_1M)
        seeds[n + "-uring"] = two_part(op, arg, pay, True, XATTR_EXT)
        seeds[n + "-uring-exact-errno"] = two_part(op, arg, pay, False, XATTR_EXT,
                                                   B_ERRNO, uid=2**32 - 2)
        seeds[n + "-later-scratch"] = classic(op, arg, pay, FIX_LEN | SCRATCH | XATTR_EXT,
                                              B_LATER, scratch=4096)
        seeds[n + "-defaults"] = classic(op, arg, pay, XATTR_EXT, B_DEFAULTS)
        seeds[n + "-twice-parallel"] = two_part(op, arg, pay, True,
                                                PARALLEL | XATTR_EXT, B_TWICE)
        for k in (op % 15, op % 15 + 15):  # + 15: one past the limit
            seeds[n + "-anykind-%d" % k] = classic(op, arg, pay, XATTR_EXT,
                                                   B_ANYKIND | (k << 3))
    # Data-path services, hostile directory names, compat layouts, extensions.
    for knob in (0, 1, 2, 3, 4, 8):
        seeds["read-fd-%d" % knob] = classic(15, READ_IN, b"", beh=B_FD | knob << 3)
        seeds["write-fd-%d" % knob] = two_part(16, WRITE_IN, b"hello world",
                                               beh=B_FD | knob << 3)
    for knob in range(0, 32, 5):
        seeds["readdir-names-%d" % knob] = classic(28, OPS[28][1], b"",
                                                   beh=B_DIRNAMES | knob << 3)
        seeds["readdirplus-names-%d" % knob] = two_part(44, OPS[44][1], b"",
                                                        beh=B_DIRNAMES | knob << 3)
    seeds["lookup-names"] = classic(1, b"", name("x"), beh=B_DIRNAMES)
    for op in (1, 6, 12, 16, 21, 42):  # payloads read through pointers
        n, arg, pay = OPS[op]
        seeds[n + "-uring-misaligned"] = two_part(op, arg, pay, True, MISALIGN | XATTR_EXT)
    seeds["setxattr-compat"] = classic(21, i(5, 1), name("user.k") + b"value")
    seeds["init-compat16"] = classic(26, i(7, 22, 4096, 0x1FF), b"")
    seeds["init-major8"] = classic(26, i(8, 0, 0, 0) + bytes(48), b"")
    ext = bytes(8)
    seeds["lookup-ext"] = framed(FIX_LEN, 0, 0, 0,
                                 header(1, 40 + 6 + 8, extlen=1) + name("name") + b"\0" + ext)
    seeds["readlink-long"] = framed(0, 0, 0, 0, struct.pack(
        "<IIQQIIIHH", 40, 5, 2, 4200, 0, 0, 0, 0, 0))
    seeds["short-header"] = framed(0, 0, 0, 0, header(1, 40)[:20])
    return seeds


# fuzz_ring.c: queue flags, behaviours, the ring entry's header buffer.
R_POOL, R_REFUSED, R_ZC, R_PARALLEL, R_CLOSED, R_DEFAULTS = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20
P_REPLY, P_ERR, P_HOLD, P_FD, P_TWICE, P_SHORT, P_BIG, P_LATE = range(8)
RES_OK, RES_NOTCONN, RES_CANCELED = 0, 2, 3
IN_OUT_SZ = 128      # FUSE_URING_IN_OUT_HEADER_SZ
ENT_ZERO_COPY = 1    # FUSE_URING_ENT_ZERO_COPY
KIB = 1024


def ring_geo(nbufs, size_kib):
    return (nbufs - 1) | {8: 0, 16: 1, 64: 2, 128: 3}[size_kib] << 3


def ring_entry(op, arg, payload, ent=0, beh=P_REPLY, res=RES_OK, commit_id=None,
               offset=0, psz=None, eflags=0, unique=None):
    """One record: entry index, behaviour, CQE result; the header buffer
    (in header, op args, fuse_uring_ent_in_out); the payload."""
    hdr = header(op, 40 + len(arg) + len(payload))
    if unique is not None:
        hdr = hdr[:8] + q(unique) + hdr[16:]
    hdr += bytes(IN_OUT_SZ - len(hdr))
    arg = arg + bytes(URING_OP_IN - len(arg))
    cid = 0x100 + ent if commit_id is None else commit_id
    eio = q(eflags, cid) + i(len(payload) if psz is None else psz, offset) + q(0)
    sel = ent | beh << 3 | res << 6
    return bytes([sel]) + struct.pack("<H", len(payload)) + hdr + arg + eio + payload


def ring_seeds():
    seeds = {}
    small = ring_geo(4, 8)
    for op in (1, 3, 15, 16, 28, 2, 25, 18, 21, 44):
        n, arg, pay = OPS[op]
        seeds["ring-%s-entry" % n] = bytes([0, small]) + ring_entry(op, arg, pay)
        seeds["ring-%s-pool" % n] = bytes([R_POOL, small]) + ring_entry(op, arg, pay)
        seeds["ring-%s-pool-buf2" % n] = bytes([R_POOL, small]) + ring_entry(
            op, arg, pay, ent=2, offset=2 * 8 * KIB)
        seeds["ring-%s-defaults" % n] = bytes([R_POOL | R_DEFAULTS, small]) + \
            ring_entry(op, arg, pay, beh=P_ERR)
    read, write = OPS[15], OPS[16]
    # The pool filled by held requests, one buffer each, then released.
    seeds["ring-pool-full-held"] = bytes([R_POOL | R_PARALLEL, small]) + b"".join(
        ring_entry(15, read[1], b"", ent=k, beh=P_HOLD, offset=k * 8 * KIB)
        for k in range(4)) + ring_entry(3, OPS[3][1], b"", ent=4, beh=P_HOLD,
                                        offset=0)
    # Offsets the kernel never sends: inside a buffer, past the pool.
    seeds["ring-offset-mid-buffer"] = bytes([R_POOL, small]) + ring_entry(
        3, OPS[3][1], b"", offset=4096)
    seeds["ring-offset-past-pool"] = bytes([R_POOL, small]) + ring_entry(
        16, write[1], write[2], offset=4 * 8 * KIB)
    seeds["ring-offset-huge"] = bytes([R_POOL, ring_geo(8, 128)]) + ring_entry(
        1, b"", OPS[1][2], offset=0xFFFE0000)
    seeds["ring-commit-id-0"] = bytes([R_POOL, small]) + ring_entry(
        3, OPS[3][1], b"", commit_id=0) + ring_entry(3, OPS[3][1], b"", ent=1)
    seeds["ring-teardown-results"] = bytes([0, small]) + ring_entry(
        3, OPS[3][1], b"", res=RES_NOTCONN) + ring_entry(
        3, OPS[3][1], b"", ent=1, res=RES_CANCELED)
    # payload_sz past the buffer, and a payload that is not there.
    seeds["ring-payload-sz-big"] = bytes([R_POOL, small]) + ring_entry(
        16, write[1], write[2], psz=0xFFFFFFFF)
    seeds["ring-payload-sz-short"] = bytes([0, small]) + ring_entry(
        16, write[1], write[2], psz=3)
    # Zero-copy: a READ with no buffer, a WRITE whose data is in the pages.
    seeds["ring-zc-read"] = bytes([R_POOL | R_ZC, small]) + ring_entry(
        15, read[1], b"", eflags=ENT_ZERO_COPY, beh=P_FD)
    seeds["ring-zc-read-reply-data"] = bytes([R_POOL | R_ZC, small]) + ring_entry(
        15, read[1], b"", eflags=ENT_ZERO_COPY)
    seeds["ring-zc-write"] = bytes([R_POOL | R_ZC, small]) + ring_entry(
        16, write[1], b"", psz=11, eflags=ENT_ZERO_COPY, beh=P_FD)
    seeds["ring-zc-flag-copy-queue"] = bytes([R_POOL, small]) + ring_entry(
        15, read[1], b"", eflags=ENT_ZERO_COPY, beh=P_FD)
    # Data-path services, closed rings, replies too big, twice, stale.
    seeds["ring-read-fd"] = bytes([R_POOL, small]) + ring_entry(15, read[1], b"", beh=P_FD)
    seeds["ring-write-fd"] = bytes([0, small]) + ring_entry(16, write[1], write[2], beh=P_FD)
    seeds["ring-read-fd-closed"] = bytes([R_POOL | R_CLOSED, small]) + ring_entry(
        15, read[1], b"", beh=P_FD)
    seeds["ring-read-big"] = bytes([R_POOL, small]) + ring_entry(15, read[1], b"", beh=P_BIG)
    seeds["ring-read-short"] = bytes([R_POOL, small]) + ring_entry(15, read[1], b"", beh=P_SHORT)
    seeds["ring-readdir-big"] = bytes([R_POOL, small]) + ring_entry(28, OPS[28][1], b"", beh=P_BIG)
    seeds["ring-twice"] = bytes([R_POOL, small]) + ring_entry(3, OPS[3][1], b"", beh=P_TWICE)
    seeds["ring-stale-reuse"] = bytes([R_POOL, small]) + ring_entry(
        3, OPS[3][1], b"", beh=P_LATE) + ring_entry(15, read[1], b"", beh=P_HOLD)
    seeds["ring-refused-pool"] = bytes([R_POOL | R_REFUSED, small]) + ring_entry(
        16, write[1], write[2], offset=8 * KIB)
    seeds["ring-reuse-entry"] = bytes([R_POOL, small]) + b"".join(
        ring_entry(op, OPS[op][1], OPS[op][2], offset=0) for op in (1, 3, 16, 15, 2))
    return seeds


def write_dir(path, files, keep=lambda p: False):
    path.mkdir(parents=True, exist_ok=True)
    for old in path.iterdir():
        if old.is_file() and not keep(old):
            old.unlink()
    for n, data in sorted(files.items()):
        (path / n).write_bytes(data)


def main():
    write_dir(HERE / "corpus" / "decode", decode_seeds())
    write_dir(HERE / "corpus" / "ring", ring_seeds())
    configs = {"unit-" + p.name: p.read_bytes()
               for p in sorted((ROOT / "tests" / "unit" / "config").glob("*.yaml"))}
    for p in sorted(ROOT.glob("plugins/*/example.yaml")):
        configs["example-%s.yaml" % p.parent.name] = p.read_bytes()
    write_dir(HERE / "corpus" / "config", configs,
              keep=lambda p: p.name.startswith("extra-"))
    print("corpus: %d decode seeds, %d ring seeds, %d config copies" %
          (len(decode_seeds()), len(ring_seeds()), len(configs)))


if __name__ == "__main__":
    main()
