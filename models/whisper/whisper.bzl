"""Whisper model libraries: one generated C library per variant and part.

Starlark cannot read JSON at analysis time, so the variants, parts and phases are listed here;
the kernels come from the registry (//kernels:model_kernels).
"""

load("//tools/codegen:codegen.bzl", "ckw_model_library")
load("//tools/codegen:explorer.bzl", "ckw_explorer_index")

# Variant -> checkpoint repository (ckw/checkpoints, tools/build_defs/whisper_checkpoint.bzl).
VARIANTS = {
    "tiny": "@whisper_tiny",
    "base": "@whisper_base",
}

# Variant -> the published model whose dimensions its fp32 libraries are generated from
# (ckw/checkpoints/layout.py's STANDARD): the libraries never read a checkpoint, and
# serve every checkpoint that packs to that layout (layout_test: the real ones do). A variant
# without a checkpoint repository here (VARIANTS) is proven on seeded weights of its layout
# (//models/whisper:seeded_parity_<variant>_test).
MODELS = {
    "tiny": "tiny.en",
    "tiny_f32": "tiny.en",
    "tiny_multilingual": "tiny",
    "base": "base",
    "base_en": "base.en",
    "base_f32": "base",
    "small": "small",
    "small_en": "small.en",
    "small_f32": "small",
    "medium_l2": "medium",
    "large_v3_l2": "large-v3",
}

# Variant -> "ENCODER,DECODER" layers, for a model tested at its real widths with fewer layers (its
# full depth takes minutes per test on 2 cores). large_v3_l2 also has the shapes of large-v3-turbo
# and distil-large-v3 (the same widths, 128 mel bins, the v3 vocabulary; fewer decoder layers).
LAYERS = {
    "medium_l2": "2,2",
    "large_v3_l2": "2,2",
}

# Variant -> its storage (ckw/checkpoints/storage.py) when not "f16" (published
# checkpoints): "f32" libraries run checkpoints trained in float32 (fine-tunes), which float16
# cannot hold.
STORAGE = {
    "tiny_f32": "f32",
    "base_f32": "f32",
    "small_f32": "f32",
}

# The large models at full depth: libraries and seeded parity tests tagged manual (`//...` skips
# them; `./bazelw test //models/whisper:seeded_parity_large_v3_turbo_test` runs one).
FULL_DEPTH = {
    "medium": "medium",
    "medium_en": "medium.en",
    "large_v2": "large-v2",
    "large_v3": "large-v3",
    "large_v3_turbo": "large-v3-turbo",
    "distil_large_v3": "distil-large-v3",
}

# Precision -> the policy that derives its checkpoint from the variant's fp32 one
# (ckw/checkpoints/precision). fp32 is the converted checkpoint itself: the default and
# the parity build. A precision's libraries are the same circuits compiled against its manifest
# (the manifest's weight dtypes and its precision choose the kernels), named <variant>_<precision>_<part>.
PRECISIONS = {
    "bf16": "//models/whisper:precision_bf16.json",
    "int8": "//models/whisper:precision_int8.json",
}

# The files of a packed checkpoint (ckw/checkpoints/packed.py).
CHECKPOINT_FILES = ["weights.bin", "manifest.json", "model_config.json", "tokenizer.json", "audit.json"]

# Part -> its circuit and phases (the circuit's "phases", in order), and the fp32 variants it is
# built for when not every variant and precision (`only`: what the runtime loads, to spare CI).
PARTS = {
    "encoder": struct(circuit = "//circuits:audio_transformer_encoder.json", phases = ["run"], only = None),
    "decoder": struct(circuit = "//circuits:audio_transformer_decoder.json", phases = ["prefill", "decode", "reorder"], only = None),
    # Many independent sequences per decode step (docs/multi-stream.md): what Engine.transcribe
    # runs, one request or many; `decoder` stays for the one-window path and its own tests.
    "decoder_paged": struct(circuit = "//circuits:audio_transformer_decoder_paged.json", phases = ["prefill", "decode", "copy_blocks", "rank"], only = None),
}

def _built(part, variant, precision = "fp32"):
    only = PARTS[part].only
    return only == None or (precision == "fp32" and variant in only)

# Every registered kernel (kernels/kernel.bzl): the maps the compiler selects providers from
# and the libraries the generated code links. Adding a kernel changes nothing here.
KERNELS = ["//kernels:model_kernels"]

FRONTEND_CIRCUIT = "//circuits:whisper_audio_frontend.json"

# The frontend's phases: a whole WAV file at once, and a stream's blocks (ckw/runtime/audio_stream.py).
FRONTEND_PHASES = ["run", "wav_info", "wav_block", "resample_span", "resample_block", "mel_peak", "mel_block"]

