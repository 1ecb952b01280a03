# SPDX-License-Identifier: MIT
"""The tarball J11 untars: a path given with --tarball; for a smoke run a
`git archive` of this repository (no download); otherwise the Linux
source tree of a Debian package (PACKAGE: the .deb holds
usr/src/PACKAGE.tar.xz), fetched once with `apt-get download` (the
machine's own apt sources, never changed) into a cache directory outside
the repository and kept there decompressed, so that no target's untar
pays for xz."""

import glob
import os
import shlex

from . import REPO
from .util import die, log, run

CACHE = "/var/cache/fring-bench"
PACKAGE = "linux-source-6.1"  # Debian 12's Linux source, 83,731 entries, 1.3 GiB


def debian_tar(cache=CACHE, package=PACKAGE):
    """cache/PACKAGE.tar, made from the package's .deb (downloaded into
    cache if it is not there yet)."""
    tar = os.path.join(cache, package + ".tar")
    if os.path.exists(tar):
        return tar
    os.makedirs(cache, exist_ok=True)
    debs = sorted(glob.glob(os.path.join(cache, package + "_*.deb")))
    if not debs:
        log("downloading the Debian package %s into %s (apt-get download)" % (package, cache))
        r = run(["apt-get", "download", package], cwd=cache)
        debs = sorted(glob.glob(os.path.join(cache, package + "_*.deb")))
        if r.returncode != 0 or not debs:
            die("apt-get download %s failed: %s" % (package, r.stderr[-1000:]))
    log("decompressing %s's source tarball into %s" % (os.path.basename(debs[-1]), tar))
    member = "./usr/src/%s.tar.xz" % package
    r = run(["bash", "-o", "pipefail", "-c", "dpkg-deb --fsys-tarfile %s | "
             "tar -xO %s | xz -dc > %s" % (shlex.quote(debs[-1]), shlex.quote(member),
                                           shlex.quote(tar + ".part"))])
    if r.returncode != 0 or not os.path.getsize(tar + ".part"):
        die("could not unpack %s from %s: %s" % (member, debs[-1], r.stderr[-1000:]))
    os.rename(tar + ".part", tar)
    return tar


def repo_tar(workdir):
    """A tar of this repository's HEAD (git archive) in workdir."""
    tar = os.path.join(workdir, "fring-src.tar")
    r = run(["git", "-C", REPO, "archive", "--format=tar", "-o", tar, "HEAD"])
    if r.returncode != 0:
        die("git archive failed: %s" % r.stderr[-1000:])
    return tar


def describe(path):
    """The tarball as the run records it: path, name, bytes and entries
    (`tar -tf`'s lines)."""
    r = run(["tar", "-tf", path])
    if r.returncode != 0:
        die("tar -tf %s failed: %s" % (path, r.stderr[-1000:]))
    return {"path": path, "name": os.path.basename(path), "bytes": os.path.getsize(path),
            "entries": len(r.stdout.splitlines())}


def prepare(given, cache, quick, workdir):
    """The tarball J11 uses (see the module's text), described."""
    if given:
        path = os.path.abspath(given)
    elif quick:
        path = repo_tar(workdir)
    else:
        path = debian_tar(cache)
    return describe(path)
