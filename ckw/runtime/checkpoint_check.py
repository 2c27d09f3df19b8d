"""A packed checkpoint directory as the engine opens it, and what is checked when.

At every start (cheap; about one pass over the weights, which the first window reads anyway):
  - here: weights.bin, manifest.json, model_config.json and tokenizer.json exist; the JSON files
    parse; the manifest's tensor list hashes to its own manifest_sha256 and layout_sha256 (an
    edited or damaged manifest is refused);
  - in each generated library's create(): the manifest's layout_sha256 is the one the library was
    generated for (the architecture and storage; any checkpoint of it runs, a fine-tune too),
    weights.bin has exactly the layout's size, and every tensor the library reads hashes to the
    manifest's xxh64 (a flipped byte, a truncated file or weights that are not the manifest's
    are refused).
On request (`verify_weights()`, the CLI's --verify_weights): every tensor's sha256 and the
layout, through ckw/checkpoints/packed.py (several times slower; names the tensor).

Every refusal is an EngineError that names the file, the problem and what to do.
"""

import json
import os

from ckw.checkpoints.errors import CheckpointError
from ckw.checkpoints.packed import PackedCheckpoint, layout_digest, tensors_digest
from ckw.runtime import abi
from ckw.runtime.errors import EngineError


class CheckpointFiles:
    """The files of checkpoint directory `directory` of model `variant` at `precision` (fp32: the
    converted checkpoint, a repository; else one derived from it by a build action), opened and
    checked; `rebuild` says how to replace it (default: its Bazel target). A derived (bf16)
    manifest passes the same checks: its digest covers dtypes too."""

    def __init__(self, directory: str, variant: str, precision: str = "fp32", rebuild: str | None = None):
        self.error = EngineError
        self.directory = directory
        self.rebuild = rebuild or (
            f"rebuild it: ./bazelw sync --only=whisper_{variant}"
            if precision == "fp32"
            else f"rebuild it: ./bazelw build //models/whisper:{variant}_{precision}_checkpoint"
        )
        self.weights = self._existing("weights.bin")
        self.manifest_path = self._existing("manifest.json")
        self.config = self._json("model_config.json")
        self.manifest = self._json("manifest.json")
        self.tokenizer = self._existing("tokenizer.json")
        for key in ("tensors", "manifest_sha256", "layout_sha256", "weights_sha256", "weights_nbytes"):
            if key not in self.manifest:
                raise self.error(f"{self.manifest_path}: no '{key}'; not a packed checkpoint manifest, {self.rebuild}")
        try:
            digest = tensors_digest(self.manifest["tensors"])
            layout = layout_digest(self.manifest["tensors"], self.manifest["weights_nbytes"])
        except (TypeError, ValueError, KeyError) as e:
            raise self.error(f"{self.manifest_path}: unreadable tensor list ({e}); {self.rebuild}") from e
        if digest != self.manifest["manifest_sha256"]:
            raise self.error(
                f"{self.manifest_path}: its tensor list does not hash to its manifest_sha256 (the manifest "
                f"was edited or damaged); {self.rebuild}"
            )
        if layout != self.manifest["layout_sha256"]:
            raise self.error(
                f"{self.manifest_path}: its tensor list does not hash to its layout_sha256 (the manifest "
                f"was edited or damaged); {self.rebuild}"
            )

    def _existing(self, name: str) -> str:
        path = os.path.join(self.directory, name)
        if not os.path.isfile(path):
            raise self.error(f"{path}: missing, so the checkpoint is incomplete; {self.rebuild}")
        return path

    def _json(self, name: str) -> dict:
        path = self._existing(name)
        try:
            with open(path, encoding="utf-8") as f:
                data = json.load(f)
        except (OSError, ValueError) as e:
            raise self.error(f"{path}: not readable JSON ({e}); {self.rebuild}") from e
        if not isinstance(data, dict):
            raise self.error(f"{path}: not a JSON object; {self.rebuild}")
        return data

    def architecture(self) -> str:
        """What this manifest's layout is, for a message: its variant, tensor count and size."""
        m = self.manifest
        return f"{m.get('variant') or 'an unnamed variant'} ({len(m['tensors'])} tensors, {m['weights_nbytes']} bytes)"

    def refusal(self, problem: str) -> str:
        """`problem` (a message naming the file) with how to rebuild this checkpoint."""
        if "rebuild the checkpoint" in problem:
            return problem.replace("rebuild the checkpoint", self.rebuild)
        return f"{problem}; {self.rebuild}"

    def verify_weights(self) -> None:
        """Every tensor's sha256 and xxh64, the layout and the digest (seconds, not milliseconds)."""
        try:
            PackedCheckpoint(self.directory, verify=True)
        except CheckpointError as e:
            raise self.error(self.refusal(str(e))) from e

    def create_refusal(self, e: abi.AbiError, variant: str) -> str:
        """The message for the `variant` libraries' create() refusing this checkpoint (AbiError `e`)."""
        if e.code == abi.E_LAYOUT_MISMATCH:
            return (
                f"{self.manifest_path}: a checkpoint of {self.architecture()}, but the {variant} libraries were "
                f"built for another layout (another architecture, or tensors stored in other dtypes); give a "
                f"checkpoint of {variant}'s architecture (a fine-tune of it runs), or {self.rebuild}"
            )
        if e.code == abi.E_WEIGHTS_SIZE:
            size = os.path.getsize(self.weights)
            return (
                f"{self.weights}: {size} bytes, but the manifest says {self.manifest['weights_nbytes']} (truncated, "
                f"or another checkpoint's weights); {self.rebuild}"
            )
        if e.code == abi.E_WEIGHTS_CORRUPT:
            return f"{self.weights}: {e.reason} (--verify_weights names the tensor); {self.rebuild}"
        if e.code == abi.E_IO:
            return f"{self.weights}: {e.reason}; check its permissions, or {self.rebuild}"
        return str(e)
