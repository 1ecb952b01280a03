# SPDX-License-Identifier: MIT
"""The man pages (man/*.scd) render without a warning and cannot drift:
every YAML key the config parser knows is an entry of fring.yaml(5), every
option a shipped plugin's config_help lists an entry of its page (and no
other), every command, exit status, signal and FRING_* variable of the
CLI an entry of fring(1), every callback, operation and host function of
<fring/plugin.h> named in fring-plugin(3)."""

import os
import re
import subprocess

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
MAN = os.path.join(ROOT, "man")
BUILD = os.environ.get("FRING_BUILD_DIR", os.path.join(ROOT, "build"))
FRING = os.path.join(BUILD, "bin", "fring")
PAGES = ["fring.1", "fring.yaml.5", "fring-plugin.3", "fring-memfs.1",
         "fring-passthrough.1", "fring-null.1", "fring-s3.1"]


def render(page, tmp_path):
    """scdoc's exit status, then man --warnings: the page as text."""
    roff = tmp_path / page
    with open(os.path.join(MAN, page + ".scd")) as src, open(roff, "w") as out:
        r = subprocess.run(["scdoc"], stdin=src, stdout=out,
                           stderr=subprocess.PIPE, text=True)
    assert r.returncode == 0, f"scdoc {page}.scd: {r.stderr}"
    env = dict(os.environ, MANWIDTH="200", LC_ALL="C.UTF-8", MANPAGER="cat")
    r = subprocess.run(["man", "--warnings", "-l", str(roff)], env=env,
                       capture_output=True, text=True)
    assert r.returncode == 0 and r.stderr == "", f"man {page}: {r.stderr}"
    return r.stdout


def sections(text, terms=True):
    """{SECTION: [lines]}: with terms, only the definition terms, the lines
    at the body's indent (7) followed at once by a line indented further
    (their description); else every line of the section."""
    out, cur = {}, None
    lines = text.splitlines() + [""]
    for i, line in enumerate(lines[:-1]):
        if re.match(r"^[A-Z][A-Z ]+$", line):
            cur = out.setdefault(line, [])
        elif cur is not None and not terms and line.strip():
            cur.append(line.strip())
        elif cur is not None and re.match(r"^ {7}\S", line) and \
                re.match(r"^ {8,}\S", lines[i + 1]):
            cur.append(line.strip())
    return out


def words(lines):
    return {w for l in lines for w in re.findall(r"-*[A-Za-z_][A-Za-z0-9_.-]*", l)}


def run(*args, **env):
    r = subprocess.run([FRING, *args], capture_output=True, text=True,
                       env=dict(os.environ, **env))
    return r


@pytest.mark.parametrize("page", PAGES)
def test_page_renders_and_is_built(page, tmp_path):
    text = render(page, tmp_path)
    assert "NAME" in text and "SEE ALSO" in text
    built = os.path.join(BUILD, "man", page)
    assert os.path.exists(built), f"the build made no {built}"


def test_install_puts_each_page_in_its_section(tmp_path):
    r = subprocess.run(["cmake", "--install", BUILD, "--prefix", str(tmp_path)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    for page in PAGES:
        section = page.rsplit(".", 1)[1]
        path = tmp_path / "share" / "man" / f"man{section}" / page
        assert path.exists(), path
        assert path.read_text() == open(os.path.join(BUILD, "man", page)).read()


def test_yaml_page_has_every_key(tmp_path):
    keys = re.findall(r"^\*(.+)\*$", subprocess.run(
        [os.path.join(BUILD, "bin", "fring-config-keys")], check=True,
        capture_output=True, text=True).stdout, re.M)
    keys = [k.replace("\\", "") for k in keys]
    assert "transport.queue_depth" in keys and len(keys) > 10
    entries = sections(render("fring.yaml.5", tmp_path))["KEYS"]
    assert [k for k in keys if k not in entries] == []
    assert [e for e in entries if e not in keys] == []


def plugin_options():
    """{plugin: [option keys]} from `fring plugins -v` (config_help) over
    the built-in plugin directory only."""
    r = run("plugins", "-v", FRING_PLUGIN_PATH="")
    assert r.returncode == 0, r.stderr
    opts, cur = {}, None
    for line in r.stdout.split("\n\n", 1)[1].splitlines():
        m = re.match(r"^(\S+)  /", line)
        if m:
            cur = opts.setdefault(m.group(1), [])
        elif cur is not None and line.startswith("  "):
            cur.append(line.split(":", 1)[0].strip())
    return opts


def test_every_shipped_plugin_has_a_page_with_its_options(tmp_path):
    opts = plugin_options()
    assert {"memfs", "passthrough", "null"} <= set(opts)
    for plugin, keys in opts.items():
        assert f"fring-{plugin}.1" in PAGES, f"{plugin} has no page"
        entries = sections(render(f"fring-{plugin}.1", tmp_path))["OPTIONS"]
        documented = [e.split("=", 1)[0] for e in entries]
        assert keys, plugin
        assert [k for k in keys if k not in documented] == [], plugin
        assert [d for d in documented if d not in keys] == [], plugin


def test_fring_page_has_every_command_status_signal_and_variable(tmp_path):
    text = render("fring.1", tmp_path)
    s, body = sections(text), sections(text, terms=False)
    usage = run("help").stdout
    cmds = re.findall(r"^  ([a-z]+) ", usage, re.M)
    assert {"run", "mount", "check", "plugins", "help"} <= set(cmds)
    firsts = [e.split()[0] for e in s["COMMANDS"]]
    assert [c for c in cmds if c not in firsts] == []
    assert "--version" in firsts
    # The options of each command's usage.
    for c in cmds:
        for opt in re.findall(r"(--[a-z-]+)", run(c, "--help").stdout):
            assert opt in words(body["COMMANDS"]) | {"--help"}, (c, opt)
    cli = open(os.path.join(ROOT, "core", "cli", "cli.h")).read()
    codes = re.findall(r"#define CLI_EXIT_\w+ (\d+)", cli)
    assert codes and sorted(codes) == sorted(s["EXIT STATUS"])
    serve = open(os.path.join(ROOT, "core", "cli", "serve.c")).read()
    sigs = set(re.findall(r"sigaddset\(set, (SIG\w+)\)", serve)) | {"SIGPIPE"}
    assert [g for g in sigs if g not in words(s["SIGNALS"])] == []
    env = set()
    for d, _, files in os.walk(os.path.join(ROOT, "core")):
        for f in files:
            if f.endswith(".c"):
                env |= set(re.findall(r'getenv\("(FRING_\w+)"\)',
                                      open(os.path.join(d, f)).read()))
    env = {v for v in env if not v.startswith("FRING_TEST_")}
    assert "FRING_LOG" in env
    assert sorted(env - set(s["ENVIRONMENT"])) == []


def members(header, struct):
    """The function-pointer members of `struct NAME { ... };`."""
    body = re.search(r"^struct %s \{(.*?)^\};" % struct, header, re.S | re.M)
    assert body, struct
    return re.findall(r"\(\*(\w+)\)\(", body.group(1))


def test_plugin_page_names_every_callback_op_and_host_function(tmp_path):
    h = open(os.path.join(ROOT, "abi", "include", "fring", "plugin.h")).read()
    s = sections(render("fring-plugin.3", tmp_path))
    for struct, section in (("fring_plugin", "LIFECYCLE"),
                            ("fring_fs_ops", "OPERATIONS"),
                            ("fring_host_api", "HOST FUNCTIONS")):
        names = members(h, struct)
        assert len(names) > 4, struct
        assert [n for n in names if n not in words(s[section])] == [], struct
