"""A packed ckw checkpoint (weights.bin + manifest.json + model_config.json + tokenizer.json, what
`@whisper_<variant>` holds) -> a whisper.cpp ggml model file, so whisper.cpp runs the same weights.

    python -m tools.bench.ggml_convert --checkpoint DIR --out ggml-tiny.bin [--ftype f16|f32|q8_0|q5_1]

The ggml layout, as whisper.cpp's loader reads it (all little-endian):

    uint32 magic 0x67676d6c ("ggml")
    int32  n_vocab, n_audio_ctx, n_audio_state, n_audio_head, n_audio_layer,
           n_text_ctx, n_text_state, n_text_head, n_text_layer, n_mels, ftype (0 f32, 1 f16; quantized:
           GGML_QNT_VERSION 2 x 1000 + ggml_ftype, 2007 q8_0, 2009 q5_1, as whisper.cpp's quantize writes)
    int32  n_mel, n_fft; float32 mel filters [n_mel][n_fft]        (Slaney, as openai-whisper's)
    int32  n_words; n_words x (uint32 length, bytes)               (ordinary tokens, id order)
    tensors to the end of the file: int32 n_dims, int32 name length, int32 type (ggml_type: 0 f32,
           1 f16, 7 q5_1, 8 q8_0), int32 ne[n_dims] (innermost dimension first), name bytes, data

Tensor names are openai-whisper's (`encoder.blocks.0.attn.query.weight`); ours are Hugging
Face's (`model.encoder.layers.0.self_attn.q_proj.weight`). whisper.cpp wants matrices and the
conv kernels in the file's type, everything one-dimensional plus the positional embeddings and
the conv biases (stored as [n_state, 1]) in f32, and no key-projection bias (ours is all zeros,
synthesized; the converter checks that). The special tokens (end of text and after) are not
written: whisper.cpp derives them from n_vocab. f16 loses nothing for the packaged checkpoints,
whose source weights are float16 (model_config.json `source_format`).

q8_0 and q5_1 are the files whisper.cpp's examples/quantize makes from the f16 one: every 2-D tensor
but the positional embeddings and the conv biases is quantized in blocks of 32 consecutive values
of a row (ggml's innermost dimension); the conv kernels stay f16, the rest f32. The blocks, as
ggml's reference quantizers (quantize_row_q8_0_ref, quantize_row_q5_1_ref) make them, in float32
arithmetic:

    q8_0, 34 bytes: f16 d = amax / 127; int8 q[32] = round(x / d) (halves away from zero; x * (1/d))
    q5_1, 24 bytes: f16 d = (max - min) / 31; f16 m = min; uint32 qh (bit j: bit 4 of q[j]);
                    uint8 qs[16] (q[j] & 15 | (q[j + 16] & 15) << 4); q = trunc((x - min) * (1/d) + 0.5)

so x ~ q * d (q8_0), q * d + m (q5_1). The quantizers read the checkpoint's float32 values: for the
packaged checkpoints (float16 sources) the very values whisper.cpp's quantize reads from the f16 file.
A row whose length is not a multiple of 32 cannot be cut
into blocks: the converter refuses it (whisper.cpp's quantize only asserts, and release builds
drop asserts).
"""

import argparse
import importlib.util
import json
import os
import struct
from typing import Dict, Iterator, Tuple

import numpy as np

from ckw.checkpoints.errors import CheckpointError
from ckw.checkpoints.packed import PackedCheckpoint