def whisper_precision_checkpoint(name, variant, precision, visibility = None):
    """`<name>/` holding a packed checkpoint (CHECKPOINT_FILES) at `precision`.

    `variant`'s fp32 checkpoint with the tensors PRECISIONS[precision] names narrowed (a build
    action, not a repository).

    Args:
      name: target name, conventionally `<variant>_<precision>_checkpoint`.
      variant: a key of VARIANTS.
      precision: a key of PRECISIONS.
      visibility: visibility of the checkpoint.
    """
    repo = VARIANTS[variant]
    policy = PRECISIONS[precision]
    native.genrule(
        name = name,
        srcs = [repo + "//:checkpoint", repo + "//:manifest.json", policy],
        outs = ["%s/%s" % (name, f) for f in CHECKPOINT_FILES],
        cmd = ("$(execpath //ckw/checkpoints/precision:derive) --quiet --policy $(location %s) " +
               "--source $$(dirname $(location %s//:manifest.json)) --out $(RULEDIR)/%s") % (policy, repo, name),
        tools = ["//ckw/checkpoints/precision:derive"],
        message = "Deriving the %s %s checkpoint" % (variant, precision),
        visibility = visibility,
    )

def whisper_layout(name, model, layers = "", storage = "f16", visibility = None, tags = None):
    """`<name>/model_config.json` (dimensions) and `<name>/manifest.json` (layout, no weights).

    Of the published `model`, written by ckw/checkpoints/layout.py.

    Args:
      name: target name, conventionally `<variant>_layout`.
      model: a key of layout.py's STANDARD, e.g. "tiny.en".
      layers: "ENCODER,DECODER" layer counts at the model's widths; empty: the model's own.
      storage: "f16" (published checkpoints) or "f32" (every tensor float32).
      visibility: visibility of the files.
      tags: of the target.
    """
    native.genrule(
        name = name,
        outs = ["%s/model_config.json" % name, "%s/manifest.json" % name],
        cmd = "$(execpath //ckw/checkpoints:layout) --model %s --layers '%s' --storage %s --out_dir $(RULEDIR)/%s" % (model, layers, storage, name),
        tools = ["//ckw/checkpoints:layout"],
        message = "Writing the layout of %s" % model,
        visibility = visibility,
        tags = tags,
    )

def whisper_model_library(name, variant, part, precision = "fp32", visibility = None, tags = None):
    """Generated C, cc_library and shared library for one Whisper variant, part and precision.

    Exported symbols are `ckw_<variant>_<part>_*` (fp32) or `ckw_<variant>_<precision>_<part>_*`;
    see //tools/codegen:codegen.bzl for targets.

    Args:
      name: target name, conventionally `<variant>_<part>` or `<variant>_<precision>_<part>`.
      variant: a key of VARIANTS.
      part: a key of PARTS.
      precision: "fp32" (the converted checkpoint) or a key of PRECISIONS (its derived
        checkpoint `:<variant>_<precision>_checkpoint`, see whisper_precision_checkpoint).
      visibility: visibility of the public targets.
      tags: tags of the targets (["manual"] for the full-depth models).
    """
    config = ":%s_layout/model_config.json" % variant
    manifest = ":%s_layout/manifest.json" % variant
    prefix_variant = variant
    if precision != "fp32":
        if precision not in PRECISIONS:
            fail("whisper_model_library(%s): precision must be fp32 or one of %s, got %r" % (name, sorted(PRECISIONS), precision))
        manifest = ":%s_%s_checkpoint/manifest.json" % (variant, precision)
        prefix_variant = "%s_%s" % (variant, precision)
    ckw_model_library(
        name = name,
        circuit = PARTS[part].circuit,
        config = config,
        manifest = manifest,
        kernels = KERNELS,
        variant = prefix_variant,
        part = part,
        phases = PARTS[part].phases,
        visibility = visibility,
        tags = tags,
    )

