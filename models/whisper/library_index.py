"""Writes libraries.json: which generated libraries serve which checkpoint layout.

A checkpoint found at run time (ckw/runtime/checkpoint_store.py) is matched to libraries by its
manifest's layout_sha256, the digest each library's create() checks, so the runtime never maps
model names to libraries by hand: any checkpoint of a built layout (a fine-tune too) finds them.

    library_index --out libraries.json VARIANT=MODEL=PRECISION=MANIFEST ...

VARIANT is the variant (models/whisper/whisper.bzl), MODEL the published model whose dimensions
its libraries were generated from, MANIFEST the manifest.json they were generated against; the
libraries are libckw_<name>_<part>.so, name the variant (fp32) or <variant>_<precision>.
"""

from __future__ import annotations

import argparse
import json
import sys

# n_mels -> the frontend library computing that many mel bins (//models/whisper:frontend*).
FRONTENDS = {80: "models/whisper/libckw_whisper_frontend.so", 128: "models/whisper/libckw_whisper_128_frontend.so"}
CONV1 = "model.encoder.conv1.weight"  # [d_model, n_mels, 3]


def entry(spec: str) -> tuple[str, dict]:
    """(layout_sha256, index entry) of one VARIANT=MODEL=PRECISION=MANIFEST argument."""
    try:
        variant, model, precision, manifest_path = spec.split("=", 3)
    except ValueError:
        raise ValueError(f"{spec!r}: expected VARIANT=MODEL=PRECISION=MANIFEST") from None
    name = variant if precision == "fp32" else f"{variant}_{precision}"
    with open(manifest_path, encoding="utf-8") as f:
        manifest = json.load(f)
    shapes = {t["name"]: t["shape"] for t in manifest["tensors"]}
    dtypes = sorted({t["dtype"] for t in manifest["tensors"]})
    n_mels = shapes[CONV1][1]
    if n_mels not in FRONTENDS:
        raise ValueError(f"{manifest_path}: {n_mels} mel bins; no frontend library computes them ({sorted(FRONTENDS)})")
    return manifest["layout_sha256"], {
        "name": name,
        "variant": variant,
        "model": model,
        "precision": precision,
        "dtypes": dtypes,
        "n_mels": n_mels,
        "frontend": FRONTENDS[n_mels],
        "encoder": f"models/whisper/libckw_{name}_encoder.so",
        "decoder": f"models/whisper/libckw_{name}_decoder.so",
        "decoder_paged": f"models/whisper/libckw_{name}_decoder_paged.so",
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("libraries", nargs="+", help="VARIANT=MODEL=PRECISION=MANIFEST")
    args = parser.parse_args(argv)
    index: dict = {}
    for spec in args.libraries:
        digest, value = entry(spec)
        if digest in index:
            parser.error(f"{value['name']} and {index[digest]['name']} are built for the same layout; keep one")
        index[digest] = value
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump({"format": "ckw-library-index-v1", "layouts": index}, f, indent=2, sort_keys=True)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
