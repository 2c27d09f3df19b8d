"""Which generated libraries run a packed checkpoint: matched by layout, never by model name.

models/whisper/libraries.json (a build output, models/whisper/library_index.py) maps each
layout_sha256 the build generated libraries for to those libraries. A checkpoint's manifest names
its layout_sha256, which each library's create() checks again, so any checkpoint of a built
layout runs (a fine-tune, a checkpoint from the Hub or a local directory) and any other is
refused here in one line that says which layouts this build has.
"""

from __future__ import annotations

import dataclasses
import json

from ckw import runfiles
from ckw.runtime.errors import EngineError

INDEX = "models/whisper/libraries.json"


@dataclasses.dataclass(frozen=True)
class Libraries:
    """The libraries of one layout: `name` is their symbols' variant (ckw_<name>_<part>_*)."""

    name: str
    variant: str
    model: str
    precision: str
    frontend: str
    encoder: str
    decoder: str
    decoder_paged: str  # the multi-sequence decoder: Engine.transcribe and ckw/runtime/streams.py


def load_index() -> dict:
    """layout_sha256 -> index entry, from the runfiles (//models/whisper:libraries in data)."""
    try:
        path = runfiles.locate("ckw", INDEX)
    except FileNotFoundError as e:
        raise EngineError(f"{e}; add //models/whisper:libraries to the target's data") from e
    with open(path, encoding="utf-8") as f:
        return json.load(f)["layouts"]


def describe(entry: dict) -> str:
    """A library set as a user names it: the model, and its storage or precision when not the default."""
    if entry["precision"] != "fp32":
        return f"{entry['model']} {entry['precision']}"
    return entry["model"] + (" (f32 storage)" if entry["dtypes"] == ["f32"] else "")


def for_checkpoint(manifest: dict, manifest_path: str, index: dict | None = None) -> Libraries:
    """The libraries built for the layout of `manifest` (read from `manifest_path`); EngineError
    when this build has none, or when they are not in this program's runfiles."""
    index = load_index() if index is None else index
    entry = index.get(manifest.get("layout_sha256", ""))
    if entry is None:
        built = ", ".join(sorted({describe(e) for e in index.values()}))
        dtypes = "/".join(sorted({t["dtype"] for t in manifest.get("tensors", [])}))
        raise EngineError(
            f"{manifest_path}: a checkpoint of {len(manifest.get('tensors', []))} tensors in {dtypes} "
            f"that no library of this build was generated for (this build has: {built}); give a "
            f"checkpoint of one of those architectures, or add its model to models/whisper/whisper.bzl "
            f"MODELS and rebuild"
        )
    paths = {}
    for part in ("frontend", "encoder", "decoder", "decoder_paged"):
        try:
            paths[part] = runfiles.locate("ckw", entry[part])
        except FileNotFoundError:
            target = entry[part].replace("models/whisper/", "//models/whisper:")
            raise EngineError(
                f"{manifest_path}: a checkpoint of {describe(entry)}, whose libraries are not part of "
                f"this program ({target} missing); run it with //tools:transcribe_all, which carries "
                f"every model's libraries (or add //models/whisper:libraries_all to your target's "
                f"data)"
            ) from None
    return Libraries(
        name=entry["name"], variant=entry["variant"], model=entry["model"], precision=entry["precision"], **paths
    )


def models_at(precision: str, index: dict | None = None) -> list[str]:
    """The models this build has libraries at `precision` for (bf16: tiny.en, base)."""
    index = load_index() if index is None else index
    return sorted({e["model"] for e in index.values() if e["precision"] == precision})


def check_precision(checkpoint_dir: str, precision: str, index: dict | None = None) -> None:
    """EngineError unless this build has `precision` libraries for the architecture of the fp32
    checkpoint in `checkpoint_dir`: checked before its weights are derived (precision/derived.py)."""
    index = load_index() if index is None else index
    manifest_path = f"{checkpoint_dir}/manifest.json"
    try:
        with open(manifest_path, encoding="utf-8") as f:
            manifest = json.load(f)
    except (OSError, ValueError) as e:
        raise EngineError(f"{manifest_path}: not a packed checkpoint's manifest ({e})") from None
    entry = index.get(manifest.get("layout_sha256", ""))
    if entry is None or not any(
        e["variant"] == entry["variant"] and e["precision"] == precision for e in index.values()
    ):
        what = describe(entry) if entry else "an architecture without libraries"
        raise EngineError(
            f"{checkpoint_dir}: {what}; this build has {precision} libraries for "
            f"{', '.join(models_at(precision, index))} (and their fine-tunes) only; use fp32"
        )
