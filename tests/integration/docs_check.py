# SPDX-License-Identifier: MIT
"""The README gives exactly two set-up commands, and .ci/run runs the second
(the test command) verbatim."""

import os
import re

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def setup_commands():
    text = open(os.path.join(ROOT, "README.md")).read()
    section = re.search(r"^## Set up.*?$(.*?)^## ", text, re.S | re.M)
    assert section, "README has no '## Set up' section"
    return re.findall(r"^```sh\n(.*?)\n```$", section.group(1), re.S | re.M)


def ci_command():
    lines = [l for l in open(os.path.join(ROOT, ".ci", "run")).read().splitlines()
             if l.strip() and not l.startswith("#")]
    return lines[-1]


def test_readme_has_exactly_two_one_line_setup_commands():
    cmds = setup_commands()
    assert len(cmds) == 2, cmds
    assert all("\n" not in c for c in cmds)
    assert "plugins/memfs/example.yaml" in open(os.path.join(ROOT, "tests", "tools", "demo-memfs.sh")).read()
    assert "ctest" in cmds[1]


def test_ci_runs_the_readme_test_command():
    assert ci_command() == setup_commands()[1]


def test_ci_script_is_strict_and_executable():
    path = os.path.join(ROOT, ".ci", "run")
    text = open(path).read()
    assert text.startswith("#!/bin/bash\n")
    assert "set -euo pipefail" in text
    assert os.access(path, os.X_OK)


def test_readme_plugin_example_is_the_sdk_template():
    text = open(os.path.join(ROOT, "README.md")).read()
    section = text[text.index("## Writing a plugin"):]
    block = re.search(r"^```c\n(.*?)^```$", section, re.S | re.M).group(1)
    with open(os.path.join(ROOT, "sdk-examples", "c-hello", "hello.c")) as f:
        assert block == f.read()
