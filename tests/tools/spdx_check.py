#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Every tracked source file names its licence in an SPDX line.

Usage: tests/tools/spdx_check.py [--fix] [--root DIR] | --self-test

Sources are C (.c .h .def), Python, shell, Rust, TOML, CMake, scdoc and
the bench/CI entry scripts. YAML is left out on purpose: config fixtures
and examples are read for FILE:LINE:COL errors, and a line in front would
move every position. Copies of old public headers (tests/fixtures/abi-*)
stay as they were released.

The line must be within the first 3 lines (after a shebang). Exit status:
0 all have it, 1 some lack it (named, one per line), 2 usage error.
--fix inserts `SPDX-License-Identifier: MIT` in the file's comment style
after a shebang, or first.
"""
import pathlib
import re
import subprocess
import sys

TAG = "SPDX-License-Identifier"
STYLE = {".c": "//", ".h": "//", ".def": "//", ".rs": "//",
         ".py": "#", ".sh": "#", ".toml": "#", ".cmake": "#",
         ".scd": ";", ".in": None}
SCRIPTS = {"bench/run", ".ci/run"}
SKIP = re.compile(r"^(tests/fixtures/abi-|bench/results/|tests/fuzz/corpus)")


def comment(path):
    if path.name == "CMakeLists.txt" or str(path) in SCRIPTS:
        return "#"
    return STYLE.get(path.suffix)


def sources(root):
    out = subprocess.run(["git", "-C", root, "ls-files", "-z"], check=True,
                         capture_output=True, text=True).stdout
    for name in filter(None, out.split("\0")):
        p = pathlib.Path(name)
        if SKIP.match(name) or not comment(p):
            continue
        yield p


def has_tag(text):
    return any(TAG in line for line in text.splitlines()[:3])


def fix(path, text, mark):
    line = f"{mark} {TAG}: MIT\n"
    if text.startswith("#!"):
        first, _, rest = text.partition("\n")
        return first + "\n" + line + rest
    return line + text


def self_test():
    """A temp repository with a C file and a shell script without the
    line and a Python file with it: the check must name exactly the two,
    --fix must add the line (after the shebang) and the check then pass."""
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        root = pathlib.Path(d)
        (root / "a.c").write_text("int a;\n")
        (root / "b.sh").write_text("#!/bin/sh\necho b\n")
        (root / "c.py").write_text(f"# {TAG}: MIT\n")
        (root / "d.yaml").write_text("mounts: []\n")
        subprocess.run(["git", "-C", d, "init", "-q"], check=True)
        subprocess.run(["git", "-C", d, "add", "."], check=True)
        out = subprocess.run([sys.executable, __file__, "--root", d],
                             capture_output=True, text=True)
        named = sorted(l.rsplit(" ", 1)[1] for l in out.stdout.splitlines())
        assert out.returncode == 1 and named == ["a.c", "b.sh"], out
        subprocess.run([sys.executable, __file__, "--fix", "--root", d],
                       check=True)
        assert (root / "a.c").read_text() == f"// {TAG}: MIT\nint a;\n"
        assert (root / "b.sh").read_text().splitlines()[:2] == \
            ["#!/bin/sh", f"# {TAG}: MIT"]
        assert (root / "d.yaml").read_text() == "mounts: []\n"
        out = subprocess.run([sys.executable, __file__, "--root", d])
        assert out.returncode == 0
    print("spdx_check self-test: ok")
    return 0


def main(argv):
    args = list(argv)
    if args == ["--self-test"]:
        return self_test()
    do_fix = "--fix" in args
    if do_fix:
        args.remove("--fix")
    root = "."
    if args[:1] == ["--root"] and len(args) == 2:
        root = args[1]
    elif args:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    missing = []
    for p in sources(root):
        f = pathlib.Path(root) / p
        if not f.exists():
            continue
        text = f.read_text(errors="surrogateescape")
        if has_tag(text):
            continue
        if do_fix:
            f.write_text(fix(p, text, comment(p)), errors="surrogateescape")
        else:
            missing.append(str(p))
    for m in missing:
        print(f"spdx_check: no {TAG} line: {m}")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
