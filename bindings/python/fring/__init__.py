# SPDX-License-Identifier: MIT
"""fring from Python.

- Embedding the runtime (fring.h) through cffi: `fring.Runtime`,
  `fring.Error`, `fring.version`, the `FRING_*` constants and the raw
  `fring.ffi` / `fring.lib` (fring.embed; loaded on first use, so that
  fring.plugin does not need libfring.so or a C preprocessor).
- Writing a filesystem in Python: fring.plugin (served by fring_python.so,
  built with `python3 -m fring.build_plugin OUTDIR`).
"""
import importlib

_LAZY = {"Error", "Runtime", "version", "ffi", "lib", "consts"}


def __getattr__(name):
    if name in _LAZY or name.startswith("FRING_"):
        return getattr(importlib.import_module(__name__ + ".embed"), name)
    raise AttributeError("module 'fring' has no attribute %r" % name)
