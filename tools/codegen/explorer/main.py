"""IR explorer: one self-contained HTML page showing what the compiler did for a library, and why.

    ./bazelw run //tools/codegen:explore -- --model tiny --part decoder [--out FILE.html] [--xray FILE]
    explore --outputs DIR --out FILE.html [--xray FILE]              (a compiler output directory)
    explore --circuit F --kernel_maps D --config F [--manifest F] [--variant V] --out FILE.html

`--model/--part` pick a library from `--index` (written by the build, see models/whisper); the
X-ray results default to the X-ray parity test's outputs under bazel-testlogs when it has run.
With --circuit the compiler runs here: a compile that fails still writes the page, showing the
error and the failing edge, and exits 1. Relative paths resolve from where the command was run.
"""

import argparse
import os
import sys

from tools.codegen.explorer import inputs, page, xray
from tools.codegen.explorer.errors import ExploreError


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="explore", description="Write the IR explorer page of a generated library.")
    p.add_argument("--model", help="with --part: a library from --index (e.g. tiny)")
    p.add_argument("--part", help="with --model: e.g. encoder, decoder, frontend")
    p.add_argument("--index", help="JSON naming the libraries --model/--part choose from (the build passes it)")
    p.add_argument("--outputs", help="a compiler output directory (explain.json, ir.json, plan_<phase>.json)")
    p.add_argument("--circuit", help="compile this circuit here (with --kernel_maps, --config)")
    p.add_argument("--kernel_maps", action="append", help="with --circuit: kernel-map file or directory (repeatable)")
    p.add_argument("--config", help="with --circuit: model_config.json")
    p.add_argument("--manifest", help="with --circuit: manifest.json (default: beside --config, if present)")
    p.add_argument("--variant", default="model", help="with --circuit: symbol prefix part")
    p.add_argument(
        "--xray", help="X-ray parity JSON (xray_<variant>.json), a test's outputs.zip or test.outputs folder"
    )
    p.add_argument("--out", help="the HTML file to write (default with --model/--part: explore_<model>_<part>.html)")
    p.add_argument("--quiet", action="store_true", help="print nothing on success (build actions)")
    return p


def _from_index(args) -> tuple[inputs.Library, str | None, str]:
    """The library --model/--part name in the index, and where its X-ray results would be."""
    if not args.index:
        raise ExploreError("--model/--part need --index (run it as ./bazelw run //tools/codegen:explore)")
    index = inputs.read_json(args.index, "the explorer's library index")
    key = f"{args.model}/{args.part}"
    libs = index.get("libraries", {})
    if key not in libs:
        raise ExploreError(
            f"--model {args.model} --part {args.part}: no such library; choose one of {', '.join(sorted(libs))}"
        )
    entry = libs[key]
    here = os.path.dirname(os.path.abspath(args.index))
    lib = inputs.from_outputs(os.path.normpath(os.path.join(here, entry["outputs"])))
    lib.origin = f"bazel-bin/{entry['short_path']}" if entry.get("short_path") else lib.origin
    workspace = os.environ.get("BUILD_WORKSPACE_DIRECTORY", "")
    found, hint = None, ""
    if entry.get("xray_test"):
        logs = os.path.join(
            workspace, "bazel-testlogs", entry["xray_test"]["package"], entry["xray_test"]["name"], "test.outputs"
        )
        if os.path.isdir(logs) and os.listdir(logs):
            found = logs
        else:
            hint = (
                f"no X-ray results yet: run ./bazelw test {entry['xray_test']['label']}, then this command again "
                "(or pass --xray)"
            )
    return lib, found, hint


def run(args) -> tuple[str, dict | None]:
    """Writes the page; returns its path and explain.json's error, if the compile failed."""
    modes = [bool(args.model or args.part), bool(args.outputs), bool(args.circuit)]
    if sum(modes) != 1:
        raise ExploreError("give exactly one of --model/--part, --outputs or --circuit")
    hint = ""
    xray_path = args.xray
    if args.model or args.part:
        if not (args.model and args.part):
            raise ExploreError("--model and --part go together (e.g. --model tiny --part decoder)")
        lib, found, hint = _from_index(args)
        xray_path = xray_path or found
        out = args.out or f"explore_{args.model}_{args.part}.html"
    else:
        if not args.out:
            raise ExploreError("--out FILE.html is required with --outputs or --circuit")
        out = args.out
        if args.outputs:
            lib = inputs.from_outputs(args.outputs)
        else:
            if not args.kernel_maps or not args.config:
                raise ExploreError("--circuit needs --kernel_maps and --config")
            manifest = args.manifest
            beside = os.path.join(os.path.dirname(args.config), "manifest.json")
            if manifest is None and os.path.exists(beside):
                manifest = beside
            lib = inputs.from_compile(args.circuit, args.kernel_maps, args.config, manifest, args.variant)
    xray_data = xray.load(xray_path) if xray_path else None
    html = page.render(lib, xray_data, hint)
    parent = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(parent):
        raise ExploreError(f"--out {out}: the folder {parent} does not exist")
    tmp = out + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(html)
    os.replace(tmp, out)  # never a half-written page
    return out, lib.explain["error"]


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    if args.index:  # a runfiles path, relative to where the binary started
        args.index = os.path.abspath(args.index)
    if os.environ.get("BUILD_WORKING_DIRECTORY"):  # `bazel run`: paths are the user's
        os.chdir(os.environ["BUILD_WORKING_DIRECTORY"])
    try:
        out, error = run(args)
    except ExploreError as e:
        print(f"explore: error: {e}", file=sys.stderr)
        return 1
    if error:
        where = " and the failing edge" if error["edge"] else " and the failing op" if error["op"] else ""
        print(f"explore: error: the compile failed: {error['message']}", file=sys.stderr)
        print(f"explore: wrote {os.path.abspath(out)}: it shows the error{where}", file=sys.stderr)
        return 1
    if not args.quiet:
        print(f"wrote {os.path.abspath(out)}; open it in a browser (file://{os.path.abspath(out)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
