"""Locates build outputs (libraries, checkpoints) in the Bazel runfiles tree of this process."""

import os

WORKSPACE = "ckw"


def runfiles_root() -> str:
    for var in ("RUNFILES_DIR", "TEST_SRCDIR"):
        if os.environ.get(var):
            return os.environ[var]
    # py_binary: this file is <root>/ckw/runtime/runfiles.py
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    if os.path.basename(root).endswith(".runfiles"):
        return root
    raise RuntimeError(f"cannot find the runfiles tree from {here}; run this through bazel (./bazelw run/test)")


def locate(repository: str, path: str) -> str:
    """Absolute path of `path` in `repository` (`ckw` for this one, else e.g. `whisper_tiny`)."""
    full = os.path.join(runfiles_root(), repository, path)
    if not os.path.exists(full):
        raise FileNotFoundError(f"{repository}//{path} is not in the runfiles ({full}); add it to the target's data")
    return full
