"""Narrower checkpoints derived at run time: `--precision bf16` for any packed fp32 checkpoint
whose architecture this build has bf16 libraries for, where the weights come from (the ckw
cache, a model wheel, the Hub, a fine-tune's folder), not only the build's own.

    directory = derived.derived(store.resolve("base"), "bf16")

The derived checkpoint is a ckw cache entry, `<cache>/derived/<source manifest_sha256>-<precision>`,
written once by derive.py (staged, manifest.json renamed into place last, so an entry is whole or
absent) with the policy named as the build names it: the same bytes as the build's own
:<variant>_<precision>_checkpoint for the same source.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable

from ckw import runfiles
from ckw.checkpoints import store
from ckw.checkpoints.errors import CheckpointError
from ckw.checkpoints.precision import derive

# The policies' workspace folder (in the runfiles, and under ckw/_libs in the wheel).
POLICY_FOLDER = "models/whisper"


def policy_path(precision: str) -> str:
    try:
        return runfiles.locate(runfiles.WORKSPACE, f"{POLICY_FOLDER}/precision_{precision}.json")
    except (FileNotFoundError, RuntimeError) as e:
        raise CheckpointError(
            f"no precision policy for {precision!r} ({e}); add //{POLICY_FOLDER}:precision_{precision}.json "
            "to the target's data"
        ) from None


def derived(
    checkpoint_dir: str, precision: str, log: Callable[[str], None] | None = None, cache_root: str | None = None
) -> str:
    """The packed checkpoint at `precision` derived from the fp32 one in `checkpoint_dir` (that
    directory itself for fp32); CheckpointError of one line when it cannot be written."""
    if precision == "fp32":
        return checkpoint_dir
    log = log or (lambda s: print(s, file=sys.stderr, flush=True))
    policy = policy_path(precision)
    manifest_path = os.path.join(checkpoint_dir, "manifest.json")
    try:
        with open(manifest_path, encoding="utf-8") as f:
            source_sha = json.load(f)["manifest_sha256"]
    except (OSError, ValueError, KeyError) as e:
        raise CheckpointError(f"{manifest_path}: not a packed checkpoint's manifest ({e})") from None
    root = os.path.abspath(os.path.expanduser(cache_root)) if cache_root else store.cache_dir()
    final = os.path.join(root, "derived", f"{source_sha}-{precision}")
    if store.complete(final):
        return final
    log(f"deriving the {precision} weights of {checkpoint_dir} into {final}")
    try:
        derive.derive(policy, checkpoint_dir, final, policy_name=f"{POLICY_FOLDER}/{os.path.basename(policy)}")
    except OSError as e:
        raise CheckpointError(
            f"{final}: cannot write the derived checkpoint ({e}); set {store.CACHE_ENV} to a "
            "writable directory with room for it"
        ) from e
    return final
