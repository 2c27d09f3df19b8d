"""ckw circuit compiler CLI.

    ./bazelw run //tools/codegen -- --circuit FILE --kernel_maps DIR --config FILE --out_dir DIR
        [--manifest FILE] [--variant NAME] [--check]

Relative paths resolve from where the command was run (BUILD_WORKING_DIRECTORY under
`bazel run`). On failure: exit status 1 and a one-line diagnostic on stderr.
"""

import argparse
import os
import sys

from tools.codegen.compiler import compile_circuit
from tools.codegen.emit import write
from tools.codegen.errors import CompileError


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="codegen", description="Compile a circuit JSON into C.")
    p.add_argument("--circuit", required=True, help="circuit JSON")
    p.add_argument(
        "--kernel_maps",
        required=True,
        action="append",
        help="kernel-map JSON file, or a directory searched for them (repeatable)",
    )
    p.add_argument("--config", required=True, help="checkpoint model_config.json")
    p.add_argument("--manifest", help="checkpoint manifest.json (default: manifest.json next to --config, if present)")
    p.add_argument("--out_dir", help="where .c, .h, plan_<phase>.json and ir.json go")
    p.add_argument("--variant", default="model", help="symbol prefix part: ckw_<variant>_<part>_")
    p.add_argument(
        "--library",
        action="append",
        default=None,
        help="a kernel library the build links (repeatable); selected kernels must come from these",
    )
    p.add_argument("--quiet", action="store_true", help="print nothing on success (build actions)")
    p.add_argument("--check", action="store_true", help="only validate and resolve; write nothing")
    return p


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    if not args.check and not args.out_dir:
        print("error: --out_dir is required unless --check is given", file=sys.stderr)
        return 1
    if os.environ.get("BUILD_WORKING_DIRECTORY"):  # `bazel run`: paths are the user's
        os.chdir(os.environ["BUILD_WORKING_DIRECTORY"])
    manifest = args.manifest
    if manifest is None:
        beside = os.path.join(os.path.dirname(args.config), "manifest.json")
        manifest = beside if os.path.exists(beside) else None
    try:
        result = compile_circuit(
            args.circuit, args.kernel_maps, args.config, manifest, args.variant, args.check, args.library
        )
        if args.check:
            print(f"ok: {args.circuit}: {len(result.plans)} phase(s) resolved")
            return 0
        for name in write(args.out_dir, result.files, result.plans):
            if not args.quiet:
                print(os.path.join(args.out_dir, name))
    except CompileError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
