"""Test helpers: paths to the toy circuit and builders for tiny synthetic circuits and maps."""

import json
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOY = os.path.join(ROOT, "testdata", "toy")
GOLDEN = os.path.join(ROOT, "testdata", "golden", "toy")
# Paths as the golden files were generated with (from the workspace root).
TOY_ARGS_REL = dict(
    circuit="tools/codegen/testdata/toy/toy_decoder.json",
    kernel_maps=["tools/codegen/testdata/toy/kernels"],
    config="tools/codegen/testdata/toy/config.json",
    manifest="tools/codegen/testdata/toy/manifest.json",
)


def toy_manifest_with(folder, name: str, **fields) -> str:
    """The toy's manifest.json with `fields` set (a derived build's precision, state_dtypes), as
    `folder`/`name`; its path."""
    with open(os.path.join(TOY, "manifest.json")) as f:
        manifest = json.load(f)
    path = os.path.join(str(folder), name)
    with open(path, "w") as f:
        json.dump(dict(manifest, **fields), f)
    return path


def toy_weights(manifest: dict) -> bytes:
    """The toy library's weights file: random float32 covering every tensor of `manifest` (the
    committed manifest.json's sha256 and xxh64 are of these bytes; regenerate them with
    toy_manifest_hashes when the toy's tensors change)."""
    import numpy as np

    size = max(t["offset"] + t["nbytes"] for t in manifest["tensors"])
    rng = np.random.default_rng(0)
    return (rng.standard_normal(size // 4).astype(np.float32) * 0.5).tobytes()


def toy_manifest_hashes(manifest: dict) -> dict:
    """`manifest` with each tensor's sha256 and xxh64 of toy_weights(), its layout_sha256 and its
    manifest_sha256."""
    import hashlib

    import xxhash

    from ckw.checkpoints.packed import layout_digest, tensors_digest

    data = toy_weights(manifest)
    tensors = [
        dict(
            t,
            sha256=hashlib.sha256(data[t["offset"] : t["offset"] + t["nbytes"]]).hexdigest(),
            xxh64=xxhash.xxh64_hexdigest(data[t["offset"] : t["offset"] + t["nbytes"]]),
        )
        for t in manifest["tensors"]
    ]
    return dict(
        manifest,
        tensors=tensors,
        manifest_sha256=tensors_digest(tensors),
        layout_sha256=layout_digest(tensors, len(data)),
    )


def workspace_root() -> str:
    return os.path.dirname(os.path.dirname(ROOT))


def kmap(kernel, provides, ports, dims, conversion=None, phases=("any",), scratch=None):
    """A kernel map whose ABI passes every port then every dim, in declaration order."""
    abi = [
        {"arg": p, "ctype": ("float *" if s["role"] == "output" else "const float *"), "bind": f"port:{p}"}
        for p, s in ports.items()
    ]
    abi += [{"arg": d, "ctype": "int64_t", "bind": f"dim:{d}"} for d in dims]
    if scratch:
        abi.append({"arg": "scratch", "ctype": "void *", "bind": f"scratch:{scratch}"})
    m = {
        "kernel": kernel,
        "provides": provides,
        "header": f"kernels/test/{kernel}.h",
        "library": f"//kernels/test:{kernel}",
        "dims": list(dims),
        "ports": ports,
        "phases": list(phases),
        "abi": abi,
        "contract": {"kind": "exact"},
    }
    if conversion:
        m["layout_conversion"] = {
            "from_layout": conversion[0],
            "to_layout": conversion[1],
            "value_semantics": "exact",
            "cost": conversion[2],
        }
    return m


def port(role, shape, layout="token_major", placement="arena"):
    return {"role": role, "dtype": "f32", "shape": list(shape), "layout": layout, "placement": placement}


def unary(kernel, provides, in_layout="token_major", out_layout="token_major"):
    return kmap(
        kernel,
        provides,
        {"x": port("input", ["M", "N"], in_layout), "y": port("output", ["M", "N"], out_layout)},
        ["M", "N"],
    )


def converter(kernel, src, dst, cost):
    return kmap(
        kernel,
        f"convert_{kernel}",
        {"x": port("input", ["M", "N"], src), "y": port("output", ["M", "N"], dst)},
        ["M", "N"],
        conversion=(src, dst, cost),
    )


def circuit(ops, outputs=None, externals=None):
    return {
        "circuit": "t",
        "part": "p",
        "dims": {"T": "t", "D": "d"},
        "phases": {"run": {}},
        "externals": externals
        or {"x": {"role": "input", "dtype": "f32", "shape": ["T", "D"], "layout": "token_major"}},
        "outputs": outputs if outputs is not None else {},
        "ops": ops,
    }


def write_case(tmp_path, circuit_data, maps, config=None):
    """Writes a circuit, a kernel-map directory and a config; returns the compile arguments."""
    (tmp_path / "maps").mkdir(exist_ok=True)
    for m in maps:
        (tmp_path / "maps" / f"{m['kernel']}.json").write_text(json.dumps(m))
    (tmp_path / "circuit.json").write_text(json.dumps(circuit_data))
    (tmp_path / "config.json").write_text(json.dumps(config or {"t": 4, "d": 8}))
    return dict(
        circuit_path=str(tmp_path / "circuit.json"),
        kernel_map_paths=[str(tmp_path / "maps")],
        config_path=str(tmp_path / "config.json"),
        manifest_path=None,
        variant="t",
        check_only=True,
    )


def run_pytest(path):
    sys.exit(pytest.main([path, "-q", "-p", "no:cacheprovider"]))
