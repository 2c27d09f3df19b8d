"""Whisper model libraries: one generated C library per variant and part.

Starlark cannot read JSON at analysis time, so the variants, parts, phases and the kernel
maps/libraries the circuits may select are listed here.
"""

load("//tools/codegen:codegen.bzl", "ckw_model_library")

# Variant -> checkpoint repository (models/whisper/checkpoint, tools/build_defs/whisper_checkpoint.bzl).
VARIANTS = {
    "tiny": "@whisper_tiny",
    "base": "@whisper_base",
}

# Part -> its circuit and phases (the circuit's "phases", in order).
PARTS = {
    "encoder": struct(circuit = "//circuits:audio_transformer_encoder.json", phases = ["run"]),
    "decoder": struct(circuit = "//circuits:audio_transformer_decoder.json", phases = ["prefill", "decode"]),
}

# Kernel maps the compiler selects providers from, and the libraries they name (the
# compiler fails the build if it selects a kernel whose library is not listed).
MODEL_KERNEL_MAPS = [
    "//kernels/activation:f32_add.json",
    "//kernels/attention:f32_attention.json",
    "//kernels/conv:f32_conv1d_k3_gelu.json",
    "//kernels/embedding:f32_embedding_positions.json",
    "//kernels/gemm:f32_gemm_nt.json",
    "//kernels/gemm:f32_gemm_nt_bias.json",
    "//kernels/gemm:f32_gemm_nt_bias_gelu.json",
    "//kernels/gemm:f32_gemm_nt_bias_residual.json",
    "//kernels/layout:f32_channel_to_token_major.json",
    "//kernels/layout:f32_head_to_token_major.json",
    "//kernels/layout:f32_token_to_channel_major.json",
    "//kernels/layout:f32_token_to_head_major.json",
    "//kernels/norm:f32_layer_norm.json",
]

MODEL_KERNEL_LIBRARIES = [
    "//kernels/activation:f32_add",
    "//kernels/attention:f32_attention",
    "//kernels/conv:f32_conv1d_k3",
    "//kernels/embedding:f32_embedding_positions",
    "//kernels/gemm:f32_gemm_nt",
    "//kernels/gemm:f32_gemm_nt_bias",
    "//kernels/gemm:f32_gemm_nt_bias_gelu",
    "//kernels/gemm:f32_gemm_nt_bias_residual",
    "//kernels/layout:f32_layout",
    "//kernels/norm:f32_layer_norm",
]

FRONTEND_CIRCUIT = "//circuits:whisper_audio_frontend.json"

FRONTEND_KERNEL_MAPS = [
    "//kernels/audio:f32_log_mel.json",
    "//kernels/audio:f32_mel_filters.json",
    "//kernels/audio:f32_pad_or_truncate.json",
    "//kernels/audio:f32_resample.json",
    "//kernels/audio:f32_stft_power.json",
    "//kernels/audio:f32_stft_tables.json",
    "//kernels/audio:f32_wav_decode.json",
]

FRONTEND_KERNEL_LIBRARIES = [
    "//kernels/audio:f32_log_mel",
    "//kernels/audio:f32_mel_filters",
    "//kernels/audio:f32_pad_or_truncate",
    "//kernels/audio:f32_resample",
    "//kernels/audio:f32_stft_power",
    "//kernels/audio:f32_stft_tables",
    "//kernels/audio:f32_wav_decode",
]

def whisper_model_library(name, variant, part, visibility = None):
    """Generated C, cc_library and shared library for one Whisper variant and part.

    Exported symbols are `ckw_<variant>_<part>_*`; see //tools/codegen:codegen.bzl for targets.

    Args:
      name: target name, conventionally `<variant>_<part>`.
      variant: a key of VARIANTS.
      part: a key of PARTS.
      visibility: visibility of the public targets.
    """
    repo = VARIANTS[variant]
    ckw_model_library(
        name = name,
        circuit = PARTS[part].circuit,
        config = repo + "//:model_config.json",
        manifest = repo + "//:manifest.json",
        kernel_maps = MODEL_KERNEL_MAPS,
        kernel_deps = MODEL_KERNEL_LIBRARIES,
        variant = variant,
        part = part,
        phases = PARTS[part].phases,
        visibility = visibility,
    )

def whisper_model_libraries(visibility = None):
    """Every variant x part: tiny_encoder, tiny_decoder, base_encoder, base_decoder."""
    for variant in sorted(VARIANTS):
        for part in sorted(PARTS):
            whisper_model_library(name = "%s_%s" % (variant, part), variant = variant, part = part, visibility = visibility)

def whisper_frontend_library(name, config, visibility = None):
    """WAV bytes -> log-mel: the frontend circuit as `ckw_whisper_frontend_*` (no weights).

    Args:
      name: target name.
      config: a config JSON with `n_mels` (80 for tiny and base).
      visibility: visibility of the public targets.
    """
    ckw_model_library(
        name = name,
        circuit = FRONTEND_CIRCUIT,
        config = config,
        kernel_maps = FRONTEND_KERNEL_MAPS,
        kernel_deps = FRONTEND_KERNEL_LIBRARIES,
        variant = "whisper",
        part = "frontend",
        phases = ["run"],
        visibility = visibility,
    )
