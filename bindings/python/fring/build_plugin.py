# SPDX-License-Identifier: MIT
"""Build fring_python.so, the plugin that runs filesystems written in
Python (fring.plugin), with cffi's embedding mode:

    python3 -m fring.build_plugin OUTDIR      # -> OUTDIR/fring_python.so

`pip install bindings/python` runs the same build into the installed
package (site-packages/fring/fring_python.so; `python3 -m fring plugin`
prints its path).

The .so exports fring_plugin_entry_v1 like any plugin and embeds this
python3 (libpython, found through sysconfig and an rpath). Before its
first call into Python it starts the interpreter as if it were a
python3 run from the command line (sys.path, a virtual environment's
site-packages included), chosen in this order: FRING_PYTHON (a python3
executable), else the one whose site-packages holds the .so (an
installed package: PREFIX/lib/pythonX.Y/site-packages/fring/ ->
PREFIX/bin/pythonX.Y), else the python3 that built it. It then imports
fring.plugin from, in order: the directories of FRING_PYTHONPATH
(colon-separated), the package the .so sits in (installed) or a fring/
beside it (build() copies this one to OUTDIR/fring), then that
interpreter's sys.path. So OUTDIR can move, and the checkout it was built
from can move or go. Needs a C compiler and this Python's headers
(sysconfig include dir).
"""
import os
import shutil
import sys
import sysconfig

import cffi

from . import _abi, optable

HERE = os.path.dirname(os.path.abspath(__file__))

# The callbacks the .so forwards to Python (fring/bind.py defines them):
# the lifecycle and one per operation of optable.OPS.
CALLBACKS = optable.callbacks() + "const char *fring_py_so_path(void);\n"

# The plugin's entry, which cffi makes start Python on its first call;
# SOURCE's fring_plugin_entry_v1 chooses the interpreter first.
ENTRY = ("const struct fring_plugin *fring_py_entry("
         "const struct fring_host_api *host);")

# C part: where the .so itself is (for INIT), libpython made global (the
# host dlopen()s plugins RTLD_LOCAL, but extension modules, _cffi_backend
# first, need libpython's symbols global), and the interpreter started
# with the program name of a real python3 (see the docstring), so that
# its sys.path (a venv's too) holds cffi and fring before cffi imports
# _cffi_backend. Left to cffi, Python would guess from `fring`.
SOURCE = r"""
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fring/plugin.h>
static const char *fring_py_so_path(void)
{
	Dl_info info;

	return dladdr((void *)fring_py_so_path, &info) && info.dli_fname
	       ? info.dli_fname : "";
}
__attribute__((constructor)) static void fring_py_global(void)
{ dlopen("%(soname)s", RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD); }

/* PREFIX/lib/pythonX.Y/site-packages/... (the .so installed) ->
 * PREFIX/bin/pythonX.Y, if that is an executable. */
static int fring_py_installed(char *out, size_t size)
{
	const char *so = fring_py_so_path(), *lib = NULL, *p, *end;

	for (p = so; (p = strstr(p, "/lib/python")); p++)
		lib = p;
	if (!lib || !strstr(lib, "-packages/"))
		return 0;
	end = strchr(lib + 5, '/');
	if ((size_t)snprintf(out, size, "%%.*s/bin/%%.*s", (int)(lib - so), so,
			     (int)(end - lib - 5), lib + 5) >= size)
		return 0;
	return access(out, X_OK) == 0;
}

static void fring_py_start(void)
{
	char guess[PATH_MAX];
	const char *exe = getenv("FRING_PYTHON");
	PyConfig c;
	PyStatus st;

	if (Py_IsInitialized())
		return;
	if (!exe || !*exe)
		exe = fring_py_installed(guess, sizeof(guess)) ? guess
							       : "%(executable)s";
	PyConfig_InitPythonConfig(&c);
	c.install_signal_handlers = 0;
	st = PyConfig_SetBytesString(&c, &c.program_name, exe);
	if (!PyStatus_Exception(st))
		st = Py_InitializeFromConfig(&c);
	PyConfig_Clear(&c);
	if (PyStatus_Exception(st)) {
		fprintf(stderr, "fring_python.so: starting Python as %%s: %%s\n",
			exe, st.err_msg ? st.err_msg : "failed");
		return;
	}
	PyEval_SaveThread(); /* as cffi does: the GIL is taken per call */
}

const struct fring_plugin *fring_py_entry(const struct fring_host_api *host);
__attribute__((visibility("default"))) const struct fring_plugin *
fring_plugin_entry_v1(const struct fring_host_api *host)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, fring_py_start);
	return fring_py_entry(host);
}
"""

