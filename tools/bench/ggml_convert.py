"""A packed ckw checkpoint (weights.bin + manifest.json + model_config.json + tokenizer.json, what
`@whisper_<variant>` holds) -> a whisper.cpp ggml model file, so whisper.cpp runs the same weights.

    python -m tools.bench.ggml_convert --checkpoint DIR --out ggml-tiny.bin [--ftype f16|f32]

The ggml layout, as whisper.cpp's loader reads it (all little-endian):

    uint32 magic 0x67676d6c ("ggml")
    int32  n_vocab, n_audio_ctx, n_audio_state, n_audio_head, n_audio_layer,
           n_text_ctx, n_text_state, n_text_head, n_text_layer, n_mels, ftype (0 f32, 1 f16)
    int32  n_mel, n_fft; float32 mel filters [n_mel][n_fft]        (Slaney, as openai-whisper's)
    int32  n_words; n_words x (uint32 length, bytes)               (ordinary tokens, id order)
    tensors to the end of the file: int32 n_dims, int32 name length, int32 type (0 f32, 1 f16),
           int32 ne[n_dims] (innermost dimension first), name bytes, data

Tensor names are openai-whisper's (`encoder.blocks.0.attn.query.weight`); ours are Hugging
Face's (`model.encoder.layers.0.self_attn.q_proj.weight`). whisper.cpp wants matrices and the
conv kernels in the file's type, everything one-dimensional plus the positional embeddings and
the conv biases (stored as [n_state, 1]) in f32, and no key-projection bias (ours is all zeros,
synthesized; the converter checks that). The special tokens (end of text and after) are not
written: whisper.cpp derives them from n_vocab. f16 loses nothing for the packaged checkpoints,
whose source weights are float16 (model_config.json `source_format`).
"""

import argparse
import importlib.util
import json
import os
import struct
from typing import Dict, Iterator, Tuple

import numpy as np

from models.whisper.checkpoint.packed import PackedCheckpoint

MAGIC = 0x67676D6C
FTYPES = {"f32": 0, "f16": 1}
HPARAMS = ("n_vocab", "n_audio_ctx", "n_audio_state", "n_audio_head", "n_audio_layer", "n_text_ctx",
           "n_text_state", "n_text_head", "n_text_layer", "n_mels")

# Hugging Face name pieces -> openai-whisper's, per layer and for the whole model.
_LAYER_PARTS = {
    "self_attn.q_proj": "attn.query",
    "self_attn.k_proj": "attn.key",
    "self_attn.v_proj": "attn.value",
    "self_attn.out_proj": "attn.out",
    "self_attn_layer_norm": "attn_ln",
    "encoder_attn.q_proj": "cross_attn.query",
    "encoder_attn.k_proj": "cross_attn.key",
    "encoder_attn.v_proj": "cross_attn.value",
    "encoder_attn.out_proj": "cross_attn.out",
    "encoder_attn_layer_norm": "cross_attn_ln",
    "fc1": "mlp.0",
    "fc2": "mlp.2",
    "final_layer_norm": "mlp_ln",
}
_MODEL_PARTS = {
    "model.encoder.conv1": "encoder.conv1",
    "model.encoder.conv2": "encoder.conv2",
    "model.encoder.embed_positions.weight": "encoder.positional_embedding",
    "model.encoder.layer_norm": "encoder.ln_post",
    "model.decoder.embed_tokens.weight": "decoder.token_embedding.weight",
    "model.decoder.embed_positions.weight": "decoder.positional_embedding",
    "model.decoder.layer_norm": "decoder.ln",
}
# Stored as f32 whatever the file type (besides every 1-D tensor).
_ALWAYS_F32 = {"encoder.positional_embedding", "decoder.positional_embedding", "encoder.conv1.bias",
               "encoder.conv2.bias"}


def openai_name(hf: str) -> str:
    """`model.decoder.layers.3.encoder_attn.q_proj.bias` -> `decoder.blocks.3.cross_attn.query.bias`."""
    for prefix, out in _MODEL_PARTS.items():
        if hf == prefix or hf.startswith(prefix + "."):
            return out + hf[len(prefix):]
    parts = hf.split(".")
    if len(parts) >= 5 and parts[0] == "model" and parts[1] in ("encoder", "decoder") and parts[2] == "layers":
        stack, index, rest = parts[1], parts[3], ".".join(parts[4:])
        for piece, out in _LAYER_PARTS.items():
            if rest.startswith(piece + "."):
                return f"{stack}.blocks.{index}.{out}{rest[len(piece):]}"
    raise ValueError(f"ggml_convert: no whisper.cpp name for tensor {hf!r}")