# It declares a family of targets named from MODELS, PARTS and PRECISIONS, none called `name`.
# buildifier: disable=unnamed-macro
def whisper_model_libraries(visibility = None):
    """Every variant x part, its layout and, per precision, its checkpoints and libraries.

    tiny_encoder, tiny_decoder, base_encoder, base_decoder, ... from the layout of the variant's
    dimensions (tiny_layout, base_layout); per precision its checkpoints (tiny_bf16_checkpoint,
    ...) and libraries (tiny_bf16_encoder, ...).

    Args:
      visibility: visibility of every target.
    """
    for variant in sorted(MODELS) + sorted(FULL_DEPTH):
        model = MODELS.get(variant) or FULL_DEPTH[variant]
        tags = ["manual"] if variant in FULL_DEPTH else None
        whisper_layout(
            name = "%s_layout" % variant,
            model = model,
            layers = LAYERS.get(variant, ""),
            storage = STORAGE.get(variant, "f16"),
            visibility = visibility,
            tags = tags,
        )
        for part in [p for p in sorted(PARTS) if _built(p, variant)]:
            whisper_model_library(name = "%s_%s" % (variant, part), variant = variant, part = part, visibility = visibility, tags = tags)
        if variant not in VARIANTS:
            continue
        for precision in sorted(PRECISIONS):
            whisper_precision_checkpoint(
                name = "%s_%s_checkpoint" % (variant, precision),
                variant = variant,
                precision = precision,
                visibility = visibility,
            )
            for part in [p for p in sorted(PARTS) if _built(p, variant, precision)]:
                whisper_model_library(
                    name = "%s_%s_%s" % (variant, precision, part),
                    variant = variant,
                    part = part,
                    precision = precision,
                    visibility = visibility,
                )

def whisper_frontend_library(name, config, variant = "whisper", visibility = None):
    """WAV bytes -> log-mel: the frontend circuit as `ckw_<variant>_frontend_*` (no weights).

    Args:
      name: target name.
      config: a config JSON with `n_mels` (80 up to large-v2, 128 for large-v3 and its kin).
      variant: the symbol prefix's variant (libckw_<variant>_frontend.so).
      visibility: visibility of the public targets.
    """
    ckw_model_library(
        name = name,
        circuit = FRONTEND_CIRCUIT,
        config = config,
        kernels = KERNELS,
        variant = variant,
        part = "frontend",
        phases = FRONTEND_PHASES,
        visibility = visibility,
    )

def whisper_explorer_index(name, frontend, visibility = None):
    """The libraries `//tools/codegen:explore -- --model M --part P` chooses from.

    Every variant x part, and the frontend under each variant; X-ray results from
    //tests/e2e:xray_parity_<variant>_test.

    Args:
      name: target name (writes <name>.json).
      frontend: the whisper_frontend_library target name.
      visibility: visibility of the index.
    """
    libraries = {":%s_%s_c" % (v, p): "%s/%s" % (v, p) for v in sorted(VARIANTS) for p in sorted(PARTS) if PARTS[p].only == None}
    libraries[":%s_c" % frontend] = ",".join(["%s/frontend" % v for v in sorted(VARIANTS)])
    ckw_explorer_index(
        name = name,
        libraries = libraries,
        xray_tests = {v: "//tests/e2e:xray_parity_%s_test" % v for v in VARIANTS},
        visibility = visibility,
    )

def whisper_library_index(name, visibility = None):
    """`<name>.json`: layout_sha256 -> the libraries generated for that layout.

    Every variant and precision here (models/whisper/library_index.py); `<name>` holds it, the
    frontends and the libraries of the variants that serve published models at their real depth
    in `//...` (what //ckw/cli:transcribe runs); `<name>_all` adds the full-depth large models
    (manual).

    Args:
      name: target name.
      visibility: visibility of the targets.
    """
    specs, manifests = [], []
    for variant in sorted(MODELS) + sorted(FULL_DEPTH):
        model = MODELS.get(variant) or FULL_DEPTH[variant]
        manifest = ":%s_layout/manifest.json" % variant
        specs.append("%s=%s=fp32=$(location %s)" % (variant, model, manifest))
        manifests.append(manifest)
        if variant in VARIANTS:
            for precision in sorted(PRECISIONS):
                manifest = ":%s_%s_checkpoint/manifest.json" % (variant, precision)
                specs.append("%s=%s=%s=$(location %s)" % (variant, model, precision, manifest))
                manifests.append(manifest)
    native.genrule(
        name = name + "_json",
        srcs = manifests,
        outs = [name + ".json"],
        cmd = "$(execpath //models/whisper:library_index) --out $@ %s" % " ".join(specs),
        tools = ["//models/whisper:library_index"],
        message = "Indexing the Whisper libraries by layout",
        visibility = visibility,
    )
    served = [v for v in sorted(MODELS) if v not in LAYERS]
    common = [name + ".json", ":libckw_whisper_frontend.so", ":libckw_whisper_128_frontend.so"]
    native.filegroup(
        name = name,
        srcs = common + [":libckw_%s_%s.so" % (v, part) for v in served for part in sorted(PARTS) if _built(part, v)],
        visibility = visibility,
    )

    # With the large models at full depth too (//ckw/cli:transcribe_all; minutes to compile).
    native.filegroup(
        name = name + "_all",
        srcs = [":" + name] + [":libckw_%s_%s.so" % (v, part) for v in sorted(FULL_DEPTH) for part in sorted(PARTS) if PARTS[part].only == None],
        tags = ["manual"],
        visibility = visibility,
    )
