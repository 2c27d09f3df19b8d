"""CTranslate2 WhisperSpec (revision 3) -> canonical Hugging Face-named float32 tensors.

CTranslate2 stores Whisper differently from Hugging Face in four ways, each undone here:
  * self-attention q, k, v are one fused `linear_0` of 3*d rows (in that order); cross-attention
    k, v are one fused `linear_1` of 2*d rows. Each part is a contiguous row range, so the split
    is a byte range of the source and costs nothing;
  * the fused biases carry a zero slice where the key bias would be (the CTranslate2 converter
    fills it with zeros). The slice is checked to be zero and replaced by the synthesized
    canonical `k_proj.bias`;
  * the output projection is an alias of the token embedding (tied weights);
  * structural settings are stored as scalar "variables" (`num_heads`, `activation`, ...). Heads
    feed the dimensions, the rest are checked against what Whisper requires.
"""

from __future__ import annotations

import re

from ckw.checkpoints import canonical
from ckw.checkpoints.canonical import (
    KEY_BIAS_REASON,
    Conversion,
    Ledger,
    ModelDims,
    PlannedTensor,
    widen_to_f32,
)
from ckw.checkpoints.ctranslate2_reader import Ct2Model
from ckw.checkpoints.errors import CheckpointError

SPEC_NAME = "WhisperSpec"
SPEC_REVISION = 3

# Scalar settings Whisper needs, with the only accepted value. Values are CTranslate2 enums:
# activation 3 = GELU (erf form, as in openai-whisper's nn.GELU()).
_REQUIRED_SETTINGS = {
    "decoder/activation": (3, "decoder MLP activation is GELU, as in Whisper"),
    "decoder/pre_norm": (1, "pre-LayerNorm blocks, as in Whisper"),
    "decoder/scale_embeddings": (0, "token embeddings are not scaled by sqrt(d), as in Whisper"),
    "decoder/start_from_zero_embedding": (0, "no zero start embedding, as in Whisper"),
    "decoder/alibi": (0, "no ALiBi: Whisper uses learned decoder positions"),
}
_IGNORED_SETTINGS = {
    "decoder/alignment_layer": "CTranslate2 runtime option for returning attention; Whisper's "
    "alignment heads come from config.json",
    "decoder/alignment_heads": "CTranslate2 runtime option for returning attention; Whisper's "
    "alignment heads come from config.json",
    "decoder/alibi_use_positive_positions": "ALiBi option; ALiBi is off (checked)",
    "decoder/scale_alibi": "ALiBi option; ALiBi is off (checked)",
}
_FLOAT_DTYPES = ("float32", "float16", "bfloat16")


