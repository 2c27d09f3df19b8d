"""The packed checkpoint format, and a reader for it.

A packed checkpoint directory (what `@whisper_<variant>` exposes) holds:

  weights.bin        every tensor little-endian in its manifest dtype (f32: float32; f16: IEEE
                     float16, holding the float32 values exactly; bf16: the upper 16 bits of a
                     float32, rounded to nearest even), row-major, each starting at a multiple of
                     64 bytes (zero padding between tensors, none at the end); a converted
                     checkpoint is f32 and, where that is exact, f16 (storage.py); a derived one
                     (precision/derive.py) has some bf16 or i8 tensors and states its "precision"
                     (and "state_dtypes": the caches its libraries store narrower);
  manifest.json      {"format", "variant", "alignment", "byte_order", "weights_file",
                      "weights_nbytes", "weights_sha256",
                      "tensors": [{"name", "dtype", "shape", "offset", "nbytes", "sha256", "xxh64"}, ...],
                      "layout_sha256", "layout_sha256_covers",
                      "manifest_sha256", "manifest_sha256_covers"}
                     with tensors in packing (= offset) order and `sha256` and `xxh64` (16 hex
                     digits) over each tensor's own bytes;
  model_config.json  dimensions, special tokens, suppress lists, alignment heads, language ids,
                     the BPE merges restored in tokenizer.json (tokenizer_restored_merges);
  tokenizer.json     the source's tokenizer, byte for byte unless merges were restored;
  audit.json         every source tensor used or ignored (with reason), every synthesized tensor.

`layout_sha256` identifies the layout (the architecture and how it is stored), never the values:
the sha256 of the UTF-8 bytes of

    json.dumps([{k: t[k] for k in LAYOUT_KEYS} for t in manifest["tensors"]] + [manifest["weights_nbytes"]],
               sort_keys=True, separators=(",", ":"), ensure_ascii=True)

(names, dtypes, shapes, offsets and sizes, in order, and the file's size). The generated C bakes it
in: a library serves every checkpoint of its layout (a fine-tune too) and refuses any other.
`manifest_sha256` identifies layout and content in one value: the sha256 of

    json.dumps(manifest["tensors"], sort_keys=True, separators=(",", ":"), ensure_ascii=True)

i.e. the tensor list only, in order, keys sorted, no whitespace. Because every entry carries its
tensor's sha256, the digest covers names, shapes, offsets and all weight bytes.

What is checked when: the generated libraries' create() compares layout_sha256 with the one baked
in, the weights file's size with the layout's, and recomputes the xxh64 of every tensor it reads
against the one its manifest entry records (at memory speed: about one pass over the weights,
which the first inference reads anyway); the runtime (ckw/runtime/checkpoint_check.py) recomputes both
digests from the tensor list; `verify()` (the CLI's --verify_weights) every sha256 as well.
"""

from __future__ import annotations

import hashlib
import json
import os

import numpy as np
import xxhash

from ckw.checkpoints.errors import CheckpointError

FORMAT = "ckw-whisper-weights-v2"  # v2: layout_sha256
ALIGNMENT = 64
DTYPE = "f32"  # the dtype of every value a conversion produces
# Manifest dtype -> how its elements are stored (numpy dtype); bf16 as its bit pattern. f16 holds
# fp32 values exactly (storage.py): the fp32 checkpoint's narrow form; bf16 rounds (a precision).
DTYPE_STORAGE = {"f32": "<f4", "f16": "<f2", "bf16": "<u2", "i8": "|i1"}
# An i8 tensor's per-output-channel scales (f32, one per row) are the tensor named + this
# (precision/int8.py; the int8 kernel maps' `companion` ports read them).
SCALE_SUFFIX = ".scale"
# Stored dtypes whose values are the fp32 values themselves.
EXACT_DTYPES = ("f32", "f16")
DIGEST_RULE = (
    "sha256 of the UTF-8 bytes of json.dumps(manifest['tensors'], sort_keys=True, "
    "separators=(',', ':'), ensure_ascii=True)"
)
LAYOUT_KEYS = ("name", "dtype", "shape", "offset", "nbytes")
LAYOUT_RULE = (
    "sha256 of the UTF-8 bytes of json.dumps([{k: t[k] for k in ('name', 'dtype', 'shape', 'offset', 'nbytes')} "
    "for t in manifest['tensors']] + [manifest['weights_nbytes']], sort_keys=True, separators=(',', ':'), "
    "ensure_ascii=True)"
)
FILES = ("weights.bin", "manifest.json", "model_config.json", "tokenizer.json", "audit.json")


