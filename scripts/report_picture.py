#!/usr/bin/env python3
"""Regenerate docs/report.png, the README's picture of a report, from what the code makes now.

It plays `bracket.py demo` (DEMO below) in a temporary folder, screenshots that run's
report.html in headless Chromium, and records in docs/report.png.source the command and
a digest of the report's HTML. tests/test_demo.py plays the same demo and compares the
digest, so a change to the engine, the stand-ins or the report that changes the page
fails that test until this script is run again:

    python3 scripts/report_picture.py        # needs /usr/bin/chromium (.ci/install-chromium.sh)

Standard library only.
"""

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BRACKET = os.path.join(ROOT, "skills", "arena", "bracket.py")
PICTURE = os.path.join(ROOT, "docs", "report.png")
SOURCE = PICTURE + ".source"
CHROMIUM = "/usr/bin/chromium"
DEMO = ["demo", "--agents", "16", "--seed", "5"]
SIZE = (1280, 2900)


def play_demo(folder):
    """Play DEMO in folder; returns the path of its report.html."""
    out = subprocess.run([sys.executable, "-S", BRACKET] + DEMO, cwd=folder, capture_output=True, text=True,
                         timeout=300)
    if out.returncode != 0:
        raise SystemExit("bracket.py %s failed: %s" % (" ".join(DEMO), out.stderr.strip()))
    return os.path.join(folder, re.search(r"^report: (\S+)$", out.stdout, re.M).group(1))


def digest(html):
    """sha256 of a report's HTML without what changes from one minute to the next."""
    html = re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d", "<time>", html)
    html = re.sub(r"\b(?:\d+m)?\d+s elapsed", "<elapsed>", html)
    # sub-agent minutes are a clock too: the stand-ins take a few milliseconds, some machines more
    html = re.sub(r"\b(?:\d+m)?\d+s\b", "<time>", html)
    return hashlib.sha256(html.encode("utf-8")).hexdigest()


def recorded():
    """The digest docs/report.png.source holds, or None."""
    try:
        with open(SOURCE, encoding="utf-8") as f:
            m = re.search(r"^sha256 ([0-9a-f]{64})$", f.read(), re.M)
    except OSError:
        return None
    return m.group(1) if m else None


def screenshot(page, png):
    profile = tempfile.mkdtemp(prefix="arena-chromium-")
    try:
        subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                        "--disable-background-networking", "--disable-component-update", "--disable-sync",
                        "--user-data-dir=" + profile, "--hide-scrollbars", "--screenshot=" + png,
                        "--window-size=%d,%d" % SIZE, "file://" + os.path.abspath(page)],
                       capture_output=True, timeout=120, check=True)
    finally:
        shutil.rmtree(profile, True)


def main():
    if not os.path.exists(CHROMIUM):
        raise SystemExit("no %s: install it with bash .ci/install-chromium.sh" % CHROMIUM)
    folder = tempfile.mkdtemp(prefix="arena-picture-")
    try:
        page = play_demo(folder)
        with open(page, encoding="utf-8") as f:
            html = f.read()
        screenshot(page, PICTURE)
    finally:
        shutil.rmtree(folder, True)
    with open(SOURCE, "w", encoding="utf-8") as f:
        f.write("docs/report.png is report.html of `python3 skills/arena/bracket.py %s`, %dx%d in headless Chromium.\n"
                "Written by scripts/report_picture.py; tests/test_demo.py checks the digest of that report:\n"
                "sha256 %s\n" % (" ".join(DEMO), SIZE[0], SIZE[1], digest(html)))
    print(PICTURE)


if __name__ == "__main__":
    main()
