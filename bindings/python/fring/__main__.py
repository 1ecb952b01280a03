# SPDX-License-Identifier: MIT
"""python3 -m fring plugin: the path of the fring_python.so installed
with this package (built by `pip install`), for `fring mount PLUGIN`.
python3 -m fring version: fring's version (loads libfring.so)."""
import os
import sys

USAGE = "usage: python3 -m fring plugin|version"


def plugin_path():
    """The fring_python.so inside this package, or raise FileNotFoundError."""
    so = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fring_python.so")
    if not os.path.exists(so):
        raise FileNotFoundError(
            "%s: not built (a checkout, not a pip install): build one with "
            "`python3 -m fring.build_plugin OUTDIR`" % so)
    return so


def main(argv):
    if argv == ["plugin"]:
        try:
            print(plugin_path())
        except FileNotFoundError as e:
            sys.exit("fring: %s" % e)
    elif argv == ["version"]:
        import fring
        print(fring.version())
    else:
        sys.exit(USAGE)


if __name__ == "__main__":
    main(sys.argv[1:])
