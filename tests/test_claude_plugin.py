"""Packaging: the real `claude plugin` commands accept and install this repo.

For every installed Claude Code version (see tests/e2e/run_claude.py): `plugin validate
--strict` passes with no warnings at all (2.1.332's plugin directory checks included, which
want the icon), and in a throwaway HOME the README's two install commands, as written
there, add the marketplace and install the plugin, which is then enabled, and `plugin
details` lists the skill `arena` with a small token cost. Skipped without a claude binary, except under CI (then it fails).

The token figures come from `claude plugin details`, which asks
/v1/messages/count_tokens; here that is tests/e2e/fake_api.py, which answers
ceil(chars / 4), the same as the client's own offline fallback. They are estimates
of size, not real tokenizer counts.
"""

import os
import re
import shlex
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest
import zlib

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tests import readme  # noqa: E402
from tests.e2e.fake_api import FakeAPI  # noqa: E402
from tests.e2e.run_claude import REPO_ROOT, copy_plugin, each_version, make_home, require_claude, run  # noqa: E402

ALWAYS_ON_MAX = 200
ON_INVOKE_MAX = 2000

ICON = os.path.join(REPO_ROOT, ".claude-plugin", "icon.png")


def parse_tokens(value):
    """'~113' -> 113, '~1.1k' -> 1100, '< 20' -> 20."""
    v = value.strip().lstrip("~<").strip()
    mult = 1000 if v.endswith("k") else 1
    return int(round(float(v.rstrip("k")) * mult))


def details_tokens(out, skill="arena"):
    """(always-on total, skill always-on, skill on-invoke) from `claude plugin details`."""
    total = re.search(r"Always-on:\s+(~?[\d.]+k?) tok", out)
    row = re.search(r"^\s+%s\s+(<?\s?~?[\d.]+k?)\s+(<?\s?~?[\d.]+k?)\s*$" % skill, out, re.M)
    if not total or not row:
        raise AssertionError("no token figures in `plugin details` output:\n" + out)
    return parse_tokens(total.group(1)), parse_tokens(row.group(1)), parse_tokens(row.group(2))


def problems(out):
    """Warning and error lines of `plugin validate`, and any line naming a check code."""
    return [line.strip() for line in out.splitlines()
            if line.strip().startswith(("⚠", "✘")) or re.search(r"\([A-Z_]{6,}\)", line)]


def png_size(path):
    """(width, height) of a PNG, from its IHDR chunk; AssertionError if it is not a PNG."""
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        raise AssertionError("%s is not a PNG" % path)
    return struct.unpack(">II", head[16:24])


def png_pixels(data):
    """The decompressed image data of a PNG (all IDAT chunks), to compare pictures, not encoders."""
    pos, idat = 8, b""
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        if kind == b"IDAT":
            idat += data[pos + 8:pos + 8 + length]
        pos += 12 + length
    return zlib.decompress(idat)


def readme_plugin_commands(clone):
    """The README's two plugin install commands, as written there, with the clone's real path."""
    lines = readme.commands(readme.block_with(readme.section("Install"), "claude plugin install"))
    args = [shlex.split(line.replace("/path/to/arena-skill", clone)) for line in lines]
    if len(args) != 2 or any(a[0] != "claude" for a in args):
        raise AssertionError("expected two `claude ...` lines in the README's plugin install block: %r" % lines)
    return [a[1:] for a in args]


