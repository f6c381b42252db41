"""The commands and figures README.md and the pages under docs/ show, read from those files so
that a test of them fails when the text drifts from what was tested."""

import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
README = os.path.join(ROOT, "README.md")
BENCHMARKS = os.path.join(ROOT, "benchmarks", "README.md")


def page(name):
    """A page under docs/, by its file name."""
    return os.path.join(ROOT, "docs", name)


def all_text():
    """The README, every page under docs/ and the figures page, as one text."""
    paths = [README, BENCHMARKS] + sorted(page(f) for f in os.listdir(os.path.join(ROOT, "docs")) if f.endswith(".md"))
    texts = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            texts.append(f.read())
    return "\n".join(texts)


def section(title, path=README):
    """The text under the heading `title` (any level), up to the next heading of that level or higher."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"^(#+) (.*)$", line)
        if m and m.group(2).strip() == title:
            level, body = len(m.group(1)), []
            in_code = False
            for rest in lines[i + 1:]:
                if rest.startswith("```"):
                    in_code = not in_code
                h = None if in_code else re.match(r"^(#+) ", rest)
                if h and len(h.group(1)) <= level:
                    break
                body.append(rest)
            return "\n".join(body)
    raise AssertionError("%s has no section %r" % (os.path.relpath(path, ROOT), title))


def code_blocks(text):
    """The fenced code blocks of `text`, in order."""
    return re.findall(r"^```[^\n]*\n(.*?)^```", text, re.S | re.M)


def commands(block):
    """The command lines of a code block: blank lines dropped, trailing `# comments` cut."""
    out = []
    for line in block.splitlines():
        line = re.split(r"\s+#\s", " " + line, 1)[0].strip()
        if line and not line.startswith("#"):
            out.append(line)
    return out


def block_with(text, needle):
    """The one code block of `text` that holds `needle`."""
    found = [b for b in code_blocks(text) if needle in b]
    if len(found) != 1:
        raise AssertionError("expected one code block with %r in the README, found %d" % (needle, len(found)))
    return found[0]