def convert_ct2(model: Ct2Model, ct2_config: dict, config_path: str) -> Conversion:
    """Plan the conversion of an indexed model.bin plus its config.json (already parsed)."""
    where = model.file.paths[0]
    if model.spec != SPEC_NAME or model.revision != SPEC_REVISION:
        raise CheckpointError(
            f"{where}: unknown spec '{model.spec}' revision {model.revision}; only "
            f"{SPEC_NAME} revision {SPEC_REVISION} (a CTranslate2 Whisper model) is supported"
        )
    ledger = Ledger(where)
    for name, stored in model.variables.items():
        ledger.add(name, stored.dtype, stored.shape)
    for alias, target in model.aliases.items():
        stored = model.resolve(alias)
        ledger.add(alias, stored.dtype, stored.shape, alias_of=target)

    def var(name: str, shape: tuple[int, ...] | None = None, rank: int | None = None, needed_for=""):
        if name not in model:
            raise CheckpointError(
                f"{where}: missing tensor '{name}'{needed_for}; the model.bin is incomplete or not a Whisper model"
            )
        v = model.resolve(name)
        if shape is not None and tuple(v.shape) != tuple(shape):
            raise CheckpointError(
                f"{where}: wrong shape: tensor '{name}' is {list(v.shape)}, expected {list(shape)}{needed_for}"
            )
        if rank is not None and len(v.shape) != rank:
            raise CheckpointError(f"{where}: wrong shape: tensor '{name}' is {list(v.shape)}, expected rank {rank}")
        if v.shape and v.dtype not in _FLOAT_DTYPES:
            raise CheckpointError(
                f"{where}: tensor '{name}' is {v.dtype} (a quantized model); only float32, "
                "float16 and bfloat16 convert exactly, re-convert with quantization float16"
            )
        return v

    def scalar(name: str) -> int:
        var(name, shape=())
        return int(model.read_scalar(name))

    # Structure: heads and the checked settings.
    n_audio_head = scalar("encoder/num_heads")
    ledger.use("encoder/num_heads", reason="dims.n_audio_head")
    n_text_head = scalar("decoder/num_heads")
    ledger.use("decoder/num_heads", reason="dims.n_text_head")
    for name, (want, why) in _REQUIRED_SETTINGS.items():
        if name in model:
            got = scalar(name)
            if got != want:
                raise CheckpointError(
                    f"{where}: tensor '{name}' = {got}, Whisper requires {want} ({why}); this is not a Whisper model"
                )
            ledger.use(name, reason=f"checked = {want}: {why}")
    for name, why in _IGNORED_SETTINGS.items():
        if name in model:
            ledger.ignore(name, why)
    alibi_options = [n for n in ("decoder/alibi_use_positive_positions", "decoder/scale_alibi") if n in model]
    if alibi_options and "decoder/alibi" not in model:
        raise CheckpointError(f"{where}: missing tensor 'decoder/alibi' next to {alibi_options[0]}")

    n_audio_layer = _count_layers(model, "encoder", where)
    n_text_layer = _count_layers(model, "decoder", where)
    conv1 = var("encoder/conv1/weight", rank=3)
    d, n_mels, kernel = conv1.shape
    if kernel != 3:
        raise CheckpointError(
            f"{where}: wrong shape: tensor 'encoder/conv1/weight' has kernel {kernel}, Whisper uses 3"
        )
    n_audio_ctx = var("encoder/position_encodings/encodings", rank=2).shape[0]
    n_vocab, t = var("decoder/embeddings/weight", rank=2).shape
    n_text_ctx = var("decoder/position_encodings/encodings", rank=2).shape[0]
    dims = ModelDims(
        n_mels=n_mels,
        n_audio_ctx=n_audio_ctx,
        n_audio_state=d,
        n_audio_head=n_audio_head,
        n_audio_layer=n_audio_layer,
        n_vocab=n_vocab,
        n_text_ctx=n_text_ctx,
        n_text_state=t,
        n_text_head=n_text_head,
        n_text_layer=n_text_layer,
    )
    dims.validate(where)

    tensors: list[PlannedTensor] = []
    checks = []

    def whole(hf: str, src: str, shape: tuple[int, ...]) -> None:
        v = var(src, shape, needed_for=f" (for {hf})")
        ledger.use(src, hf)
        tensors.append(
            PlannedTensor(
                hf,
                shape,
                f"{model.label}:{src}",
                lambda: widen_to_f32(model.read_bytes(src), v.dtype, shape, f"{where}: tensor '{src}'"),
            )
        )

    def fused_part(hf: str, src: str, part: int, n_parts: int, shape: tuple[int, ...]) -> None:
        rows = shape[0]
        fused_shape = (rows * n_parts,) + tuple(shape[1:])
        v = var(src, fused_shape, needed_for=f" (fused {n_parts} x {list(shape)}, for {hf})")
        ledger.use(src, hf)
        row_bytes = v.nbytes // fused_shape[0]
        start, length = part * rows * row_bytes, rows * row_bytes
        tensors.append(
            PlannedTensor(
                hf,
                shape,
                f"{model.label}:{src} rows {part * rows}:{(part + 1) * rows}",
                lambda: widen_to_f32(model.read_bytes(src, start, length), v.dtype, shape, f"{where}: tensor '{src}'"),
            )
        )

    def key_bias(hf: str, src: str, part: int, n_parts: int, width: int) -> None:
        # The fused bias must hold zeros where the key bias would be; synthesize the canonical one.
        v = var(src, (width * n_parts,), needed_for=f" (fused bias, for {hf})")
        ledger.use(src, hf, reason=f"key slice rows {part * width}:{(part + 1) * width} checked zero")
        item = v.nbytes // (width * n_parts)
        start, length = part * width * item, width * item

        def check() -> None:
            values = widen_to_f32(model.read_bytes(src, start, length), v.dtype, (width,), f"{where}: '{src}'")
            if values.any():
                raise CheckpointError(
                    f"{where}: tensor '{src}' has a non-zero key-bias slice (rows "
                    f"{part * width}:{(part + 1) * width}); Whisper has no key bias, so this is "
                    "not a Whisper conversion"
                )

        checks.append((f"{src}: key slice is zero", check))
        tensors.append(canonical.zeros(hf, (width,), KEY_BIAS_REASON))

    def linear(hf: str, src: str, rows: int, cols: int) -> None:
        whole(f"{hf}.weight", f"{src}/weight", (rows, cols))
        whole(f"{hf}.bias", f"{src}/bias", (rows,))

    def norm(hf: str, src: str, width: int) -> None:
        whole(f"{hf}.weight", f"{src}/gamma", (width,))
        whole(f"{hf}.bias", f"{src}/beta", (width,))

    def self_attention(hf: str, src: str, w: int) -> None:
        qkv = f"{src}/linear_0"
        fused_part(f"{hf}.q_proj.weight", f"{qkv}/weight", 0, 3, (w, w))
        fused_part(f"{hf}.q_proj.bias", f"{qkv}/bias", 0, 3, (w,))
        fused_part(f"{hf}.k_proj.weight", f"{qkv}/weight", 1, 3, (w, w))
        key_bias(f"{hf}.k_proj.bias", f"{qkv}/bias", 1, 3, w)
        fused_part(f"{hf}.v_proj.weight", f"{qkv}/weight", 2, 3, (w, w))
        fused_part(f"{hf}.v_proj.bias", f"{qkv}/bias", 2, 3, (w,))
        linear(f"{hf}.out_proj", f"{src}/linear_1", w, w)

    def cross_attention(hf: str, src: str, w: int) -> None:
        whole(f"{hf}.q_proj.weight", f"{src}/linear_0/weight", (w, w))
        whole(f"{hf}.q_proj.bias", f"{src}/linear_0/bias", (w,))
        kv = f"{src}/linear_1"
        fused_part(f"{hf}.k_proj.weight", f"{kv}/weight", 0, 2, (w, w))
        key_bias(f"{hf}.k_proj.bias", f"{kv}/bias", 0, 2, w)
        fused_part(f"{hf}.v_proj.weight", f"{kv}/weight", 1, 2, (w, w))
        fused_part(f"{hf}.v_proj.bias", f"{kv}/bias", 1, 2, (w,))
        linear(f"{hf}.out_proj", f"{src}/linear_2", w, w)

    def mlp(hf: str, src: str, w: int) -> None:
        linear(f"{hf}.fc1", f"{src}/linear_0", 4 * w, w)
        linear(f"{hf}.fc2", f"{src}/linear_1", w, 4 * w)

    # Same order as canonical.canonical_tensors (checked below).
    whole("model.encoder.conv1.weight", "encoder/conv1/weight", (d, n_mels, 3))
    whole("model.encoder.conv1.bias", "encoder/conv1/bias", (d,))
    whole("model.encoder.conv2.weight", "encoder/conv2/weight", (d, d, 3))
    whole("model.encoder.conv2.bias", "encoder/conv2/bias", (d,))
    whole("model.encoder.embed_positions.weight", "encoder/position_encodings/encodings", (n_audio_ctx, d))
    for i in range(n_audio_layer):
        hf, src = f"model.encoder.layers.{i}", f"encoder/layer_{i}"
        self_attention(f"{hf}.self_attn", f"{src}/self_attention", d)
        norm(f"{hf}.self_attn_layer_norm", f"{src}/self_attention/layer_norm", d)
        mlp(hf, f"{src}/ffn", d)
        norm(f"{hf}.final_layer_norm", f"{src}/ffn/layer_norm", d)
    norm("model.encoder.layer_norm", "encoder/layer_norm", d)

    whole("model.decoder.embed_tokens.weight", "decoder/embeddings/weight", (n_vocab, t))
    whole("model.decoder.embed_positions.weight", "decoder/position_encodings/encodings", (n_text_ctx, t))
    for i in range(n_text_layer):
        hf, src = f"model.decoder.layers.{i}", f"decoder/layer_{i}"
        self_attention(f"{hf}.self_attn", f"{src}/self_attention", t)
        norm(f"{hf}.self_attn_layer_norm", f"{src}/self_attention/layer_norm", t)
        cross_attention(f"{hf}.encoder_attn", f"{src}/attention", t)
        norm(f"{hf}.encoder_attn_layer_norm", f"{src}/attention/layer_norm", t)
        mlp(hf, f"{src}/ffn", t)
        norm(f"{hf}.final_layer_norm", f"{src}/ffn/layer_norm", t)
    norm("model.decoder.layer_norm", "decoder/layer_norm", t)

    _tied_projection(model, ledger, where, checks)
    canonical.check_plan_against_canonical(tensors, dims, where)
    ledger.require_complete(
        "it is not part of CTranslate2 WhisperSpec revision 3 (an int8 model has '*_scale' "
        "tensors: re-convert with --quantization float16)"
    )

    cfg = _ct2_token_config(ct2_config, config_path)
    stored = sorted({model.resolve(n).dtype for n in model.variables if model.resolve(n).shape})
    return Conversion(
        dims=dims,
        tensors=tensors,
        ledger=ledger,
        checks=checks,
        source_format=f"CTranslate2 {model.spec} rev {model.revision}, {'/'.join(stored)}",
        **cfg,
    )


