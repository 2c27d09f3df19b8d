"""Locates build outputs (libraries, checkpoints) in the Bazel runfiles tree of this process, or
in the installed ckw package, which holds them at their workspace paths (//:wheel); and the user's
own files named on a command line (user_path)."""

import os

WORKSPACE = "ckw"
PACKAGE_MARKER = "PACKAGE_ROOT"  # tools/wheel/build_wheel.py writes it into the package


def installed_package() -> str | None:
    """The installed ckw package's directory when this file runs from one (this file is then
    <site-packages>/ckw/runtime/runfiles.py), else None."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if os.path.basename(package) == WORKSPACE and os.path.isfile(os.path.join(package, PACKAGE_MARKER)):
        return package
    return None


def runfiles_root() -> str:
    here = os.path.dirname(os.path.abspath(__file__))
    # Checked first, so a ckw command run from inside a Bazel test still finds its own libraries.
    package = installed_package()
    if package:
        return os.path.dirname(package)
    for var in ("RUNFILES_DIR", "TEST_SRCDIR"):
        if os.environ.get(var):
            return os.environ[var]
    # py_binary: this file is <root>/ckw/runtime/runfiles.py
    root = os.path.dirname(os.path.dirname(here))
    if os.path.basename(root).endswith(".runfiles"):
        return root
    raise RuntimeError(f"cannot find the runfiles tree from {here}; run this through bazel (./bazelw run/test)")


def locate(repository: str, path: str) -> str:
    """Absolute path of `path` in `repository` (`ckw` for this one, else e.g. `whisper_tiny`)."""
    full = os.path.join(runfiles_root(), repository, path)
    if not os.path.exists(full) and installed_package():
        raise FileNotFoundError(
            f"{repository}//{path} is not part of the installed ckw package ({full}): the wheel "
            "carries no weights and only the libraries of //models/whisper:libraries"
        )
    if not os.path.exists(full):
        raise FileNotFoundError(f"{repository}//{path} is not in the runfiles ({full}); add it to the target's data")
    return full


def user_path(path: str) -> str:
    """A path from the command line: relative to where the user ran `bazel run` (Bazel runs the
    program in its runfiles and says where in BUILD_WORKING_DIRECTORY), else to the current
    directory; `~` expanded."""
    return os.path.join(os.environ.get("BUILD_WORKING_DIRECTORY", os.getcwd()), os.path.expanduser(path))
