"""Whisper model libraries: one generated C library per variant and part.

Starlark cannot read JSON at analysis time, so the variants, parts and phases are listed here;
the kernels come from the registry (//kernels:model_kernels).
"""

load("//tools/codegen:codegen.bzl", "ckw_model_library")
load("//tools/codegen:explorer.bzl", "ckw_explorer_index")

# Variant -> checkpoint repository (models/whisper/checkpoint, tools/build_defs/whisper_checkpoint.bzl).
VARIANTS = {
    "tiny": "@whisper_tiny",
    "base": "@whisper_base",
}

# Part -> its circuit and phases (the circuit's "phases", in order).
PARTS = {
    "encoder": struct(circuit = "//circuits:audio_transformer_encoder.json", phases = ["run"]),
    "decoder": struct(circuit = "//circuits:audio_transformer_decoder.json", phases = ["prefill", "decode", "reorder"]),
}

# Every registered kernel (kernels/kernel.bzl): the maps the compiler selects providers from
# and the libraries the generated code links. Adding a kernel changes nothing here.
KERNELS = ["//kernels:model_kernels"]

FRONTEND_CIRCUIT = "//circuits:whisper_audio_frontend.json"

# The frontend's phases: a whole WAV file at once, and a stream's blocks (runtime/audio_stream.py).
FRONTEND_PHASES = ["run", "wav_info", "wav_block", "resample_span", "resample_block", "mel_peak", "mel_block"]

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
        kernels = KERNELS,
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
        kernels = KERNELS,
        variant = "whisper",
        part = "frontend",
        phases = FRONTEND_PHASES,
        visibility = visibility,
    )

def whisper_explorer_index(name, frontend, visibility = None):
    """The libraries `//tools/codegen:explore -- --model M --part P` chooses from: every variant
    x part, and the frontend under each variant; X-ray results from //tests/e2e:xray_parity_<variant>_test.

    Args:
      name: target name (writes <name>.json).
      frontend: the whisper_frontend_library target name.
      visibility: visibility of the index.
    """
    libraries = {":%s_%s_c" % (v, p): "%s/%s" % (v, p) for v in sorted(VARIANTS) for p in sorted(PARTS)}
    libraries[":%s_c" % frontend] = ",".join(["%s/frontend" % v for v in sorted(VARIANTS)])
    ckw_explorer_index(
        name = name,
        libraries = libraries,
        xray_tests = {v: "//tests/e2e:xray_parity_%s_test" % v for v in VARIANTS},
        visibility = visibility,
    )
