# SPDX-License-Identifier: MIT
"""Fixtures of the guest tests (tests/vm/test_*.py, run inside the Linux 7.3
guest by run.sh): the integration suite's fixtures and helpers (spawn,
tmpdirs, mount, fs, Fring, FRING, fring_env, is_mounted, ...) as they are,
so `from conftest import FRING` works here too."""

import importlib.util
import os
import sys

_INTEGRATION = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                            "..", "integration")
sys.path.insert(0, _INTEGRATION)  # fsops and friends
_spec = importlib.util.spec_from_file_location(
    "fring_integration_conftest", os.path.join(_INTEGRATION, "conftest.py"))
_integration = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = _integration
_spec.loader.exec_module(_integration)
globals().update({k: v for k, v in vars(_integration).items()
                  if not k.startswith("__")})
