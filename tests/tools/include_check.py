#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The layers of core/ point only down (ARCHITECTURE.md).

Reads every #include "..." under core/ and fails on
  - an include of a folder in a higher layer than the includer's
    (LAYERS below), or of a folder the table does not know;
  - a cycle between folders (sideways includes within one layer);
  - a cycle between modules: X.c and X.h are one module, and module X
    depends on Y when X.c or X.h includes Y.h.
Includes that resolve to no file under core/ (<...> headers, the ABI) are
not checked.

  include_check.py [REPO]     check REPO/core (default: this checkout)
  include_check.py --self-test  show that each rule fails where it should
"""
import os
import re
import sys
import tempfile

# Bottom first. A folder may include its own layer's or a lower layer's.
LAYERS = [
    ("base",),                                # log, strings, errors
    ("proto", "config", "mount", "loader"),   # the kernel's words, YAML, mount(2), plugins
    ("request",),                             # request lifecycle, replies, in-flight, stats
    ("transport",),                           # /dev/fuse and io_uring behind transport.h
    ("runtime",),                             # dispatch, host services, INIT, session
    ("cli", "embed"),                         # the fring binary and libfring's API
]
LAYER_OF = {f: i for i, fs in enumerate(LAYERS) for f in fs}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def scan(core):
    """[(src, line, target)] for every include that resolves under core."""
    out = []
    for d, _, files in sorted(os.walk(core)):
        for f in sorted(files):
            if not f.endswith((".c", ".h")):
                continue
            src = os.path.join(d, f)
            with open(src, encoding="utf-8", errors="replace") as fh:
                for n, line in enumerate(fh, 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    for base in (d, core):
                        t = os.path.normpath(os.path.join(base, m.group(1)))
                        if os.path.isfile(t):
                            out.append((src, n, t))
                            break
    return out


def folder(core, path):
    rel = os.path.relpath(path, core).split(os.sep)
    return rel[0] if len(rel) > 1 else "."


def cycles(graph):
    """Strongly connected components of more than one node (Tarjan)."""
    index, low, stack, on, found = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def check(core):
    """A list of problems (empty: the layers hold)."""
    problems = []
    folders, modules = {}, {}
    incs = scan(core)
    for src, n, tgt in incs:
        a, b = folder(core, src), folder(core, tgt)
        where = f"{os.path.relpath(src, core)}:{n}"
        for f in {a, b} - set(LAYER_OF):
            problems.append(f"{where}: folder core/{f} is in no layer: "
                            "add it to LAYERS in tests/tools/include_check.py")
        if a in LAYER_OF and b in LAYER_OF and LAYER_OF[b] > LAYER_OF[a]:
            problems.append(f"{where}: upward include of core/{os.path.relpath(tgt, core)} "
                            f"({a} is layer {LAYER_OF[a]}, {b} layer {LAYER_OF[b]})")
        if a != b:
            folders.setdefault(a, set()).add(b)
        ma = os.path.splitext(os.path.relpath(src, core))[0]
        mb = os.path.splitext(os.path.relpath(tgt, core))[0]
        if ma != mb:
            modules.setdefault(ma, set()).add(mb)
    for comp in cycles(folders):
        problems.append("folders include each other: " + " <-> ".join(comp))
    for comp in cycles(modules):
        problems.append("include cycle between modules (X.c + X.h): "
                        + " <-> ".join(comp))
    return problems, len(incs)


def self_test():
    """Each rule, on a small tree: the clean one passes, each break fails."""
    def tree(files):
        root = tempfile.mkdtemp(prefix="include_check.")
        for path, text in files.items():
            p = os.path.join(root, path)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "w") as fh:
                fh.write(text)
        return root

    clean = {"base/log.h": "", "base/log.c": '#include "log.h"\n',
             "request/req.h": '#include "../base/log.h"\n',
             "runtime/a.h": "", "runtime/a.c": '#include "a.h"\n#include "../request/req.h"\n'}
    cases = {
        "clean": (clean, None),
        "upward": (dict(clean, **{"base/log.c": '#include "../runtime/a.h"\n'}), "upward include"),
        "unknown folder": (dict(clean, **{"extra/x.c": '#include "../base/log.h"\n'}), "in no layer"),
        "module cycle": (dict(clean, **{"runtime/b.h": "", "runtime/b.c": '#include "a.h"\n',
                                        "runtime/a.c": '#include "b.h"\n'}), "include cycle"),
        "folder cycle": (dict(clean, **{"proto/p.h": '#include "../config/c.h"\n',
                                        "config/c.h": "", "config/c.c": '#include "../proto/p.h"\n'}),
                         "folders include each other"),
    }
    bad = 0
    for name, (files, want) in cases.items():
        problems, _ = check(tree(files))
        ok = not problems if want is None else any(want in p for p in problems)
        print(f"self-test {name}: {'ok' if ok else 'WRONG'}" + ("" if ok else f" {problems}"))
        bad += not ok
    return 1 if bad else 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    repo = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
    core = os.path.join(repo, "core")
    problems, n = check(core)
    for p in problems:
        print("include_check:", p)
    if problems:
        return 1
    print(f"include_check: {n} includes under core/, every one points down, no cycle")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
