"""Alignment heads (the decoder cross-attention heads word timestamps read) for checkpoints that
lack their own, from openai-whisper.

openai-whisper ships one head set per published model as `whisper._ALIGNMENT_HEADS` (base85 text of
a gzip'd boolean mask [n_text_layer, n_text_head]). The build turns it into `alignment_heads.json`,
{model name: [[layer, head], ...]}, with this module as a program (the `:alignment_heads_table`
genrule) reading the package's source, so torch is never imported and the table is never copied
into the repository. `select` picks a checkpoint's heads from it (model_config.build):

  1. the entry of the model the user named, if that model's dimensions are the checkpoint's;
  2. else the entry of the one published model of the checkpoint's dimensions (large-v1 and
     large-v2 share dimensions but not heads: no single answer, so rule 3);
  3. else openai-whisper's own default (Whisper.__init__): every head of the last half of the
     decoder layers.

    python -m ckw.checkpoints.alignment_heads --out alignment_heads.json
"""

from __future__ import annotations

import argparse
import ast
import base64
import gzip
import importlib.util
import json
import os
import sys

import numpy as np

from ckw.checkpoints.canonical import ModelDims
from ckw.checkpoints.errors import CheckpointError
from ckw.checkpoints.layout import STANDARD

TABLE_FILE = "alignment_heads.json"
TABLE_TARGET = "//ckw/checkpoints:alignment_heads_json"
_PACKAGE_DIR = "ckw/checkpoints"  # in the `ckw` runfiles tree
_WORKSPACE = "ckw"

# openai-whisper's names for the newest large models: the same download as the named release
# (derive_table checks that against the package's _MODELS URLs).
ALIASES = {"large": "large-v3", "turbo": "large-v3-turbo"}

SOURCE_CHECKPOINT = "checkpoint"
SOURCE_TABLE = "openai-whisper table: "
SOURCE_DEFAULT = "openai-whisper default: last half of the decoder layers"


def model_dims(name: str) -> ModelDims | None:
    """The dimensions of openai-whisper's model `name` (an alias resolved), None if unknown."""
    return STANDARD.get(ALIASES.get(name, name))


def decode_mask(dump: bytes, dims: ModelDims, name: str, where: str) -> list[list[int]]:
    """[[layer, head], ...] (row-major) of openai-whisper's encoded mask for `name` (read from `where`)."""
    try:
        mask = np.frombuffer(gzip.decompress(base64.b85decode(dump)), dtype=bool)
    except (ValueError, OSError, EOFError) as e:
        raise CheckpointError(
            f"{where}: the alignment mask of {name} does not decode ({e}); reinstall "
            "openai-whisper (requirements_lock.txt pins it)"
        ) from e
    if mask.size != dims.n_text_layer * dims.n_text_head:
        raise CheckpointError(
            f"{where}: the alignment mask of {name} has {mask.size} flags, but layout.STANDARD gives it "
            f"{dims.n_text_layer} decoder layers x {dims.n_text_head} heads; fix its dims in layout.py"
        )
    return [[int(layer), int(head)] for layer, head in np.argwhere(mask.reshape(dims.n_text_layer, dims.n_text_head))]


def _module_dicts(path: str, names: tuple[str, ...]) -> dict[str, dict]:
    """The literal dicts assigned to `names` at the top level of the Python file `path`."""
    unsupported = "this openai-whisper release is not supported; install the one requirements_lock.txt pins"
    try:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
        found = {}
        for node in tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                if node.targets[0].id in names:
                    found[node.targets[0].id] = ast.literal_eval(node.value)
    except (OSError, SyntaxError, ValueError) as e:
        raise CheckpointError(f"{path}: unreadable ({e}); {unsupported}") from e
    missing = [n for n in names if not isinstance(found.get(n), dict)]
    if missing:
        raise CheckpointError(f"{path}: no top-level {missing[0]} dict literal; {unsupported}")
    return found


def derive_table() -> dict[str, list[list[int]]]:
    """{model name: heads} for every model of the installed openai-whisper, read from its source."""
    spec = importlib.util.find_spec("whisper")  # locates the package without running it (no torch)
    if spec is None or not spec.origin:
        raise CheckpointError(
            "openai-whisper is not installed in this Python; the alignment-head table is "
            "derived from it (requirements_lock.txt pins it; run ./bazelw to rebuild .venv)"
        )
    found = _module_dicts(spec.origin, ("_ALIGNMENT_HEADS", "_MODELS"))
    masks, urls = found["_ALIGNMENT_HEADS"], found["_MODELS"]
    for alias, target in ALIASES.items():
        if alias in masks and urls.get(alias) != urls.get(target):
            raise CheckpointError(
                f"{spec.origin}: model {alias} is no longer {target}'s download; update "
                "ALIASES in ckw/checkpoints/alignment_heads.py"
            )
    table = {}
    for name, dump in masks.items():
        dims = model_dims(name)
        if dims is None:
            raise CheckpointError(
                f"{spec.origin}: openai-whisper lists model {name}, whose dimensions "
                "layout.STANDARD lacks; add them to ckw/checkpoints/layout.py"
            )
        table[name] = decode_mask(dump, dims, name, spec.origin)
    return table


