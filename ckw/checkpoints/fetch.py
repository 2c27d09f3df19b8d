"""Locate, convert and pack one Whisper checkpoint: the program the `whisper_checkpoint`
repository rule runs.

    python -m ckw.checkpoints.fetch --variant tiny --out DIR [--hub-repo owner/name]
    python -m ckw.checkpoints.fetch --variant tiny --out DIR --from PATH   (directory or .pt)

Progress goes to stderr; the last stdout line is a one-line summary the rule prints. On failure
the only stderr line that matters is the last one, `error: ...`, which the rule passes to fail().
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from ckw.checkpoints import sources
from ckw.checkpoints.errors import CheckpointError
from ckw.checkpoints.pack import write_packed


def fetch(
    variant: str,
    out_dir: str,
    hub_repo: str | None = None,
    from_dir: str | None = None,
    log=None,
    check_size: bool = True,
) -> dict:
    """Locate (or take `from_dir`), convert and pack; returns the packer's summary."""
    log = log or (lambda s: print(s, file=sys.stderr, flush=True))
    start = time.monotonic()
    if from_dir:
        src = sources.from_path(
            from_dir, f"local {'directory' if os.path.isdir(from_dir) else 'file'} {os.path.abspath(from_dir)}"
        )
    else:
        src = sources.locate(variant, hub_repo, log)
    log(f"source: {src.description}")
    with sources.open_conversion(src) as conversion:
        want = sources.VARIANTS[variant].d_model
        if check_size and conversion.dims.n_audio_state != want:
            raise CheckpointError(
                f"{src.directory}: d_model is {conversion.dims.n_audio_state} but @whisper_{variant} "
                f"needs a {variant} model (d_model {want}); point {sources.VARIANTS[variant].env} at one"
            )
        summary = write_packed(conversion, src.tokenizer_path, out_dir, variant, src.description, src.files)
    summary["source"] = src.description
    summary["seconds"] = round(time.monotonic() - start, 2)
    return summary


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--variant", required=True, choices=sorted(sources.VARIANTS))
    ap.add_argument("--out", required=True, help="output directory")
    ap.add_argument("--hub-repo", help="Hub id to try before the packages")
    ap.add_argument("--from", dest="from_dir", help="convert this directory or .pt file, skip source selection")
    args = ap.parse_args(argv)
    try:
        s = fetch(args.variant, args.out, args.hub_repo, args.from_dir)
    except CheckpointError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    c = s["counts"]
    print(
        f"whisper {args.variant}: source {s['source']}; {c['source_entries']} source entries "
        f"accounted for ({c['used']} used, {c['ignored']} ignored), {s['tensors']} tensors "
        f"({c['output_synthesized']} synthesized), {s['weights_nbytes'] / 1e6:.1f} MB, "
        f"manifest_sha256 {s['manifest_sha256']}, {s['seconds']} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
