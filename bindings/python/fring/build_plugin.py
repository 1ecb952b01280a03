"""Build fring_python.so, the plugin that runs filesystems written in
Python (fring.plugin), with cffi's embedding mode:

    python3 -m fring.build_plugin OUTDIR      # -> OUTDIR/fring_python.so

The .so exports fring_plugin_entry_v1 like any plugin, embeds this
python3 (libpython, found through sysconfig and an rpath), and on its first
call imports fring.plugin, which holds every callback. Needs a C compiler
and this Python's headers (sysconfig include dir). Mount with the option
`module: PATH` naming the Python file that defines the filesystem.

No path is built into the .so. It imports the fring package from, in
order: the directories of FRING_PYTHONPATH (colon-separated), a fring/
package beside the .so (build() copies this one to OUTDIR/fring), then
sys.path (an installed package, PYTHONPATH). So OUTDIR can move, and the
checkout it was built from can move or go.
"""
import os
import shutil
import sys
import sysconfig

import cffi

from . import _abi

HERE = os.path.dirname(os.path.abspath(__file__))

# The callbacks the .so forwards to Python (fring/plugin.py defines them).
CALLBACKS = """
extern "Python" int32_t fring_py_create(fring_mount *, void **);
extern "Python" int32_t fring_py_config(void *, const char *, const char *);
extern "Python" int32_t fring_py_config_complete(void *);
extern "Python" void fring_py_destroy(void *);
extern "Python" void fring_py_lookup(void *, fring_req *, const struct fring_name_args *);
extern "Python" void fring_py_forget(void *, const struct fring_forget_one *, uint32_t);
extern "Python" void fring_py_getattr(void *, fring_req *, const struct fring_getattr_args *);
extern "Python" void fring_py_open(void *, fring_req *, const struct fring_open_args *);
extern "Python" void fring_py_read(void *, fring_req *, const struct fring_read_args *);
extern "Python" void fring_py_write(void *, fring_req *, const struct fring_write_args *);
extern "Python" void fring_py_release(void *, fring_req *, const struct fring_release_args *);
extern "Python" void fring_py_opendir(void *, fring_req *, const struct fring_open_args *);
extern "Python" void fring_py_readdir(void *, fring_req *, const struct fring_read_args *);
extern "Python" void fring_py_releasedir(void *, fring_req *, const struct fring_release_args *);
const char *fring_py_so_path(void);
"""

# C part: where the .so itself is (for INIT), and libpython made global.
# The host dlopen()s plugins RTLD_LOCAL, but extension modules
# (_cffi_backend first) need libpython's symbols global: promote it.
SOURCE = """
#include <dlfcn.h>
#include <fring/plugin.h>
static const char *fring_py_so_path(void)
{
	Dl_info info;

	return dladdr((void *)fring_py_so_path, &info) && info.dli_fname
	       ? info.dli_fname : "";
}
__attribute__((constructor)) static void fring_py_global(void)
{ dlopen("%s", RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD); }
"""

# Run by the .so on its first call: find the fring package (see above).
INIT = """
import os, sys
from fring_python import ffi, lib
_here = os.path.dirname(ffi.string(lib.fring_py_so_path()).decode())
_dirs = [d for d in os.environ.get("FRING_PYTHONPATH", "").split(os.pathsep) if d]
if os.path.isfile(os.path.join(_here, "fring", "plugin.py")):
    _dirs.append(_here)
sys.path[:0] = _dirs
try:
    from fring import plugin
except ImportError as e:
    raise ImportError("fring_python.so: cannot import the fring package (%s); "
                      "set FRING_PYTHONPATH to the directory holding fring/ "
                      "(bindings/python in a checkout)" % e) from None
plugin._bind(ffi, lib)
"""


def _copy_package(outdir):
    """OUTDIR/fring: this package, which the .so finds beside itself."""
    dest = os.path.join(outdir, "fring")
    if os.path.exists(dest) and os.path.samefile(dest, HERE):
        return
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(HERE, dest, ignore=shutil.ignore_patterns("__pycache__"))


def build(outdir):
    inc = _abi.include_dir()
    cdef, consts = _abi.declarations(inc, "fring/plugin.h")
    ffi = cffi.FFI()
    ffi.cdef(cdef)
    # the integer macros (FRING_LOG_ERROR...), checked against the header
    ffi.cdef("".join("#define %s %d\n" % kv for kv in sorted(consts.items())
                     if kv[1] >= 0))
    ffi.cdef(CALLBACKS)
    ffi.embedding_api("const struct fring_plugin *fring_plugin_entry_v1("
                      "const struct fring_host_api *host);")
    ffi.embedding_init_code(INIT)
    libdir = sysconfig.get_config_var("LIBDIR")
    soname = sysconfig.get_config_var("INSTSONAME") or ""
    ffi.set_source(
        "fring_python", SOURCE % soname,
        include_dirs=[inc],
        extra_link_args=["-Wl,-rpath," + libdir] if libdir else [])
    os.makedirs(outdir, exist_ok=True)
    built = ffi.compile(tmpdir=os.path.join(outdir, "cffi-build"), verbose=False,
                        target="fring_python.so")
    so = os.path.join(outdir, "fring_python.so")
    os.replace(built, so)
    _copy_package(outdir)
    return so


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python3 -m fring.build_plugin OUTDIR")
    print(build(sys.argv[1]))
