"""Hugging Face Whisper (safetensors or pytorch_model.bin + config.json) -> canonical float32 tensors.

Names are already canonical; the work is checking shapes against config.json, widening the
dtype, synthesizing the absent key biases and accounting for the tied `proj_out.weight`.
Decoding lists (suppress tokens, alignment heads, language ids) come from generation_config.json,
falling back to config.json where older exports kept them.
"""

from __future__ import annotations

import json
import os

from ckw.checkpoints import canonical
from ckw.checkpoints.canonical import (
    KEY_BIAS_REASON,
    Conversion,
    Ledger,
    ModelDims,
    PlannedTensor,
    widen_to_f32,
)
from ckw.checkpoints.errors import CheckpointError
from ckw.checkpoints.hf_weights import HfWeights, open_hf_weights

_DIM_FROM_CONFIG = {
    "n_mels": "num_mel_bins",
    "n_audio_ctx": "max_source_positions",
    "n_audio_state": "d_model",
    "n_audio_head": "encoder_attention_heads",
    "n_audio_layer": "encoder_layers",
    "n_vocab": "vocab_size",
    "n_text_ctx": "max_target_positions",
    "n_text_state": "d_model",
    "n_text_head": "decoder_attention_heads",
    "n_text_layer": "decoder_layers",
}


def _load_json(path: str, required: bool) -> dict:
    if not os.path.exists(path):
        if required:
            raise CheckpointError(f"{path}: missing; a Hugging Face Whisper directory needs it")
        return {}
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise CheckpointError(f"{path}: unreadable JSON ({e}); re-download it") from e


def convert_hf(directory: str) -> Conversion:
    config_path = os.path.join(directory, "config.json")
    config = _load_json(config_path, True)
    gen = _load_json(os.path.join(directory, "generation_config.json"), False)
    if config.get("model_type", "whisper") != "whisper":
        raise CheckpointError(
            f"{config_path}: unknown spec: model_type '{config.get('model_type')}', expected 'whisper'"
        )
    for key, want in (("activation_function", "gelu"), ("scale_embedding", False)):
        if key in config and config[key] != want:
            raise CheckpointError(f"{config_path}: '{key}' is {config[key]!r}, Whisper requires {want!r}")

    try:
        dims = ModelDims(**{k: int(config[v]) for k, v in _DIM_FROM_CONFIG.items()})
    except KeyError as e:
        raise CheckpointError(f"{config_path}: missing '{e.args[0]}'; not a Whisper config") from e
    dims.validate(config_path)
    for key in ("encoder_ffn_dim", "decoder_ffn_dim"):
        if key in config and int(config[key]) != 4 * dims.n_audio_state:
            raise CheckpointError(f"{config_path}: '{key}' is {config[key]}, Whisper uses 4 * d_model")

    st = open_hf_weights(directory)
    label = "+".join(os.path.basename(p) for p in st.paths)
    where = st.paths[0]

    # Bare WhisperModel exports lack the "model." prefix; canonical names always have it.
    def canonical_name(name: str) -> str:
        return name if name.startswith(("model.", "proj_out.")) else f"model.{name}"

    by_name = {}
    ledger = Ledger(where)
    for name, t in st.tensors.items():
        by_name[canonical_name(name)] = name
        ledger.add(name, t.dtype, t.shape)

    tensors: list[PlannedTensor] = []
    checks = []
    for hf, shape in canonical.canonical_tensors(dims):
        src = by_name.get(hf)
        if canonical.is_key_bias(hf):
            tensors.append(canonical.zeros(hf, shape, KEY_BIAS_REASON))
            if src is not None:  # some exports store it; it must be zero to be Whisper
                checks.append((f"{src} is zero", _zero_check(st, src, shape, where)))
                ledger.use(src, hf, reason="stored key bias, checked zero; canonical zeros used")
            continue
        if src is None:
            raise CheckpointError(f"{where}: missing tensor '{hf}'; the checkpoint is incomplete")
        t = st.tensors[src]
        if tuple(t.shape) != shape:
            raise CheckpointError(
                f"{where}: wrong shape: tensor '{src}' is {list(t.shape)}, expected {list(shape)} "
                f"from {os.path.basename(config_path)}"
            )
        ledger.use(src, hf)
        tensors.append(
            PlannedTensor(
                hf,
                shape,
                f"{label}:{src}",
                lambda src=src, t=t, shape=shape: widen_to_f32(
                    st.read_bytes(src), t.dtype, shape, f"{where}: tensor '{src}'"
                ),
            )
        )

    proj = by_name.get("proj_out.weight")
    if proj is not None:
        emb = by_name["model.decoder.embed_tokens.weight"]
        if st.tensors[proj].shape != st.tensors[emb].shape:
            raise CheckpointError(f"{where}: wrong shape: tensor '{proj}' differs from '{emb}'")

        def tied() -> None:
            if st.read_bytes(proj) != st.read_bytes(emb):
                raise CheckpointError(
                    f"{where}: tensor '{proj}' differs from '{emb}'; Whisper ties them, an untied "
                    "output projection is not supported"
                )

        checks.append((f"{proj} equals {emb}", tied))
        ledger.use(proj, "model.decoder.embed_tokens.weight", reason="tied output projection (checked equal)")
    ledger.require_complete("it is not a tensor of Hugging Face WhisperForConditionalGeneration")

    def pick(key: str):
        return gen[key] if key in gen else config.get(key)

    suppress, begin = pick("suppress_tokens"), pick("begin_suppress_tokens")
    notes = []
    if suppress is None or begin is None:  # a fine-tune saved by save_pretrained: only a cross-check is lost
        notes.append(
            f"{config_path}: no suppress_tokens/begin_suppress_tokens (nor in generation_config.json); "
            "decoding derives both from the vocabulary as openai-whisper does"
        )
        suppress, begin = suppress or [], begin or []
    heads = gen.get("alignment_heads")
    if heads is None:
        heads = []
        notes.append(
            f"{directory} has no alignment_heads in generation_config.json; taken from openai-whisper "
            "(model_config.json alignment_heads_source)"
        )
    lang_to_id = gen.get("lang_to_id")
    stored = sorted({t.dtype for t in st.tensors.values()})
    return Conversion(
        dims=dims,
        tensors=tensors,
        ledger=ledger,
        checks=checks,
        suppress_tokens=[int(x) for x in suppress],
        begin_suppress_tokens=[int(x) for x in begin],
        alignment_heads=[[int(a), int(b)] for a, b in heads],
        source_lang_ids=sorted(int(v) for v in lang_to_id.values()) if lang_to_id else None,
        source_format=f"Hugging Face safetensors, {'/'.join(stored)}",
        notes=notes,
    )


def _zero_check(st: HfWeights, src: str, shape, where: str):
    def check() -> None:
        t = st.tensors[src]
        if widen_to_f32(st.read_bytes(src), t.dtype, shape, f"{where}: '{src}'").any():
            raise CheckpointError(
                f"{where}: tensor '{src}' is a non-zero key bias; Whisper has no key bias, this is "
                "not a Whisper checkpoint"
            )

    return check
