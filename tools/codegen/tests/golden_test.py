"""Golden diff: the toy circuit's generated C, header, plans and IR match the committed files.

To accept an intended change, regenerate from the workspace root:
    ./bazelw run //tools/codegen -- --circuit tools/codegen/testdata/toy/toy_decoder.json \
        --kernel_maps tools/codegen/testdata/toy/kernels --config tools/codegen/testdata/toy/config.json \
        --variant toy --out_dir tools/codegen/testdata/golden/toy
"""

import difflib
import os

from tools.codegen.compiler import compile_circuit
from tools.codegen.emit import dumps
from tools.codegen.testing.toy import GOLDEN, TOY_ARGS_REL, run_pytest, workspace_root


def generated():
    cwd = os.getcwd()
    os.chdir(workspace_root())  # the stamp names the circuit relative to the workspace
    try:
        r = compile_circuit(
            TOY_ARGS_REL["circuit"],
            TOY_ARGS_REL["kernel_maps"],
            TOY_ARGS_REL["config"],
            TOY_ARGS_REL["manifest"],
            "toy",
        )
    finally:
        os.chdir(cwd)
    files = dict(r.files)
    for p in r.plans:
        files[f"plan_{p['phase']}.json"] = dumps(p)
    return files


def test_matches_golden():
    files = generated()
    assert sorted(files) == sorted(os.listdir(GOLDEN))
    for name, text in sorted(files.items()):
        with open(os.path.join(GOLDEN, name), encoding="utf-8") as f:
            want = f.read()
        if text != want:
            diff = "".join(
                difflib.unified_diff(want.splitlines(True), text.splitlines(True), f"golden/{name}", name, n=2)
            )
            raise AssertionError(f"{name} differs from the golden file:\n{diff[:6000]}")


def test_rebuild_is_byte_identical():
    assert generated() == generated()


def test_stamp_and_prefix():
    files = generated()
    c = files["ckw_toy_decoder.c"]
    assert c.startswith(
        "// Generated from tools/codegen/testdata/toy/toy_decoder.json by //tools/codegen. Do not edit."
    )
    assert (
        "int ckw_toy_decoder_decode(ckw_toy_decoder_handle *h, int32_t tokens, float *logits)"
        in files["ckw_toy_decoder.h"]
    )


if __name__ == "__main__":
    run_pytest(__file__)
