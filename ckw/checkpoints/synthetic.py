"""Test helpers: small synthetic Whisper checkpoints written from scratch.

The CTranslate2 writer and the Hugging Face -> CTranslate2 fusion below are written independently
of the converter (the inverse direction, from the file format description), so a converter test
that round-trips through them checks the converter against a second implementation.
"""

from __future__ import annotations

import json
import os
import struct

import numpy as np

from ckw.checkpoints.canonical import ModelDims

# Small but complete: 2 layers each side, 2 heads, and a vocabulary that has the 1501 timestamp
# ids after <|notimestamps|> (ordinary tokens 0-2, specials 3-12, timestamps 13-1513).
SMALL = ModelDims(
    n_mels=4,
    n_audio_ctx=10,
    n_audio_state=8,
    n_audio_head=2,
    n_audio_layer=2,
    n_vocab=1514,
    n_text_ctx=6,
    n_text_state=8,
    n_text_head=2,
    n_text_layer=2,
)
SPECIAL_TOKENS = {
    "<|endoftext|>": 3,
    "<|startoftranscript|>": 4,
    "<|en|>": 5,
    "<|de|>": 6,
    "<|translate|>": 7,
    "<|transcribe|>": 8,
    "<|startoflm|>": 9,
    "<|startofprev|>": 10,
    "<|nocaptions|>": 11,
    "<|notimestamps|>": 12,
}
SUPPRESS = [1, 11]
BEGIN_SUPPRESS = [2, 3]
ALIGNMENT_HEADS = [[1, 0], [1, 1]]

_CT2_DTYPE_IDS = {
    np.dtype("float32"): 0,
    np.dtype("int8"): 1,
    np.dtype("int16"): 2,
    np.dtype("int32"): 3,
    np.dtype("float16"): 4,
}


def hf_tensors(dims: ModelDims = SMALL, seed: int = 0, dtype=np.float16) -> dict[str, np.ndarray]:
    """Random weights under Hugging Face names (no k_proj.bias, as in Hugging Face)."""
    rng = np.random.default_rng(seed)
    out: dict[str, np.ndarray] = {}

    def t(name, *shape):
        out[name] = (rng.standard_normal(shape) * 0.5).astype(dtype)

    d, v = dims.n_audio_state, dims.n_text_state
    t("model.encoder.conv1.weight", d, dims.n_mels, 3)
    t("model.encoder.conv1.bias", d)
    t("model.encoder.conv2.weight", d, d, 3)
    t("model.encoder.conv2.bias", d)
    t("model.encoder.embed_positions.weight", dims.n_audio_ctx, d)
    blocks = [("encoder", i, d, False) for i in range(dims.n_audio_layer)]
    blocks += [("decoder", i, v, True) for i in range(dims.n_text_layer)]
    for side, i, w, cross in blocks:
        p = f"model.{side}.layers.{i}"
        attns = ["self_attn", "encoder_attn"] if cross else ["self_attn"]
        for a in attns:
            for proj in ("q_proj", "k_proj", "v_proj", "out_proj"):
                t(f"{p}.{a}.{proj}.weight", w, w)
                if proj != "k_proj":
                    t(f"{p}.{a}.{proj}.bias", w)
            t(f"{p}.{a}_layer_norm.weight", w)
            t(f"{p}.{a}_layer_norm.bias", w)
        t(f"{p}.fc1.weight", 4 * w, w)
        t(f"{p}.fc1.bias", 4 * w)
        t(f"{p}.fc2.weight", w, 4 * w)
        t(f"{p}.fc2.bias", w)
        t(f"{p}.final_layer_norm.weight", w)
        t(f"{p}.final_layer_norm.bias", w)
    t("model.encoder.layer_norm.weight", d)
    t("model.encoder.layer_norm.bias", d)
    t("model.decoder.embed_tokens.weight", dims.n_vocab, v)
    t("model.decoder.embed_positions.weight", dims.n_text_ctx, v)
    t("model.decoder.layer_norm.weight", v)
    t("model.decoder.layer_norm.bias", v)
    return out