def tensors_digest(tensors: list[dict]) -> str:
    """manifest_sha256: see the module docstring for the exact serialization."""
    text = json.dumps(tensors, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def layout_digest(tensors: list[dict], weights_nbytes: int) -> str:
    """layout_sha256: see the module docstring for the exact serialization."""
    layout = [{k: t[k] for k in LAYOUT_KEYS} for t in tensors] + [weights_nbytes]
    text = json.dumps(layout, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class PackedCheckpoint:
    """Read access to a packed checkpoint directory; tensors as float32 (f32 ones zero-copy views)."""

    def __init__(self, directory: str, verify: bool = True):
        self.directory = str(directory)
        self.manifest = self._json("manifest.json")
        self.config = self._json("model_config.json")
        if self.manifest.get("format") != FORMAT:
            raise CheckpointError(
                f"{self._path('manifest.json')}: format {self.manifest.get('format')!r}, expected "
                f"{FORMAT!r}; rebuild the checkpoint repository"
            )
        self.entries = {t["name"]: t for t in self.manifest["tensors"]}
        weights = self._path(self.manifest.get("weights_file", "weights.bin"))
        size = os.path.getsize(weights) if os.path.exists(weights) else -1
        if size != self.manifest["weights_nbytes"]:
            raise CheckpointError(
                f"{weights}: {size} bytes, manifest says {self.manifest['weights_nbytes']}; the "
                "weights file does not belong to this manifest, rebuild the checkpoint"
            )
        self._weights = np.memmap(weights, dtype=np.uint8, mode="r")
        if verify:
            self.verify()

    def _path(self, name: str) -> str:
        return os.path.join(self.directory, name)

    def _json(self, name: str) -> dict:
        try:
            with open(self._path(name), encoding="utf-8") as f:
                return json.load(f)
        except (OSError, ValueError) as e:
            raise CheckpointError(f"{self._path(name)}: unreadable ({e}); rebuild the checkpoint") from e

    @property
    def manifest_sha256(self) -> str:
        return self.manifest["manifest_sha256"]

    def names(self) -> list[str]:
        return list(self.entries)

    def raw(self, name: str) -> memoryview:
        e = self.entries[name]
        return memoryview(self._weights[e["offset"] : e["offset"] + e["nbytes"]])

    def tensor(self, name: str) -> np.ndarray:
        """One tensor as float32: a read-only view of an f32 tensor (no copy), an f16 or bf16 one
        widened, an i8 one times its scales (the values the int8 kernels compute with)."""
        if name not in self.entries:
            raise CheckpointError(f"{self._path('manifest.json')}: no tensor '{name}'")
        e = self.entries[name]
        flat = self._weights[e["offset"] : e["offset"] + e["nbytes"]].view(DTYPE_STORAGE[e["dtype"]])
        if e["dtype"] == "bf16":
            flat = (flat.astype(np.uint32) << 16).view(np.float32)
        elif e["dtype"] == "f16":
            flat = flat.astype(np.float32)
        elif e["dtype"] == "i8":
            return (
                flat.reshape(e["shape"][0], -1).astype(np.float32) * self.tensor(name + SCALE_SUFFIX)[:, None]
            ).reshape(e["shape"])
        return flat.reshape(e["shape"])

    def verify(self) -> None:
        """Digest, layout (alignment, no overlap, zero padding) and every tensor's sha256 and xxh64."""
        where = self._path("manifest.json")
        tensors = self.manifest["tensors"]
        if tensors_digest(tensors) != self.manifest["manifest_sha256"]:
            raise CheckpointError(f"{where}: manifest_sha256 does not match its tensor list; the manifest was edited")
        if layout_digest(tensors, self.manifest["weights_nbytes"]) != self.manifest.get("layout_sha256"):
            raise CheckpointError(f"{where}: layout_sha256 does not match its tensor list; the manifest was edited")
        end = 0
        for e in tensors:
            if e["dtype"] not in DTYPE_STORAGE or e["offset"] % ALIGNMENT or e["offset"] < end:
                raise CheckpointError(
                    f"{where}: tensor '{e['name']}' is misplaced (offset {e['offset']}, dtype {e['dtype']})"
                )
            size = np.dtype(DTYPE_STORAGE[e["dtype"]]).itemsize
            if int(np.prod(e["shape"], dtype=np.int64)) * size != e["nbytes"]:
                raise CheckpointError(f"{where}: tensor '{e['name']}' nbytes does not match its shape")
            if np.any(self._weights[end : e["offset"]]):
                raise CheckpointError(f"{where}: non-zero padding before tensor '{e['name']}'")
            raw = self.raw(e["name"])
            if hashlib.sha256(raw).hexdigest() != e["sha256"] or xxhash.xxh64_hexdigest(raw) != e.get("xxh64"):
                raise CheckpointError(
                    f"{self._path('weights.bin')}: tensor '{e['name']}' fails its sha256 or xxh64; the "
                    "weights file is corrupt, rebuild the checkpoint"
                )
            end = e["offset"] + e["nbytes"]
        if end != self.manifest["weights_nbytes"]:
            raise CheckpointError(f"{where}: tensors end at {end}, file has {self.manifest['weights_nbytes']} bytes")


# The models whose checkpoints this build packs (@whisper_<variant>): model name -> variant.
BUILT_IN = {"tiny.en": "tiny", "base": "base"}


def runfiles_checkpoint_dir(variant: str) -> str:
    """Directory of `@whisper_<variant>` inside a Bazel test's or binary's runfiles."""
    repo = f"whisper_{variant}"
    roots = [os.environ.get("RUNFILES_DIR"), os.environ.get("TEST_SRCDIR")]  # ckw/runfiles.py's order
    here = os.path.abspath(__file__)
    if ".runfiles" in here:
        roots.append(here[: here.index(".runfiles") + len(".runfiles")])
    for root in filter(None, roots):
        for candidate in (os.path.join(root, repo), os.path.join(root, "ckw", "external", repo)):
            if os.path.exists(os.path.join(candidate, "manifest.json")):
                return candidate
    raise CheckpointError(f'@{repo} is not in the runfiles; add data = ["@{repo}//:checkpoint"] to the target')