# Run by the .so on its first call: find the fring package (see above).
INIT = """
import os, sys
from fring_python import ffi, lib
_here = os.path.dirname(ffi.string(lib.fring_py_so_path()).decode())
_dirs = [d for d in os.environ.get("FRING_PYTHONPATH", "").split(os.pathsep) if d]
if os.path.isfile(os.path.join(_here, "fring", "plugin.py")):
    _dirs.append(_here)                      # build_plugin OUTDIR's copy
elif (os.path.basename(_here) == "fring"
      and os.path.isfile(os.path.join(_here, "plugin.py"))):
    _dirs.append(os.path.dirname(_here))     # the installed package
sys.path[:0] = _dirs
try:
    from fring import plugin
except ImportError as e:
    raise ImportError("fring_python.so: cannot import the fring package (%s); "
                      "set FRING_PYTHONPATH to the directory holding fring/ "
                      "(bindings/python in a checkout), or FRING_PYTHON to the "
                      "python3 that has it installed" % e) from None
plugin._bind(ffi, lib)
"""


def _copy_package(outdir):
    """OUTDIR/fring: this package, which the .so finds beside itself."""
    dest = os.path.join(outdir, "fring")
    if os.path.exists(dest) and os.path.samefile(dest, HERE):
        return
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(HERE, dest, ignore=shutil.ignore_patterns("__pycache__"))


def build(outdir, copy_package=True):
    """Build OUTDIR/fring_python.so (and, with copy_package, copy this
    package to OUTDIR/fring, where the .so finds it); returns its path."""
    inc = _abi.include_dir()
    cdef, consts = _abi.declarations(inc, "fring/plugin.h")
    ffi = cffi.FFI()
    ffi.cdef(cdef)
    # the integer macros (FRING_LOG_ERROR...), checked against the header
    ffi.cdef("".join("#define %s %d\n" % kv for kv in sorted(consts.items())
                     if kv[1] >= 0))
    ffi.cdef(CALLBACKS)
    ffi.embedding_api(ENTRY)
    ffi.embedding_init_code(INIT)
    libdir = sysconfig.get_config_var("LIBDIR")
    soname = sysconfig.get_config_var("INSTSONAME") or ""
    ffi.set_source(
        "fring_python",
        SOURCE % {"soname": soname, "executable": _c_string(sys.executable)},
        include_dirs=[inc],
        extra_link_args=["-Wl,-rpath," + libdir] if libdir else [])
    os.makedirs(outdir, exist_ok=True)
    built = ffi.compile(tmpdir=os.path.join(outdir, "cffi-build"), verbose=False,
                        target="fring_python.so")
    so = os.path.join(outdir, "fring_python.so")
    os.replace(built, so)
    shutil.rmtree(os.path.join(outdir, "cffi-build"), ignore_errors=True)
    if copy_package:
        _copy_package(outdir)
    return so


def _c_string(text):
    """text inside a C string literal."""
    return "".join(c if c.isalnum() or c in "/._-+ " else "\\%03o" % b
                   for c, b in ((chr(b), b) for b in os.fsencode(text)))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python3 -m fring.build_plugin OUTDIR")
    print(build(sys.argv[1]))
