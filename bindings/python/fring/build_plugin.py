"""Build fring_python.so, the plugin that runs filesystems written in
Python (fring.plugin), with cffi's embedding mode:

    python3 -m fring.build_plugin OUTDIR      # -> OUTDIR/fring_python.so

The .so exports fring_plugin_entry_v1 like any plugin, embeds this
python3 (libpython, found through sysconfig and an rpath), and on its first
call imports fring.plugin, which holds every callback. Needs a C compiler
and this Python's headers (sysconfig include dir). Mount with the option
`module: PATH` naming the Python file that defines the filesystem.
"""
import os
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
extern "Python" void fring_py_readdir(void *, fring_req *, const struct fring_read_args *);
"""


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
    pkg_root = os.path.dirname(HERE)
    ffi.embedding_init_code(
        "import sys\n"
        "sys.path.insert(0, %r)\n"
        "from fring_python import ffi, lib\n"
        "from fring import plugin\n"
        "plugin._bind(ffi, lib)\n" % pkg_root)
    libdir = sysconfig.get_config_var("LIBDIR")
    soname = sysconfig.get_config_var("INSTSONAME") or ""
    # The host dlopen()s plugins RTLD_LOCAL, but extension modules
    # (_cffi_backend first) need libpython's symbols global: promote it.
    ffi.set_source(
        "fring_python",
        "#include <dlfcn.h>\n#include <fring/plugin.h>\n"
        "__attribute__((constructor)) static void fring_py_global(void)\n"
        "{ dlopen(\"%s\", RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD); }\n" % soname,
        include_dirs=[inc],
        extra_link_args=["-Wl,-rpath," + libdir] if libdir else [])
    os.makedirs(outdir, exist_ok=True)
    built = ffi.compile(tmpdir=os.path.join(outdir, "cffi-build"), verbose=False,
                        target="fring_python.so")
    so = os.path.join(outdir, "fring_python.so")
    os.replace(built, so)
    return so


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python3 -m fring.build_plugin OUTDIR")
    print(build(sys.argv[1]))
