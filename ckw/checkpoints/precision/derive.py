"""Derive a narrower packed checkpoint from a packed fp32 one, as a precision policy says.

    python -m ckw.checkpoints.precision.derive --policy models/whisper/precision_bf16.json \
        --source <dir of the fp32 checkpoint> --out <dir>

Writes the five files of a packed checkpoint (ckw/checkpoints/packed.py) with pack.py's
writer: the tensors the policy names in their new dtype (bf16: rounded to nearest even), the rest
copied bit for bit; the manifest states "precision", what it was derived from and the states the
build stores narrower ("state_dtypes", the policy's `states`); model_config.json is the source's
with the new manifest_sha256; tokenizer.json is copied. On failure: exit status 1, one line on
stderr, nothing left under the output names.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys

from ckw.checkpoints import pack
from ckw.checkpoints.errors import CheckpointError
from ckw.checkpoints.packed import DTYPE, EXACT_DTYPES, SCALE_SUFFIX, PackedCheckpoint
from ckw.checkpoints.precision import bf16, int8
from ckw.checkpoints.precision import policy as policy_lib

AUDIT_FORMAT = "ckw-whisper-derived-audit-v1"
# dtype -> how a float32 tensor is stored: [(name suffix, dtype, array)], the tensor itself first
_NARROW = {
    "bf16": lambda name, x: [("", "bf16", bf16.round_to_bf16(x))],
    "i8": lambda name, x: list(zip(("", SCALE_SUFFIX), ("i8", "f32"), int8.quantize_rows(x, name))),
}
# dtype -> how its values were made (the manifest's derived_from/rounding)
_ROUNDING = {
    "bf16": "round to nearest even; NaN stays NaN",
    "i8": "per output channel: scale = max|row| / 127 (f32), q = round half to even of w / scale in "
    "[-127, 127], stored with its scales as <name>" + SCALE_SUFFIX,
}


def derive(policy_path: str, source: str, out_dir: str, policy_name: str | None = None) -> dict:
    """`policy_name`: how the manifest names the policy (default: its path), the same wherever it
    is read from, so a derivation at run time writes the build's manifest byte for byte."""
    policy = policy_lib.load(policy_path)
    src = PackedCheckpoint(source, verify=True)
    where = os.path.join(source, "manifest.json")
    for e in src.manifest["tensors"]:
        if e["dtype"] not in EXACT_DTYPES:
            raise CheckpointError(f"{where}: tensor '{e['name']}' is {e['dtype']}; derive from the fp32 checkpoint")
    dtypes = policy_lib.assign(policy, src.names(), where)
    variant = src.manifest["variant"]

    def tensors():
        for name in src.names():
            arr = src.tensor(name)
            if dtypes[name] == DTYPE:
                yield name, DTYPE, arr
            else:
                for suffix, dtype, stored in _NARROW[dtypes[name]](name, arr):
                    yield name + suffix, dtype, stored

    with pack.staged(out_dir) as tmp:
        entries, nbytes, weights_sha = pack.write_weights(tensors(), os.path.join(tmp, "weights.bin"))
        # Not "layout_sha256": the generated create() reads the first key of that name in the file.
        derived_from = {
            "source_manifest_sha256": src.manifest_sha256,
            "policy": policy_name or policy_path,
            "rounding": "; ".join(_ROUNDING[d] for d in sorted(policy.dtypes)),
        }
        states = {"state_dtypes": policy.states} if policy.states else {}
        manifest = pack.manifest_for(
            entries, nbytes, weights_sha, variant, precision=policy.precision, derived_from=derived_from, **states
        )
        config = dict(src.config, manifest_sha256=manifest["manifest_sha256"], precision=policy.precision)
        counts = {d: sum(1 for v in dtypes.values() if v == d) for d in sorted(set(dtypes.values()))}
        audit = {
            "format": AUDIT_FORMAT,
            "variant": variant,
            "precision": policy.precision,
            "derived_from": derived_from,
            "policy": policy.dtypes,
            **states,
            "tensor_dtypes": dtypes,
            "counts": counts,
            "manifest_sha256": manifest["manifest_sha256"],
            "verdict": f"DERIVED: {len(dtypes)} tensors ({', '.join(f'{n} {d}' for d, n in counts.items())}) from "
            f"manifest {src.manifest_sha256[:12]}",
        }
        pack.dump(os.path.join(tmp, "manifest.json"), manifest)
        pack.dump(os.path.join(tmp, "model_config.json"), config)
        pack.dump(os.path.join(tmp, "audit.json"), audit)
        shutil.copyfile(os.path.join(source, "tokenizer.json"), os.path.join(tmp, "tokenizer.json"))
    return {"weights_nbytes": nbytes, "manifest_sha256": manifest["manifest_sha256"], "verdict": audit["verdict"]}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="derive", description=__doc__.split("\n")[0])
    p.add_argument("--policy", required=True, help="precision policy JSON")
    p.add_argument("--source", required=True, help="directory of the packed fp32 checkpoint")
    p.add_argument("--out", required=True, help="directory to write the derived checkpoint into")
    p.add_argument("--quiet", action="store_true", help="print nothing on success (build actions)")
    args = p.parse_args(argv)
    try:
        summary = derive(args.policy, args.source, args.out)
    except CheckpointError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    if not args.quiet:
        print(json.dumps(summary, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
