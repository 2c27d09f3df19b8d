"""The runtime's modules import each other without a cycle, counting imports inside functions
too (so none can hide a cycle), and the runtime reaches the checkpoint code only through its
format target (ckw/checkpoints/format), never through a converter."""

import ast
import pathlib

import pytest

RUNTIME = pathlib.Path(__file__).absolute().parent  # the runfiles copy: data = glob(["*.py"])
# What the runtime may import of the checkpoint package: the packed format, its errors, the
# tokenizer restore and the non-speech tokens, not the converters (which pull in safetensors, CTranslate2 readers, ...).
CHECKPOINT_FORMAT = {
    "ckw.checkpoints.errors",
    "ckw.checkpoints.packed",
    "ckw.checkpoints.tokenizer_merges",
    "ckw.checkpoints.non_speech",
}


def imported_modules(path: pathlib.Path) -> set[str]:
    """Every module a file imports, at any depth of its code."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def runtime_modules() -> dict[str, set[str]]:
    """ckw.runtime.<name> -> the runtime modules it imports (tests left out)."""
    files = {f"ckw.runtime.{p.stem}": p for p in RUNTIME.glob("*.py") if not p.stem.endswith("_test")}
    return {name: {m for m in imported_modules(path) if m in files and m != name} for name, path in files.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as [a, b, ..., a], or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt) :] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_the_runtime_has_no_import_cycle():
    graph = runtime_modules()
    assert len(graph) > 10, graph  # the walk found the runtime
    cycle = find_cycle(graph)
    assert cycle is None, f"import cycle: {' -> '.join(cycle)}"


def test_the_cycle_finder_finds_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


@pytest.mark.parametrize("path", sorted(p.name for p in RUNTIME.glob("*.py") if not p.stem.endswith("_test")))
def test_the_runtime_uses_only_the_checkpoint_format(path):
    checkpoint = {m for m in imported_modules(RUNTIME / path) if m.startswith("ckw.checkpoints.")}
    # `from ckw.checkpoints.packed import X` also names ...packed.X: keep the modules.
    modules = {m for m in checkpoint if m in CHECKPOINT_FORMAT or m.rsplit(".", 1)[0] not in CHECKPOINT_FORMAT}
    assert modules <= CHECKPOINT_FORMAT, f"{path} imports {sorted(modules - CHECKPOINT_FORMAT)}"
