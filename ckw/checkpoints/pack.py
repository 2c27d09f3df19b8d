"""Write a packed checkpoint directory (format: see packed.py) from a Conversion.

Everything is written into a fresh temporary directory next to the outputs and renamed into place
only after every file is complete (manifest.json last, so a reader never pairs a new manifest
with old weights). A failure at any point removes the temporary directory: nothing half-written
is ever left under a final name. Tensors are loaded, widened, hashed and written one at a time,
so memory stays near the largest single tensor (the token embedding).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator

import numpy as np
import xxhash

from ckw.checkpoints import model_config, storage
from ckw.checkpoints.canonical import Conversion
from ckw.checkpoints.errors import CheckpointError
from ckw.checkpoints.packed import (
    ALIGNMENT,
    DIGEST_RULE,
    DTYPE_STORAGE,
    FORMAT,
    LAYOUT_RULE,
    layout_digest,
    tensors_digest,
)
from ckw.checkpoints.tokenizer_merges import RESTORED_KEY, restore_missing_merges

AUDIT_FORMAT = "ckw-whisper-audit-v1"
# manifest.json last: a reader never pairs a new manifest with old weights.
_PUBLISH_ORDER = ("weights.bin", "model_config.json", "tokenizer.json", "audit.json", "manifest.json")


def dump(path: str, doc: dict) -> None:
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=2, sort_keys=True, ensure_ascii=True)
        f.write("\n")


def file_sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 22), b""):
            h.update(chunk)
    return h.hexdigest()


def write_packed(
    conversion: Conversion,
    tokenizer_path: str,
    out_dir: str,
    variant: str,
    source: str,
    source_files: list[str],
    *,
    model: str | None = None,
) -> dict:
    """Pack `conversion` into `out_dir`; returns a summary (counts, sizes, digests). `model`: the
    openai-whisper model name the user asked for, if any (model_config.build)."""
    # Everything that can fail cheaply runs before the first byte is written.
    for _, check in conversion.checks:
        check()
    tokenizer = model_config.load_tokenizer(tokenizer_path)
    config, notes = model_config.build(variant, source, conversion, tokenizer, tokenizer_path, model=model)
    config[RESTORED_KEY] = restore_missing_merges(tokenizer)  # the runtime loads the file as written

    with staged(out_dir) as tmp:
        try:
            kind = "f16"
            entries, nbytes, weights_sha = write_weights(_stored(conversion, kind), os.path.join(tmp, "weights.bin"))
        except storage.NotF16Exact as e:  # trained in float32: rewrite every tensor as float32
            kind = "f32"
            notes.append(
                f"{e}: every tensor is stored as float32 (f32 storage; the libraries of this "
                "architecture built with f32 storage run it)"
            )
            entries, nbytes, weights_sha = write_weights(_stored(conversion, kind), os.path.join(tmp, "weights.bin"))
        config["storage"] = kind
        manifest = manifest_for(entries, nbytes, weights_sha, variant)
        digest = manifest["manifest_sha256"]
        config["manifest_sha256"] = digest
        audit = _audit(conversion, variant, source, source_files, notes, digest, len(entries))
        audit["tokenizer"] = {
            "origin": f"derived by kind ({conversion.tokenizer_kind})" if conversion.tokenizer_kind else "the source",
            "kind": conversion.tokenizer_kind,
            "sha256": file_sha256(tokenizer_path),
        }
        audit["stored_f16"] = [e["name"] for e in entries if e["dtype"] == "f16"]
        dump(os.path.join(tmp, "manifest.json"), manifest)
        dump(os.path.join(tmp, "model_config.json"), config)
        dump(os.path.join(tmp, "audit.json"), audit)
        if config[RESTORED_KEY]:
            with open(os.path.join(tmp, "tokenizer.json"), "w", encoding="utf-8") as f:
                json.dump(tokenizer, f, ensure_ascii=False)
        else:
            shutil.copyfile(tokenizer_path, os.path.join(tmp, "tokenizer.json"))
    return {
        "tensors": len(entries),
        "weights_nbytes": nbytes,
        "weights_sha256": weights_sha,
        "manifest_sha256": digest,
        "counts": audit["counts"],
        "verdict": audit["verdict"],
    }


@contextlib.contextmanager
def staged(out_dir: str, names: tuple[str, ...] = _PUBLISH_ORDER):
    """A fresh temporary directory in `out_dir` to write a checkpoint's files (`names`, in publish
    order: manifest.json last) into; when the block ends they are renamed into place in that order;
    on failure nothing is renamed and the temporary directory is removed."""
    os.makedirs(out_dir, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=".ckw-pack-", dir=out_dir)
    try:
        yield tmp
        for name in names:
            os.replace(os.path.join(tmp, name), os.path.join(out_dir, name))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def manifest_for(entries: list[dict], nbytes: int, weights_sha: str, variant: str, **extra) -> dict:
    """manifest.json for tensors `entries` (write_weights) in a weights file of `nbytes` bytes."""
    return {
        "format": FORMAT,
        "variant": variant,
        "alignment": ALIGNMENT,
        "byte_order": "little",
        "weights_file": "weights.bin",
        "weights_nbytes": nbytes,
        "weights_sha256": weights_sha,
        "tensors": entries,
        "layout_sha256": layout_digest(entries, nbytes),
        "layout_sha256_covers": LAYOUT_RULE,
        "manifest_sha256": tensors_digest(entries),
        "manifest_sha256_covers": DIGEST_RULE,
        **extra,
    }


def _stored(conversion: Conversion, kind: str) -> Iterator[tuple[str, str, np.ndarray]]:
    """(name, dtype, data) of every converted tensor, loaded one at a time and checked, stored
    with storage `kind` (storage.py: NotF16Exact when "f16" cannot hold a candidate)."""
    for t in conversion.tensors:
        arr = t.load()
        if arr.dtype != np.dtype("<f4") or tuple(arr.shape) != tuple(t.shape):
            raise CheckpointError(
                f"{t.origin}: tensor '{t.name}' loaded as {arr.dtype} {list(arr.shape)}, "
                f"expected float32 {list(t.shape)}"
            )
        yield (t.name, *storage.stored_as(t.name, arr, kind))


def write_weights(tensors: Iterable[tuple[str, str, np.ndarray]], path: str) -> tuple[list[dict], int, str]:
    """Writes (name, manifest dtype, data) tensors to `path`, each at a multiple of ALIGNMENT with
    zero padding between; returns the manifest entries, the file size and its sha256. `data` is
    little-endian in the dtype's storage (DTYPE_STORAGE: bf16 as its uint16 bit patterns)."""
    entries = []
    whole = hashlib.sha256()
    offset = 0
    with open(path, "wb") as f:
        for name, dtype, arr in tensors:
            if arr.dtype != np.dtype(DTYPE_STORAGE[dtype]):
                raise CheckpointError(
                    f"{path}: tensor '{name}' is {arr.dtype}, but {dtype} is stored as {DTYPE_STORAGE[dtype]}"
                )
            pad = -offset % ALIGNMENT
            if pad:
                f.write(b"\0" * pad)
                whole.update(b"\0" * pad)
                offset += pad
            data = memoryview(np.ascontiguousarray(arr)).cast("B")  # no copy
            f.write(data)
            whole.update(data)
            entries.append(
                {
                    "name": name,
                    "dtype": dtype,
                    "shape": list(arr.shape),
                    "offset": offset,
                    "nbytes": len(data),
                    "sha256": hashlib.sha256(data).hexdigest(),
                    # checked by the generated create() at every start (sha256 is the full check)
                    "xxh64": xxhash.xxh64_hexdigest(data),
                }
            )
            offset += len(data)
        f.flush()
        os.fsync(f.fileno())
    return entries, offset, whole.hexdigest()


