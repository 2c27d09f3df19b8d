"""Locates build outputs (libraries, checkpoints, data) in the Bazel runfiles tree of this process,
or in the installed ckw package; and the user's own files named on a command line (user_path).

The installed package (//:wheel) is the tree's `ckw/` as it is, plus the build outputs it carries
under `ckw/_libs/` at their workspace paths: `ckw/_libs/models/whisper/libckw_tiny_encoder.so`.
Outputs of the `ckw/` package itself (its data, such as ckw/checkpoints/alignment_heads.json) sit
beside its modules in both places."""

import os

WORKSPACE = "ckw"
LIBS = "_libs"  # the wheel's folder of build outputs (tools/wheel/build_wheel.py)
_PACKAGE = os.path.dirname(os.path.abspath(__file__))  # <site-packages or runfiles workspace>/ckw


def installed_package() -> str | None:
    """The installed ckw package's directory when this module runs from one, else None."""
    return _PACKAGE if os.path.isdir(os.path.join(_PACKAGE, LIBS)) else None


def runfiles_root() -> str:
    for var in ("RUNFILES_DIR", "TEST_SRCDIR"):
        if os.environ.get(var):
            return os.environ[var]
    # py_binary: this file is <root>/ckw/ckw/runfiles.py
    root = os.path.dirname(os.path.dirname(_PACKAGE))
    if os.path.basename(root).endswith(".runfiles"):
        return root
    raise RuntimeError(f"cannot find the runfiles tree from {_PACKAGE}; run this through bazel (./bazelw run/test)")


def _installed_path(package: str, repository: str, path: str) -> str:
    if repository == WORKSPACE and path.startswith(WORKSPACE + "/"):
        return os.path.join(os.path.dirname(package), path)
    folder = path if repository == WORKSPACE else os.path.join("external", repository, path)
    return os.path.join(package, LIBS, folder)


def locate(repository: str, path: str) -> str:
    """Absolute path of `path` in `repository` (`ckw` for this one, else e.g. `whisper_tiny`).
    Checked first in the installed package, so a ckw command run from inside a Bazel test still
    finds its own libraries."""
    package = installed_package()
    if package:
        full = _installed_path(package, repository, path)
        if not os.path.exists(full):
            raise FileNotFoundError(
                f"{repository}//{path} is not part of the installed ckw package ({full}): the wheel "
                "carries no weights and only the libraries of //models/whisper:libraries"
            )
        return full
    full = os.path.join(runfiles_root(), repository, path)
    if not os.path.exists(full):
        raise FileNotFoundError(f"{repository}//{path} is not in the runfiles ({full}); add it to the target's data")
    return full


def user_path(path: str) -> str:
    """A path from the command line: relative to where the user ran `bazel run` (Bazel runs the
    program in its runfiles and says where in BUILD_WORKING_DIRECTORY), else to the current
    directory; `~` expanded."""
    return os.path.join(os.environ.get("BUILD_WORKING_DIRECTORY", os.getcwd()), os.path.expanduser(path))