def _byte_decoder() -> Dict[str, int]:
    """The inverse of GPT-2's byte-level alphabet: every byte is one printable character (printable
    Latin-1 bytes stand for themselves, the other 68 bytes for U+0100 onwards, in byte order)."""
    keep = [b for b in range(256) if ord("!") <= b <= ord("~") or 0xA1 <= b <= 0xAC or 0xAE <= b <= 0xFF]
    chars, extra = {}, 0
    for b in range(256):
        if b in keep:
            chars[chr(b)] = b
        else:
            chars[chr(256 + extra)] = b
            extra += 1
    return chars


def vocabulary(tokenizer_json: str, eot: int) -> Iterator[bytes]:
    """The bytes of tokens 0 .. eot - 1 (the ordinary ones), from a byte-level BPE tokenizer.json."""
    with open(tokenizer_json, encoding="utf-8") as f:
        vocab = json.load(f)["model"]["vocab"]
    by_id = {i: s for s, i in vocab.items()}
    decode = _byte_decoder()
    for i in range(eot):
        text = by_id.get(i)
        if text is None:
            raise ValueError(f"ggml_convert: {tokenizer_json} has no token {i} (below end of text {eot})")
        yield bytes(decode[c] for c in text)


def mel_filters(n_mels: int) -> np.ndarray:
    """openai-whisper's shipped Slaney filterbank [n_mels, 201] (librosa, sr 16000, n_fft 400), read
    from its package data without importing it (no torch)."""
    spec = importlib.util.find_spec("whisper")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("ggml_convert: openai-whisper (mel_filters.npz) is missing; run ./bazelw to rebuild .venv")
    path = os.path.join(list(spec.submodule_search_locations)[0], "assets", "mel_filters.npz")
    with np.load(path) as f:
        return np.asarray(f[f"mel_{n_mels}"], dtype=np.float32)


def ggml_tensors(ckpt: PackedCheckpoint, ftype: str) -> Iterator[Tuple[str, np.ndarray]]:
    """(openai-whisper name, array in the type whisper.cpp expects), key biases left out."""
    for hf in ckpt.names():
        data = ckpt.tensor(hf)
        name = openai_name(hf)
        if name.endswith("key.bias"):
            if np.any(data):
                raise ValueError(f"ggml_convert: {hf} is not all zeros; whisper.cpp has no key bias")
            continue
        if name in ("encoder.conv1.bias", "encoder.conv2.bias"):
            data = data.reshape(-1, 1)
        if ftype == "f16" and data.ndim >= 2 and name not in _ALWAYS_F32:
            data = data.astype("<f2")
        else:
            data = data.astype("<f4")
        yield name, data


def convert(checkpoint_dir: str, out: str, ftype: str = "f16") -> Dict:
    """Writes the ggml file; returns what was written (variant, ftype, tensors, bytes)."""
    if ftype not in FTYPES:
        raise ValueError(f"ggml_convert: ftype {ftype!r}; use f16 or f32")
    ckpt = PackedCheckpoint(checkpoint_dir, verify=False)  # create() of our own libraries checks it
    config = ckpt.config
    filters = mel_filters(config["n_mels"])
    words = list(vocabulary(os.path.join(checkpoint_dir, "tokenizer.json"), config["eot"]))
    n_tensors = 0
    tmp = out + ".partial"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<I", MAGIC))
        f.write(struct.pack("<11i", *(config[k] for k in HPARAMS), FTYPES[ftype]))
        f.write(struct.pack("<2i", *filters.shape))
        f.write(filters.astype("<f4").tobytes())
        f.write(struct.pack("<i", len(words)))
        for w in words:
            f.write(struct.pack("<I", len(w)))
            f.write(w)
        for name, data in ggml_tensors(ckpt, ftype):
            encoded = name.encode("utf-8")
            f.write(struct.pack("<3i", data.ndim, len(encoded), 1 if data.dtype == np.float16 else 0))
            f.write(struct.pack(f"<{data.ndim}i", *reversed(data.shape)))
            f.write(encoded)
            f.write(np.ascontiguousarray(data).tobytes())
            n_tensors += 1
    os.replace(tmp, out)
    return {"variant": config.get("variant"), "ftype": ftype, "tensors": n_tensors, "words": len(words),
            "bytes": os.path.getsize(out), "manifest_sha256": ckpt.manifest_sha256}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", required=True, help="packed checkpoint directory (@whisper_<variant>)")
    parser.add_argument("--out", required=True, help="ggml file to write")
    parser.add_argument("--ftype", default="f16", choices=sorted(FTYPES))
    args = parser.parse_args()
    print(json.dumps(convert(args.checkpoint, args.out, args.ftype)))


if __name__ == "__main__":
    main()
