"""Load a packed checkpoint into openai-whisper (PyTorch): the project's reference model.

    from models.whisper.reference.openai_whisper_ref import load_openai_whisper
    model = load_openai_whisper(checkpoint_dir)   # whisper.model.Whisper, float32, eval mode

The weights are exactly those of weights.bin (the same bits the generated C reads), so any
difference between this model and the compiled one is a difference in computation.
"""

from __future__ import annotations

import numpy as np

from ckw.checkpoints.canonical import DIM_KEYS
from ckw.checkpoints.convert_openai import canonical_to_openai
from ckw.checkpoints.errors import CheckpointError
from ckw.checkpoints.packed import PackedCheckpoint


def openai_state_dict(ckpt: PackedCheckpoint) -> dict[str, np.ndarray]:
    """openai-whisper state dict (numpy, zero-copy views into weights.bin)."""
    state = {}
    for name in ckpt.names():
        key = canonical_to_openai(name)
        array = ckpt.tensor(name)
        if key is None:
            if np.any(array):
                raise CheckpointError(f"{ckpt.directory}: '{name}' is not zero; openai-whisper has no key bias")
            continue
        state[key] = array
    return state


def load_openai_whisper(checkpoint_dir: str, verify: bool = True):
    """A float32 `whisper.model.Whisper` in eval mode holding the packed weights.

    `verify` re-hashes every tensor against the manifest first (about 0.1 s per 100 MB).
    """
    import torch
    from whisper.model import ModelDimensions, Whisper

    ckpt = PackedCheckpoint(checkpoint_dir, verify=verify)
    cfg = ckpt.config
    model = Whisper(ModelDimensions(**{k: int(cfg[k]) for k in DIM_KEYS}))
    state = {k: torch.from_numpy(np.array(v)) for k, v in openai_state_dict(ckpt).items()}
    missing, unexpected = model.load_state_dict(state, strict=False)
    if missing or unexpected:
        raise CheckpointError(
            f"{checkpoint_dir}: openai-whisper state dict mismatch: missing {missing[:3]}, unexpected {unexpected[:3]}"
        )
    heads = torch.zeros(cfg["n_text_layer"], cfg["n_text_head"], dtype=torch.bool)
    for layer, head in cfg["alignment_heads"]:
        heads[layer, head] = True
    # As Whisper.set_alignment_heads does, from the checkpoint's own list.
    model.register_buffer("alignment_heads", heads.to_sparse(), persistent=False)
    return model.eval()