def _audit(conversion: Conversion, variant, source, source_files, notes, digest, n_out) -> dict:
    entries = list(conversion.ledger.entries.values())
    used = [e for e in entries if e.disposition == "used"]
    ignored = [e for e in entries if e.disposition == "ignored"]
    unaccounted = [e for e in entries if e.disposition is None]
    synthesized = [t for t in conversion.tensors if t.synthesized]
    if unaccounted:  # convert_* already refuses this; the audit never claims a pass it lacks
        raise CheckpointError(f"{conversion.ledger.source_label}: tensor '{unaccounted[0].name}' unaccounted")
    counts = {
        "source_entries": len(entries),
        "source_aliases": sum(1 for e in entries if e.alias_of),
        "used": len(used),
        "ignored": len(ignored),
        "unaccounted": 0,
        "accounted_percent": 100.0,
        "output_tensors": n_out,
        "output_from_source": n_out - len(synthesized),
        "output_synthesized": len(synthesized),
    }
    return {
        "format": AUDIT_FORMAT,
        "variant": variant,
        "source": source,
        "source_format": conversion.source_format,
        "source_files": [
            {"path": os.path.abspath(p), "nbytes": os.path.getsize(p), "sha256": file_sha256(p)} for p in source_files
        ],
        "counts": counts,
        "source_tensors": [
            {
                "name": e.name,
                "dtype": e.dtype,
                "shape": list(e.shape),
                "alias_of": e.alias_of,
                "disposition": e.disposition,
                "targets": e.targets,
                "reason": e.reason,
            }
            for e in entries
        ],
        "synthesized": [{"name": t.name, "shape": list(t.shape), "reason": t.synthesized} for t in synthesized],
        "output_origins": {t.name: t.origin for t in conversion.tensors},
        "checks_passed": [desc for desc, _ in conversion.checks],
        "exactness": (
            "every copied value is the source value widened to float32; each widened tensor was "
            "narrowed back to its source dtype and compared bit for bit; the tensors in stored_f16 are "
            "stored as float16 because every one of their float32 values round-trips through it bit for "
            "bit (storage.py)"
        ),
        "notes": conversion.notes + notes,
        "manifest_sha256": digest,
        "verdict": (
            f"PASS: {len(entries)}/{len(entries)} source entries accounted for (100%): "
            f"{len(used)} used, {len(ignored)} ignored with reason; {n_out} output tensors, "
            f"{len(synthesized)} synthesized with reason"
        ),
    }
