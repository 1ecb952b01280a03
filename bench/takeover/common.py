# SPDX-License-Identifier: MIT
"""What the takeover benchmarks share: the fring build they run and the
source tree of many inodes that passthrough's state must carry."""

import argparse
import os


def parser(doc):
    """An argument parser for a script whose docstring is doc (its first
    paragraph the description, the rest the epilog), with --fring and
    --plugin-dir defaulting to the repository's build/."""
    build = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "build")
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0],
                                 epilog=doc.split("\n\n", 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fring", default=os.path.join(build, "bin", "fring"),
                    help="the fring binary (default: build/bin/fring)")
    ap.add_argument("--plugin-dir", default=os.path.join(build, "lib", "fring", "plugins"),
                    help="FRING_PLUGIN_PATH (default: the build's plugins)")
    return ap


def make_tree(src, inodes):
    """inodes files under src, 1,000 a directory (d000/f000000, ...), each
    holding its own relative path; returns those paths."""
    names = []
    for i in range(inodes):
        d = "d%03d" % (i // 1000)
        if i % 1000 == 0:
            os.mkdir(os.path.join(src, d))
        names.append(os.path.join(d, "f%06d" % i))
        with open(os.path.join(src, names[-1]), "w") as w:
            w.write(names[-1])
    return names