def _table_path() -> str | None:
    """alignment_heads.json next to this module (a Bazel runfiles tree), or in the runfiles."""
    here = os.path.dirname(os.path.abspath(__file__))
    candidates = [os.path.join(here, TABLE_FILE)]
    for var in ("RUNFILES_DIR", "TEST_SRCDIR"):
        if os.environ.get(var):
            candidates.append(os.path.join(os.environ[var], _WORKSPACE, _PACKAGE_DIR, TABLE_FILE))
    if ".runfiles" in here:
        root = here[: here.index(".runfiles") + len(".runfiles")]
        candidates.append(os.path.join(root, _WORKSPACE, _PACKAGE_DIR, TABLE_FILE))
    return next((p for p in candidates if os.path.isfile(p)), None)


def load_table() -> dict[str, list[list[int]]]:
    """The table: the built alignment_heads.json (a data dependency of :checkpoint), else derived
    from the installed openai-whisper the same way. The fallback serves the whisper_checkpoint
    repository rule, which runs these sources before any target (so before the JSON) is built."""
    path = _table_path()
    if path is None:
        return derive_table()
    try:
        with open(path, encoding="utf-8") as f:
            table = json.load(f)
    except (OSError, ValueError) as e:
        raise CheckpointError(f"{path}: unreadable ({e}); rebuild {TABLE_TARGET}") from e
    if not isinstance(table, dict) or not table:
        raise CheckpointError(
            f"{path}: expected a non-empty {{model: [[layer, head], ...]}} object; rebuild {TABLE_TARGET}"
        )
    for name, heads in table.items():
        dims = model_dims(name)
        if (
            dims is None
            or not isinstance(heads, list)
            or not heads
            or not all(
                isinstance(h, list)
                and len(h) == 2
                and all(type(x) is int for x in h)
                and 0 <= h[0] < dims.n_text_layer
                and 0 <= h[1] < dims.n_text_head
                for h in heads
            )
        ):
            raise CheckpointError(
                f"{path}: entry {name!r} is not [[layer, head], ...] within a known model's "
                f"decoder; rebuild {TABLE_TARGET}"
            )
    return table


def check_model(model: str) -> None:
    """Refuses a model name openai-whisper does not publish (a typo would silently pick other heads)."""
    if model_dims(model) is None:
        names = ", ".join(sorted(set(STANDARD) | set(ALIASES)))
        raise CheckpointError(f"model {model!r} is not a published Whisper model; name one of {names}")


def default_heads(dims: ModelDims) -> list[list[int]]:
    """openai-whisper's heads for a model it has no table entry for (Whisper.__init__)."""
    return [
        [layer, head] for layer in range(dims.n_text_layer // 2, dims.n_text_layer) for head in range(dims.n_text_head)
    ]


def select(
    dims: ModelDims, model: str | None = None, table: dict[str, list[list[int]]] | None = None
) -> tuple[list[list[int]], str, list[str]]:
    """(heads, alignment_heads_source, audit notes) for a checkpoint of `dims` without its own heads;
    `model` is the openai-whisper model name the user asked for, if any (module docstring: rules)."""
    table = load_table() if table is None else table
    notes = []
    if model is not None:
        check_model(model)
        if model not in table:
            notes.append(f"openai-whisper has no alignment heads for {model}; chose them by dimensions")
        elif model_dims(model) != dims:
            notes.append(
                f"the checkpoint's dimensions are not {model}'s; its alignment heads were not used, "
                "chose them by dimensions"
            )
        else:
            return [list(h) for h in table[model]], SOURCE_TABLE + model, notes
    # Aliases name the same download as their target: count each published model once.
    same = [n for n, d in STANDARD.items() if d == dims and n in table]
    if len(same) == 1:
        return [list(h) for h in table[same[0]]], SOURCE_TABLE + same[0], notes
    if len(same) > 1:
        notes.append(
            f"the checkpoint has the dimensions of {' and '.join(same)}, whose alignment heads differ; "
            "pass the model name to use one's"
        )
    return default_heads(dims), SOURCE_DEFAULT, notes


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Writes openai-whisper's alignment heads per model as JSON.")
    ap.add_argument("--out", required=True, help="the alignment_heads.json to write")
    args = ap.parse_args(argv)
    try:
        table = derive_table()
    except CheckpointError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(table, f, sort_keys=True, separators=(",", ":"))
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
