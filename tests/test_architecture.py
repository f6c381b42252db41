"""The engine's layout: one module per concern, imports flowing one way, bracket.py a thin entry point."""

import ast
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

import standin

PACKAGE = os.path.join(standin.ROOT, "skills", "arena", "arena")
ARCHITECTURE = os.path.join(standin.ROOT, "docs", "architecture.md")


def layers():
    """{module: layer} from the module table of docs/architecture.md, the one statement of the order."""
    with open(ARCHITECTURE, encoding="utf-8") as f:
        rows = re.findall(r"^\| (\d+) \| `(\w+)\.py` \|", f.read(), re.M)
    return {module: int(layer) for layer, module in rows}


LAYER = layers()


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def engine_imports(path):
    tree = ast.parse(read(path))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            found.update([node.module] if node.module else [a.name for a in node.names])
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "arena":
            found.add(node.module.split(".")[1] if "." in node.module else node.names[0].name)
    return tree, found


class LayoutTest(unittest.TestCase):
    def modules(self):
        return sorted(f[:-3] for f in os.listdir(PACKAGE) if f.endswith(".py") and f != "__init__.py")

    def test_every_module_has_a_layer_and_imports_only_below_it(self):
        self.assertEqual(sorted(self.modules()), sorted(LAYER),
                         "a module was added or removed: place it in the table of docs/architecture.md")
        for mod in self.modules():
            _, imports = engine_imports(os.path.join(PACKAGE, mod + ".py"))
            for other in imports:
                self.assertLess(LAYER[other], LAYER[mod], "%s imports %s: imports must flow down (docs/architecture.md)"
                                % (mod, other))

    def test_every_module_says_what_it_owns(self):
        for mod in self.modules() + ["__init__"]:
            tree, _ = engine_imports(os.path.join(PACKAGE, mod + ".py"))
            doc = ast.get_docstring(tree)
            self.assertTrue(doc and len(doc.split()) >= 20, "%s needs a docstring paragraph" % mod)

    def test_bracket_py_is_only_the_entry_point(self):
        path = os.path.join(standin.ROOT, "skills", "arena", "bracket.py")
        tree = ast.parse(read(path))
        self.assertFalse([n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))])
        self.assertLess(len(read(path).splitlines()), 40)

    def test_a_skill_copied_into_the_project_leaves_no_bytecode_there(self):
        top = tempfile.mkdtemp(prefix="arena-layout-")
        try:
            skill = os.path.join(top, ".claude", "skills", "arena")
            shutil.copytree(os.path.join(standin.ROOT, "skills", "arena"), skill,
                            ignore=shutil.ignore_patterns("__pycache__"))
            env = dict(os.environ)
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            proc = subprocess.run([sys.executable, "-S", os.path.join(skill, "bracket.py"), "plan", "--agents", "8"],
                                  cwd=top, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            caches = [d for d, _, _ in os.walk(top) if os.path.basename(d) == "__pycache__"]
            self.assertEqual(caches, [])
            # run from elsewhere, the same copy may cache its compiled modules beside them
            elsewhere = tempfile.mkdtemp(prefix="arena-elsewhere-")
            subprocess.run([sys.executable, "-S", os.path.join(skill, "bracket.py"), "plan", "--agents", "8"],
                           cwd=elsewhere, env=env, stdout=subprocess.PIPE, check=True)
            shutil.rmtree(elsewhere)
            self.assertTrue(os.path.isdir(os.path.join(skill, "arena", "__pycache__")))
        finally:
            shutil.rmtree(top)


if __name__ == "__main__":
    unittest.main()
