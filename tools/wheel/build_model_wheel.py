"""Writes a model wheel (//:wheel_model_<name>): a packed checkpoint as the package
`ckw_model_<name>`, which ckw/checkpoints/store.py finds when it is installed, so that
`pip install` is all a machine without the Hugging Face Hub needs.

    build_model_wheel --model tiny.en --module MODULE.bazel --out_dir DIR FILE...

FILE: the packed checkpoint's files (manifest.json, weights.bin, model_config.json, tokenizer.json,
audit.json). The wheel is `ckw_model_<name>-<ckw's version>-py3-none-any.whl`.
"""

import argparse
import os
import sys

from ckw.checkpoints import store
from tools.wheel.build_wheel import WheelError, module_version, write_wheel

REQUIRED = ("manifest.json", "weights.bin", "model_config.json", "tokenizer.json")


def build(model: str, files: list[str], module_bazel: str, out_dir: str) -> str:
    package = store.model_package(model)
    names = {os.path.basename(f): f for f in files}
    missing = [n for n in REQUIRED if n not in names]
    if missing:
        raise WheelError(f"the checkpoint of {model} lacks {', '.join(missing)}; give every file of its directory")
    entries = {}
    for name, path in sorted(names.items()):
        with open(path, "rb") as f:
            entries[f"{package}/{name}"] = f.read()
    entries[f"{package}/__init__.py"] = (
        f'"""The packed checkpoint of Whisper {model} for ckw: `ckw --model {model}` finds it here."""\n\n'
        "import os\n\nCHECKPOINT_DIR = os.path.dirname(os.path.abspath(__file__))\n"
    ).encode()
    version = module_version(module_bazel)
    metadata = [
        f"Summary: Whisper {model}'s weights packed for ckw (found by --model {model} when installed)",
        f"Requires-Dist: ckw>={version}",
    ]
    return write_wheel(entries, package, version, "py3-none-any", metadata, out_dir)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--module", required=True, help="MODULE.bazel (the version)")
    parser.add_argument("--out_dir", required=True)
    parser.add_argument("files", nargs="+")
    args = parser.parse_args(argv)
    try:
        print(build(args.model, args.files, args.module, args.out_dir))
    except WheelError as e:
        print(f"build_model_wheel: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