class ClaudePluginPackaging(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="cc-plugin-")
        cls.api = FakeAPI(None, None).start()

    @classmethod
    def tearDownClass(cls):
        cls.api.stop()
        shutil.rmtree(cls.tmp, True)

    def setUp(self):
        self.bins = require_claude(self)

    def cc(self, binp, home, *args, cwd=None):
        # ANTHROPIC_BASE_URL points at the fake: without it 2.1.332 waits ~18 s on DNS per command
        r = run(binp, list(args), home=home, cwd=cwd or REPO_ROOT, base_url=self.api.base_url, timeout=90)
        self.assertFalse(r.timed_out, "claude %s timed out" % " ".join(args))
        self.assertEqual(r.returncode, 0, "claude %s:\n%s\n%s" % (" ".join(args), r.stdout, r.stderr))
        return r.stdout + r.stderr

    def test_validate(self):
        def one(ver, binp):
            home = make_home(self.tmp)
            for target in (".", ".claude-plugin/plugin.json", ".claude-plugin/marketplace.json"):
                out = self.cc(binp, home, "plugin", "validate", "--strict", target)
                self.assertIn("Validation passed", out, target)
                self.assertNotIn("passed with warnings", out, target)
                self.assertEqual(problems(out), [], "%s: %s" % (target, out))
        each_version(self, self.bins, one)

    def test_install_and_details(self):
        src = copy_plugin(os.path.join(self.tmp, "clone"))
        def one(ver, binp):
            home = make_home(self.tmp)
            cwd = tempfile.mkdtemp(dir=self.tmp)
            add, install = readme_plugin_commands(src)
            out = self.cc(binp, home, *add, cwd=cwd)
            self.assertIn("Successfully added marketplace: arena-skill", out)
            out = self.cc(binp, home, *install, cwd=cwd)
            self.assertIn("Successfully installed plugin: arena-skill@arena-skill", out)
            out = self.cc(binp, home, "plugin", "list", cwd=cwd)
            block = out.split("arena-skill@arena-skill", 1)[1].split("\n\n", 1)[0]
            self.assertIn("enabled", block, out)
            out = self.cc(binp, home, "plugin", "details", "arena-skill@arena-skill", cwd=cwd)
            self.assertRegex(out, r"Skills \(1\)\s+arena\b")
            total, always, invoke = details_tokens(out)
            sys.stderr.write("\n  claude %s plugin details: always-on ~%d tok (arena ~%d), on-invoke ~%d tok "
                             "(chars/4 via the fake count_tokens) " % (ver, total, always, invoke))
            self.assertLess(total, ALWAYS_ON_MAX, out)
            self.assertLess(invoke, ON_INVOKE_MAX, out)
        each_version(self, self.bins, one)


class Icon(unittest.TestCase):
    """What the plugin directory asks of an icon, checked offline; the client checks it in test_validate."""

    def test_icon_is_a_square_png_the_directory_accepts(self):
        width, height = png_size(ICON)
        self.assertEqual(width, height)
        self.assertTrue(512 <= width <= 2048, width)
        self.assertLess(os.path.getsize(ICON), 2 * 1024 * 1024)

    def test_icon_is_what_its_script_draws(self):
        out = os.path.join(tempfile.mkdtemp(prefix="icon-"), "icon.png")
        try:
            subprocess.run([sys.executable, os.path.join(REPO_ROOT, "scripts", "make_icon.py"), out],
                           check=True, capture_output=True)
            with open(out, "rb") as a, open(ICON, "rb") as b:
                self.assertEqual(png_pixels(a.read()), png_pixels(b.read()),
                                 "the committed icon is stale: run python3 scripts/make_icon.py")
        finally:
            shutil.rmtree(os.path.dirname(out), True)


class ParseDetails(unittest.TestCase):
    def test_parse(self):
        out = ("Projected token cost\n  Always-on:   ~113 tok   added to every session\n\n"
               "  component  always-on  on-invoke\n  arena           ~110      ~1.1k\n")
        self.assertEqual(details_tokens(out), (113, 110, 1100))
        self.assertEqual(parse_tokens("< 20"), 20)

    def test_problems(self):
        self.assertEqual(problems("✔ Validation passed"), [])
        self.assertTrue(problems("⚠ Found 1 warning:\n  ❯ description: No marketplace description provided."))
        self.assertTrue(problems("⚠ Found 1 plugin directory warning:\n  ❯ plugin.json icon: No icon (ICON_MISSING)."))
        self.assertTrue(problems("  ❯ plugin.json icon: No icon (ICON_MISSING)."))
        self.assertTrue(problems("✘ README.md: README missing (README_MISSING)"))


if __name__ == "__main__":
    unittest.main()
