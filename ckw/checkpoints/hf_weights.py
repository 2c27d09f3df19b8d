"""The weights of a Hugging Face directory: safetensors (model.safetensors, or shards with an
index), or the `pytorch_model.bin` that transformers wrote before safetensors (a torch.save zip
of the state dict, read without torch by pt_zip_reader). Both give `paths`, `tensors` (name ->
an entry with `dtype` and `shape`) and `read_bytes(name)`: convert_hf reads either the same way.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from ckw.checkpoints.errors import CheckpointError
from ckw.checkpoints.pt_zip_reader import TorchTensor, TorchZipCheckpoint
from ckw.checkpoints.safetensors_reader import SafetensorsCheckpoint

PYTORCH_FILE = "pytorch_model.bin"


@dataclass(frozen=True)
class PtEntry:
    tensor: TorchTensor

    @property
    def dtype(self) -> str:
        return self.tensor.dtype

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.tensor.shape)


class PytorchStateDict:
    """A pytorch_model.bin: a pickled {name: tensor} dict in a torch.save zip."""

    def __init__(self, path: str):
        self.paths = [path]
        self._ckpt = TorchZipCheckpoint(path)
        state = self._ckpt.load()
        if not isinstance(state, dict) or not all(isinstance(v, TorchTensor) for v in state.values()):
            raise CheckpointError(f"{path}: not a state dict of tensors; save the model with save_pretrained")
        self.tensors = {str(k): PtEntry(v) for k, v in state.items()}

    def read_bytes(self, name: str) -> bytes:
        return self._ckpt.read_bytes(self.tensors[name].tensor, f"{self.paths[0]}: tensor '{name}'")


HfWeights = SafetensorsCheckpoint | PytorchStateDict


def has_weights(files: dict) -> bool:
    """Whether a directory listing (name -> path) holds Hugging Face weights."""
    return any(n in files for n in ("model.safetensors", "model.safetensors.index.json", PYTORCH_FILE))


def open_hf_weights(directory: str) -> HfWeights:
    """The directory's weights, safetensors first (what transformers writes today)."""
    if any(os.path.exists(os.path.join(directory, n)) for n in ("model.safetensors", "model.safetensors.index.json")):
        return SafetensorsCheckpoint.from_dir(directory)
    if os.path.exists(os.path.join(directory, PYTORCH_FILE)):
        return PytorchStateDict(os.path.join(directory, PYTORCH_FILE))
    raise CheckpointError(
        f"{directory}: no model.safetensors, model.safetensors.index.json or {PYTORCH_FILE}; "
        "not a Hugging Face Whisper directory"
    )