def _count_layers(model: Ct2Model, side: str, where: str) -> int:
    pattern = re.compile(rf"^{side}/layer_(\d+)/")
    found = {int(m.group(1)) for n in model.names() if (m := pattern.match(n))}
    if not found:
        raise CheckpointError(f"{where}: missing tensor '{side}/layer_0/...': no {side} layers")
    n = max(found) + 1
    missing = sorted(set(range(n)) - found)
    if missing:
        raise CheckpointError(
            f"{where}: missing tensor '{side}/layer_{missing[0]}/...' ({side} has layers up to {n - 1})"
        )
    return n


def _tied_projection(model: Ct2Model, ledger: Ledger, where: str, checks: list) -> None:
    name, emb = "decoder/projection/weight", "decoder/embeddings/weight"
    if name not in model:
        return  # nothing to account for; the tie is implied by Whisper itself
    if model.resolve(name) is model.resolve(emb):
        ledger.use(
            name,
            "model.decoder.embed_tokens.weight",
            reason=f"alias of {emb}: Whisper ties the output projection to the token embedding",
        )
        return
    if model.resolve(name).shape != model.resolve(emb).shape:
        raise CheckpointError(
            f"{where}: wrong shape: tensor '{name}' is {list(model.resolve(name).shape)}, expected the shape of '{emb}'"
        )

    def check() -> None:
        if model.read_bytes(name) != model.read_bytes(emb):
            raise CheckpointError(
                f"{where}: tensor '{name}' differs from '{emb}'; Whisper ties them, an untied "
                "output projection is not supported"
            )

    checks.append((f"{name} equals {emb}", check))
    ledger.use(
        name,
        "model.decoder.embed_tokens.weight",
        reason=f"stored copy of {emb} (checked equal): tied output projection",
    )