MAGIC = 0x67676D6C
# --ftype -> the header's ftype (ggml.h's ggml_ftype; quantized: GGML_QNT_VERSION * 1000 + it).
GGML_QNT_VERSION = 2
FTYPES = {"f32": 0, "f16": 1, "q8_0": GGML_QNT_VERSION * 1000 + 7, "q5_1": GGML_QNT_VERSION * 1000 + 9}
# Tensor types (ggml.h's ggml_type) and the quantized ones' blocks: values per block, bytes per block.
GGML_TYPES = {"f32": 0, "f16": 1, "q5_1": 7, "q8_0": 8}
QK = 32
_Q8_0 = np.dtype([("d", "<f2"), ("qs", "i1", (QK,))])
_Q5_1 = np.dtype([("d", "<f2"), ("m", "<f2"), ("qh", "<u4"), ("qs", "u1", (QK // 2,))])
BLOCK_BYTES = {"q8_0": _Q8_0.itemsize, "q5_1": _Q5_1.itemsize}  # 34, 24 (packed, as ggml's structs)
HPARAMS = (
    "n_vocab",
    "n_audio_ctx",
    "n_audio_state",
    "n_audio_head",
    "n_audio_layer",
    "n_text_ctx",
    "n_text_state",
    "n_text_head",
    "n_text_layer",
    "n_mels",
)

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
# Stored as f32 whatever the file type (besides every 1-D tensor); whisper.cpp's quantize skips them.
_ALWAYS_F32 = {
    "encoder.positional_embedding",
    "decoder.positional_embedding",
    "encoder.conv1.bias",
    "encoder.conv2.bias",
}


def openai_name(hf: str) -> str:
    """`model.decoder.layers.3.encoder_attn.q_proj.bias` -> `decoder.blocks.3.cross_attn.query.bias`."""
    for prefix, out in _MODEL_PARTS.items():
        if hf == prefix or hf.startswith(prefix + "."):
            return out + hf[len(prefix) :]
    parts = hf.split(".")
    if len(parts) >= 5 and parts[0] == "model" and parts[1] in ("encoder", "decoder") and parts[2] == "layers":
        stack, index, rest = parts[1], parts[3], ".".join(parts[4:])
        for piece, out in _LAYER_PARTS.items():
            if rest.startswith(piece + "."):
                return f"{stack}.blocks.{index}.{out}{rest[len(piece) :]}"
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


def _blocks(x: np.ndarray, name: str, ftype: str) -> np.ndarray:
    """x (float32, rows innermost) as [n_blocks, 32], or a one-line error naming the tensor."""
    x = np.asarray(x, dtype=np.float32)
    if x.ndim == 0 or x.shape[-1] % QK:
        raise ValueError(
            f"ggml_convert: cannot quantize {name} {tuple(x.shape)} to {ftype}: its rows hold "
            f"{x.shape[-1] if x.ndim else 0} values, not a multiple of ggml's block of {QK}"
        )
    if not np.all(np.isfinite(x)):
        raise ValueError(f"ggml_convert: cannot quantize {name} to {ftype}: it holds NaN or infinite values")
    return x.reshape(-1, QK)


def _reciprocal(d: np.ndarray) -> np.ndarray:
    """1 / d in float32, 0 where d is 0 (ggml's `id = d ? 1.0f/d : 0.0f`)."""
    return np.divide(np.float32(1), d, out=np.zeros_like(d), where=d != 0)


def _q8_0_blocks(b: np.ndarray) -> np.ndarray:
    d = np.max(np.abs(b), axis=1) / np.float32(127)
    scaled = (b * _reciprocal(d)[:, None]).astype(np.float64)  # the float32 products, exactly
    out = np.empty(len(b), _Q8_0)
    out["d"] = d.astype(np.float16)
    out["qs"] = np.copysign(np.floor(np.abs(scaled) + 0.5), scaled).astype(np.int8)  # roundf: halves away from 0
    return out


def _q5_1_blocks(b: np.ndarray) -> np.ndarray:
    lo, hi = b.min(axis=1), b.max(axis=1)
    d = (hi - lo) / np.float32(31)
    q = np.floor((b - lo[:, None]) * _reciprocal(d)[:, None] + np.float32(0.5)).astype(np.uint32)
    out = np.empty(len(b), _Q5_1)
    out["d"] = d.astype(np.float16)
    out["m"] = lo.astype(np.float16)
    out["qh"] = ((q >> 4) << np.arange(QK, dtype=np.uint32)).sum(axis=1, dtype=np.uint32)
    out["qs"] = ((q[:, : QK // 2] & 15) | ((q[:, QK // 2 :] & 15) << 4)).astype(np.uint8)
    return out


_CHUNK = 1 << 16  # blocks at a time: bounded temporaries for any matrix


def quantize_q8_0(x: np.ndarray, name: str = "tensor") -> bytes:
    """ggml's q8_0 blocks of x's rows (quantize_row_q8_0_ref's arithmetic: float32, roundf)."""
    b = _blocks(x, name, "q8_0")
    return b"".join(_q8_0_blocks(b[i : i + _CHUNK]).tobytes() for i in range(0, len(b), _CHUNK))


def quantize_q5_1(x: np.ndarray, name: str = "tensor") -> bytes:
    """ggml's q5_1 blocks of x's rows (quantize_row_q5_1_ref's arithmetic: float32, + 0.5f, truncated)."""
    b = _blocks(x, name, "q5_1")
    return b"".join(_q5_1_blocks(b[i : i + _CHUNK]).tobytes() for i in range(0, len(b), _CHUNK))


QUANTIZERS = {"q8_0": quantize_q8_0, "q5_1": quantize_q5_1}


def tensor_type(name: str, ndim: int, ftype: str) -> str:
    """The ggml type a tensor is stored in: whisper.cpp's loader's for f16 and f32, its quantize's
    choice for q8_0 and q5_1 (2-D tensors but the four kept in f32; the 3-D conv kernels stay f16)."""
    if ndim == 1 or name in _ALWAYS_F32 or ftype == "f32":
        return "f32"
    if ftype in QUANTIZERS and ndim == 2:
        return ftype
    return "f16"


def ggml_tensors(ckpt: PackedCheckpoint, ftype: str) -> Iterator[Tuple[str, str, Tuple[int, ...], bytes]]:
    """(openai-whisper name, ggml type, shape outermost first, data), key biases left out."""
    for hf in ckpt.names():
        data = ckpt.tensor(hf)
        name = openai_name(hf)
        if name.endswith("key.bias"):
            if np.any(data):
                raise ValueError(f"ggml_convert: {hf} is not all zeros; whisper.cpp has no key bias")
            continue
        if name in ("encoder.conv1.bias", "encoder.conv2.bias"):
            data = data.reshape(-1, 1)
        ttype = tensor_type(name, data.ndim, ftype)
        if ttype in QUANTIZERS:
            payload = QUANTIZERS[ttype](data, name)
        else:
            payload = np.ascontiguousarray(data, dtype="<f2" if ttype == "f16" else "<f4").tobytes()
        yield name, ttype, data.shape, payload


def convert(checkpoint_dir: str, out: str, ftype: str = "f16") -> Dict:
    """Writes the ggml file; returns what was written (variant, ftype, tensors, bytes)."""
    if ftype not in FTYPES:
        raise ValueError(f"ggml_convert: ftype {ftype!r}; use one of {', '.join(FTYPES)}")
    ckpt = PackedCheckpoint(checkpoint_dir, verify=False)  # create() of our own libraries checks it
    config = ckpt.config
    filters = mel_filters(config["n_mels"])
    words = list(vocabulary(os.path.join(checkpoint_dir, "tokenizer.json"), config["eot"]))
    n_tensors, types = 0, {}
    tmp = out + ".partial"
    try:
        with open(tmp, "wb") as f:
            f.write(struct.pack("<I", MAGIC))
            f.write(struct.pack("<11i", *(config[k] for k in HPARAMS), FTYPES[ftype]))
            f.write(struct.pack("<2i", *filters.shape))
            f.write(filters.astype("<f4").tobytes())
            f.write(struct.pack("<i", len(words)))
            for w in words:
                f.write(struct.pack("<I", len(w)))
                f.write(w)
            for name, ttype, shape, payload in ggml_tensors(ckpt, ftype):
                encoded = name.encode("utf-8")
                f.write(struct.pack("<3i", len(shape), len(encoded), GGML_TYPES[ttype]))
                f.write(struct.pack(f"<{len(shape)}i", *reversed(shape)))
                f.write(encoded)
                f.write(payload)
                n_tensors += 1
                types[ttype] = types.get(ttype, 0) + 1
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    os.replace(tmp, out)
    return {
        "variant": config.get("variant"),
        "ftype": ftype,
        "header_ftype": FTYPES[ftype],
        "tensors": n_tensors,
        "tensor_types": types,
        "words": len(words),
        "bytes": os.path.getsize(out),
        "manifest_sha256": ckpt.manifest_sha256,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", required=True, help="packed checkpoint directory (@whisper_<variant>)")
    parser.add_argument("--out", required=True, help="ggml file to write")
    parser.add_argument("--ftype", default="f16", choices=list(FTYPES))
    args = parser.parse_args()
    try:
        print(json.dumps(convert(args.checkpoint, args.out, args.ftype)))
    except (ValueError, CheckpointError) as e:  # one line: the tensor or file at fault
        raise SystemExit(str(e)) from None


if __name__ == "__main__":
    main()
