# SPDX-License-Identifier: MIT
"""The cffi declarations of fring's public headers, generated when the
package is imported: the C preprocessor expands abi/include/fring/fring.h
(which includes plugin.h) against empty <stdint.h>/<stddef.h> (cffi knows
those types), and the integer FRING_* macros are evaluated from `cc -dM`.
So the binding always has the layout and constants of the headers it is
pointed at, never a hand-copied one.

Headers: FRING_INCLUDE_DIR, else this repository's abi/include (a
checkout), else the copy an installed package carries (fring/include,
made by `pip install`), else the includedir of pkg-config's `fring`.
Needs a C preprocessor (`cc`, or CC).
"""
import os
import re
import shutil
import subprocess
import tempfile

_HERE = os.path.dirname(os.path.abspath(__file__))
_REPO = os.path.normpath(os.path.join(_HERE, "..", "..", ".."))
_REPO_INCLUDE = os.path.join(_REPO, "abi", "include")
# the checkout this package sits in (bindings/python/fring), else None
REPO = _REPO if os.path.isdir(_REPO_INCLUDE) else None
PACKAGE_INCLUDE = os.path.join(_HERE, "include")


def include_dir():
    """The directory holding fring/fring.h, or raise FileNotFoundError."""
    cands = [os.environ.get("FRING_INCLUDE_DIR"), _REPO_INCLUDE, PACKAGE_INCLUDE]
    if shutil.which("pkg-config"):
        r = subprocess.run(["pkg-config", "--variable=includedir", "fring"],
                           capture_output=True, text=True)
        if r.returncode == 0:
            cands.append(r.stdout.strip())
    for d in cands:
        if d and os.path.exists(os.path.join(d, "fring", "fring.h")):
            return os.path.abspath(d)
    raise FileNotFoundError("fring headers not found: set FRING_INCLUDE_DIR to "
                            "the directory holding fring/fring.h")


def _cpp(incdir, extra, header):
    cc = os.environ.get("CC", "cc")
    with tempfile.TemporaryDirectory() as fake:
        for h in ("stdint.h", "stddef.h"):
            open(os.path.join(fake, h), "w").close()
        r = subprocess.run([cc, "-E", "-P", "-nostdinc", "-I", fake, "-I", incdir,
                            "-x", "c", *extra, "-"],
                           input="#include <%s>\n" % header, capture_output=True,
                           text=True)
    if r.returncode != 0:
        raise RuntimeError("preprocessing %s failed: %s" % (header, r.stderr.strip()))
    return r.stdout


_INT = re.compile(r"^[0-9a-fA-FxX()<>|&~+\- ]+$")


def _int_value(expr):
    """The value of a C integer-constant macro body, or None."""
    e = re.sub(r"(?<=[0-9a-fA-F])[uU]?[lL]{0,2}[uU]?\b", "", expr.strip())
    if not e or not _INT.match(e):
        return None
    try:
        return int(eval(e, {"__builtins__": {}}))  # digits and operators only
    except (SyntaxError, ValueError, TypeError):
        return None


def declarations(incdir, header="fring/fring.h"):
    """(cdef text, {FRING_* name: int}) of header (fring/fring.h: the
    embedding API and, through it, plugin.h) in incdir."""
    cdef = _cpp(incdir, [], header)
    consts = {}
    for line in _cpp(incdir, ["-dM"], header).splitlines():
        m = re.match(r"#define (FRING_[A-Z0-9_]+) (.+)$", line)
        if m:
            v = _int_value(m.group(2))
            if v is not None:
                consts[m.group(1)] = v
    return cdef, consts