def _ct2_token_config(cfg: dict, path: str) -> dict:
    def ints(key: str, required: bool) -> list[int] | None:
        value = cfg.get(key)
        if value is None:
            if required:
                raise CheckpointError(
                    f"{path}: missing '{key}'; Whisper decoding needs it (re-convert with a "
                    "ctranslate2 that writes the Whisper config)"
                )
            return None
        if not isinstance(value, list) or not all(isinstance(x, int) for x in value):
            raise CheckpointError(f"{path}: '{key}' must be a list of integers")
        return list(value)

    heads = cfg.get("alignment_heads")
    notes = []
    if heads is None:
        heads = []
        notes.append(
            f"{path} has no alignment_heads; taken from openai-whisper (model_config.json alignment_heads_source)"
        )
    if not isinstance(heads, list) or not all(
        isinstance(h, list) and len(h) == 2 and all(isinstance(x, int) for x in h) for h in heads
    ):
        raise CheckpointError(f"{path}: 'alignment_heads' must be a list of [layer, head] pairs")
    return {
        "suppress_tokens": ints("suppress_ids", True),
        "begin_suppress_tokens": ints("suppress_ids_begin", True),
        "alignment_heads": [list(h) for h in heads],
        "source_lang_ids": ints("lang_ids", False),
        "notes": notes,
    }