def ct2_variables(hf: dict[str, np.ndarray], dims: ModelDims = SMALL) -> dict[str, np.ndarray]:
    """The CTranslate2 WhisperSpec variables for Hugging Face weights (fused as CTranslate2 does)."""
    out: dict[str, np.ndarray] = {}

    def ln(c, h):
        out[f"{c}/gamma"] = hf[f"{h}.weight"]
        out[f"{c}/beta"] = hf[f"{h}.bias"]

    def lin(c, h):
        out[f"{c}/weight"] = hf[f"{h}.weight"]
        out[f"{c}/bias"] = hf[f"{h}.bias"]

    def zeros_like(name):
        return np.zeros_like(hf[name])

    for c, h in (("encoder/conv1", "model.encoder.conv1"), ("encoder/conv2", "model.encoder.conv2")):
        lin(c, h)
    out["encoder/position_encodings/encodings"] = hf["model.encoder.embed_positions.weight"]
    out["decoder/embeddings/weight"] = hf["model.decoder.embed_tokens.weight"]
    out["decoder/position_encodings/encodings"] = hf["model.decoder.embed_positions.weight"]
    ln("encoder/layer_norm", "model.encoder.layer_norm")
    ln("decoder/layer_norm", "model.decoder.layer_norm")
    for side, n in (("encoder", dims.n_audio_layer), ("decoder", dims.n_text_layer)):
        for i in range(n):
            c, h = f"{side}/layer_{i}", f"model.{side}.layers.{i}"
            s = f"{h}.self_attn"
            out[f"{c}/self_attention/linear_0/weight"] = np.concatenate(
                [hf[f"{s}.q_proj.weight"], hf[f"{s}.k_proj.weight"], hf[f"{s}.v_proj.weight"]]
            )
            out[f"{c}/self_attention/linear_0/bias"] = np.concatenate(
                [hf[f"{s}.q_proj.bias"], zeros_like(f"{s}.q_proj.bias"), hf[f"{s}.v_proj.bias"]]
            )
            lin(f"{c}/self_attention/linear_1", f"{s}.out_proj")
            ln(f"{c}/self_attention/layer_norm", f"{h}.self_attn_layer_norm")
            if side == "decoder":
                x = f"{h}.encoder_attn"
                lin(f"{c}/attention/linear_0", f"{x}.q_proj")
                out[f"{c}/attention/linear_1/weight"] = np.concatenate(
                    [hf[f"{x}.k_proj.weight"], hf[f"{x}.v_proj.weight"]]
                )
                out[f"{c}/attention/linear_1/bias"] = np.concatenate(
                    [zeros_like(f"{x}.v_proj.bias"), hf[f"{x}.v_proj.bias"]]
                )
                lin(f"{c}/attention/linear_2", f"{x}.out_proj")
                ln(f"{c}/attention/layer_norm", f"{h}.encoder_attn_layer_norm")
            lin(f"{c}/ffn/linear_0", f"{h}.fc1")
            lin(f"{c}/ffn/linear_1", f"{h}.fc2")
            ln(f"{c}/ffn/layer_norm", f"{h}.final_layer_norm")
    out["encoder/num_heads"] = np.int16(dims.n_audio_head)
    out["decoder/num_heads"] = np.int16(dims.n_text_head)
    out["decoder/activation"] = np.int8(3)
    out["decoder/pre_norm"] = np.int8(1)
    out["decoder/scale_embeddings"] = np.int8(0)
    out["decoder/start_from_zero_embedding"] = np.int8(0)
    out["decoder/alibi"] = np.int8(0)
    out["decoder/alignment_layer"] = np.int16(-1)
    out["decoder/alignment_heads"] = np.int16(1)
    return out


def write_ct2(
    path: str,
    variables: dict,
    aliases: dict[str, str] | None = None,
    version: int = 6,
    spec: str = "WhisperSpec",
    revision: int = 3,
) -> None:
    """A model.bin, sorted by name as CTranslate2 writes it. A value may be a numpy array or a
    raw `(shape, dtype_id, data_bytes)` tuple (to write malformed entries)."""

    def s(text: str) -> bytes:
        raw = text.encode("utf-8")
        return struct.pack("<H", len(raw) + 1) + raw + b"\0"

    buf = bytearray(struct.pack("<I", version) + s(spec) + struct.pack("<I", revision))
    buf += struct.pack("<I", len(variables))
    for name in sorted(variables):
        value = variables[name]
        if isinstance(value, tuple):
            shape, dtype_id, data = value
        else:
            arr = np.asarray(value)
            shape, dtype_id, data = (
                arr.shape,
                _CT2_DTYPE_IDS[arr.dtype],
                arr.astype(arr.dtype.newbyteorder("<")).tobytes(),
            )
        buf += s(name) + struct.pack("<B", len(shape)) + b"".join(struct.pack("<I", d) for d in shape)
        buf += struct.pack("<BI", dtype_id, len(data)) + data
    aliases = aliases or {}
    buf += struct.pack("<I", len(aliases))
    for alias in sorted(aliases):
        buf += s(alias) + s(aliases[alias])
    with open(path, "wb") as f:
        f.write(bytes(buf))


