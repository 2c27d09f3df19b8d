"""The package's layers, checked over the workspace's Python files (the lint step runs it): no
import runs from a lower layer to a higher one, and nothing outside tests imports tests.

    python3 tools/lint/layers.py [FILE ...]      (default: git ls-files '*.py')

Layers, lowest first: ckw.runfiles (where build outputs are), ckw.checkpoints (finding,
converting, packing), ckw.runtime (the engine), ckw.model_spec (which engine a name means),
ckw.corpus and ckw.server, ckw.cli (the commands), the package's root (ckw.whisper_model,
ckw.__main__). tools, models and kernels (building and measuring) stand above the whole package;
the package imports none of them. Test code (`*_test.py`, `tests/`) may
import anything, and only test code imports tests; `testing` helper packages serve tools and tests.
"""

import ast
import subprocess
import sys

LAYERS = [
    ("ckw.runfiles", 0),
    ("ckw.checkpoints", 1),
    ("ckw.runtime", 2),
    ("ckw.model_spec", 3),
    ("ckw.corpus", 4),
    ("ckw.server", 4),
    ("ckw.cli", 5),
    ("ckw", 6),
    ("tools", 7),
    ("models", 7),
    ("kernels", 7),
    ("circuits", 7),
]
TEST = "test"
TOOLS = 7


def module_name(path: str) -> str:
    return path[: -len(".py")].replace("/", ".").removesuffix(".__init__")


def layer(module: str) -> int | str | None:
    parts = module.split(".")
    if parts[0] == "tests" or parts[-1].endswith("_test"):
        return TEST
    if "testing" in parts:
        return TOOLS  # test helpers (doubles, fixtures, joined audio): for tools and tests, not the package
    for prefix, rank in LAYERS:
        if module == prefix or module.startswith(prefix + "."):
            return rank
    return None  # third-party or the standard library


def imports(source: str, path: str) -> list[tuple[int, str]]:
    """(line, module) of every absolute import at any depth; `from ckw import x` imports ckw.x."""
    found = []
    for node in ast.walk(ast.parse(source, path)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "ckw":
                found += [(node.lineno, f"ckw.{a.name}") for a in node.names]
            else:
                found.append((node.lineno, node.module))
    return found


def violations(sources: dict[str, str]) -> list[str]:
    """One line per import that runs upward or into tests, for {path: source}."""
    found = []
    for path, source in sorted(sources.items()):
        here = layer(module_name(path))
        if here == TEST:
            continue
        for line, module in imports(source, path):
            there = layer(module)
            if there is None:
                continue
            if there == TEST:
                found.append(f"{path}:{line}: imports {module}, test code; only tests may")
            elif here is not None and there > here:
                found.append(f"{path}:{line}: imports {module}, a higher layer (tools/lint/layers.py LAYERS)")
    return found


def main(argv: list[str]) -> int:
    paths = (
        argv or subprocess.run(["git", "ls-files", "*.py"], capture_output=True, text=True, check=True).stdout.split()
    )
    sources = {}
    for path in paths:
        with open(path, encoding="utf-8") as f:
            sources[path] = f.read()
    found = violations(sources)
    for v in found:
        print(v)
    if found:
        print(f"layers: {len(found)} imports against the package's layers", file=sys.stderr)
        return 1
    print(f"layers: {len(sources)} files, every import downward")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