def tokenizer_json(specials: dict[str, int] = SPECIAL_TOKENS) -> dict:
    return {
        "version": "1.0",
        "added_tokens": [
            {
                "id": i,
                "content": text,
                "special": True,
                "normalized": False,
                "lstrip": False,
                "rstrip": False,
                "single_word": False,
            }
            for text, i in sorted(specials.items(), key=lambda kv: kv[1])
        ],
        "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "c": 2}, "merges": []},
    }


def _write_json(path: str, doc) -> None:
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)


def write_ct2_dir(directory: str, variables: dict, aliases=None, config: dict | None = None, **kw) -> str:
    os.makedirs(directory, exist_ok=True)
    write_ct2(os.path.join(directory, "model.bin"), variables, aliases, **kw)
    if config is None:
        config = {
            "suppress_ids": SUPPRESS,
            "suppress_ids_begin": BEGIN_SUPPRESS,
            "lang_ids": sorted(v for k, v in SPECIAL_TOKENS.items() if k in ("<|en|>", "<|de|>")),
            "alignment_heads": ALIGNMENT_HEADS,
        }
    _write_json(os.path.join(directory, "config.json"), config)
    _write_json(os.path.join(directory, "tokenizer.json"), tokenizer_json())
    return directory


def hf_config(dims: ModelDims = SMALL) -> dict:
    return {
        "model_type": "whisper",
        "num_mel_bins": dims.n_mels,
        "d_model": dims.n_audio_state,
        "encoder_layers": dims.n_audio_layer,
        "encoder_attention_heads": dims.n_audio_head,
        "decoder_layers": dims.n_text_layer,
        "decoder_attention_heads": dims.n_text_head,
        "max_source_positions": dims.n_audio_ctx,
        "max_target_positions": dims.n_text_ctx,
        "vocab_size": dims.n_vocab,
        "encoder_ffn_dim": 4 * dims.n_audio_state,
        "decoder_ffn_dim": 4 * dims.n_text_state,
        "activation_function": "gelu",
        "scale_embedding": False,
    }


def write_hf_dir(
    directory: str,
    tensors: dict[str, np.ndarray],
    dims: ModelDims = SMALL,
    alignment_heads: list[list[int]] | None = ALIGNMENT_HEADS,
    specials: dict[str, int] = SPECIAL_TOKENS,
) -> str:
    """A Hugging Face Whisper directory, written with the `safetensors` library itself;
    `alignment_heads` None leaves them out (as a save_pretrained fine-tune does)."""
    from safetensors.numpy import save_file

    os.makedirs(directory, exist_ok=True)
    save_file({k: np.ascontiguousarray(v) for k, v in tensors.items()}, os.path.join(directory, "model.safetensors"))
    _write_json(os.path.join(directory, "config.json"), hf_config(dims))
    write_hf_generation_config(directory, alignment_heads, specials)
    _write_json(os.path.join(directory, "tokenizer.json"), tokenizer_json(specials))
    return directory


def write_hf_generation_config(
    directory: str, alignment_heads: list[list[int]] | None = ALIGNMENT_HEADS, specials: dict[str, int] = SPECIAL_TOKENS
) -> None:
    gen = {
        "suppress_tokens": SUPPRESS,
        "begin_suppress_tokens": BEGIN_SUPPRESS,
        "lang_to_id": {k: specials[k] for k in ("<|en|>", "<|de|>")},
    }
    if alignment_heads is not None:
        gen["alignment_heads"] = alignment_heads
    _write_json(os.path.join(directory, "generation_config.json"), gen)
