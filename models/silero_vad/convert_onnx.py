"""Silero VAD (the ONNX model faster-whisper ships) -> a packed checkpoint for circuits/silero_vad.json.

    convert_onnx.py --out DIR [--onnx silero_vad_v6.onnx]

Without --onnx the model is the one inside the installed faster-whisper package
(`faster_whisper/assets/silero_vad_v6.onnx`; requirements_lock.txt pins the package). The graph
is read with `onnx` and checked node by node against the structure the circuit computes (any
other graph is refused, naming the node); every initializer is used or ignored with a reason
(audit.json, as the Whisper checkpoints'), and the weights are rewritten into the forms the
circuit's kernels take:

  stft.basis [2 * n_bins, n_fft]   the STFT's stacked cos/sin basis (a GEMM over the frames);
  stft.bias  [2 * n_bins]          zeros, synthesized: the basis convolution has no bias, and a
                                   zero bias is exact and lets it run as an ordinary linear op;
  conv.{i}.weight [Cout, 3 * Cin]  each Conv1d weight [Cout, Cin, 3] with its taps outermost
                                   ([Cout, 3, Cin]), the column order of the im2row kernel;
  conv.{i}.bias [Cout];
  lstm.weight_ih, lstm.weight_hh [4 * H, H], lstm.bias [4 * H]: ONNX's gate blocks (i, o, f, c)
                                   reordered to (i, f, g, o), the two biases summed (float32);
  head.weight [1, H], head.bias [1].

Outputs weights.bin, manifest.json (ckw/checkpoints/packed.py's format),
model_config.json (the dimensions the circuit reads) and audit.json; nothing is left half-written.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys

import numpy as np

from ckw.checkpoints.canonical import Ledger
from ckw.checkpoints.errors import CheckpointError
from ckw.checkpoints.pack import dump, file_sha256, manifest_for, staged, write_weights

VARIANT = "silero_vad"
AUDIT_FORMAT = "ckw-silero-vad-audit-v1"
ONNX_NAME = "silero_vad_v6.onnx"
# What faster-whisper's SileroVADModel feeds the model: 512-sample windows at 16 kHz, each after
# the last 64 samples of the window before it.
SAMPLE_RATE = 16000
WINDOW = 512
CONTEXT = 64
# The op types of the graph, in order: reflect pad, STFT as a strided convolution, magnitude, four
# conv + ReLU layers, the LSTM over the windows, ReLU, a 1x1 conv head and a sigmoid.
EXPECTED_OPS = [
    "Pad",
    "Unsqueeze",
    "Conv",
    "Slice",
    "Slice",
    "Pow",
    "Pow",
    "Add",
    "Sqrt",
    "Conv",
    "Relu",
    "Conv",
    "Relu",
    "Conv",
    "Relu",
    "Conv",
    "Relu",
    "Transpose",
    "LSTM",
    "Squeeze",
    "Relu",
    "Transpose",
    "Conv",
    "Sigmoid",
    "Reshape",
]
# ONNX LSTM gate blocks are (i, o, f, c); the kernel takes PyTorch's (i, f, g, o).
ONNX_TO_TORCH_GATES = (0, 2, 3, 1)


def default_onnx() -> str:
    """The model inside the installed faster-whisper package (found without importing it)."""
    spec = importlib.util.find_spec("faster_whisper")
    if spec is None or not spec.submodule_search_locations:
        raise CheckpointError(f"faster-whisper is not installed: pass --onnx PATH to a {ONNX_NAME}")
    return os.path.join(list(spec.submodule_search_locations)[0], "assets", ONNX_NAME)


def _fail(path: str, what: str) -> CheckpointError:
    return CheckpointError(f"{path}: {what}; this converter reads faster-whisper's {ONNX_NAME} (Silero VAD v6, 16 kHz)")


def _attrs(node) -> dict:
    import onnx

    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def _check_graph(path: str, graph, values: dict) -> dict:
    """Checks the graph computes what circuits/silero_vad.json does; returns its dimensions."""
    ops = [n.op_type for n in graph.node]
    if ops != EXPECTED_OPS:
        first = next((i for i, (a, b) in enumerate(zip(ops, EXPECTED_OPS)) if a != b), min(len(ops), len(EXPECTED_OPS)))
        got = ops[first] if first < len(ops) else "end of graph"
        want = EXPECTED_OPS[first] if first < len(EXPECTED_OPS) else "end of graph"
        raise _fail(path, f"node {first} is {got}, expected {want}")
    nodes = graph.node
    pad = _attrs(nodes[0])
    pads = values[nodes[0].input[1]].tolist()
    if pad.get("mode") != b"reflect" or len(pads) != 4 or pads[0] or pads[2] or pads[1] != pads[3]:
        raise _fail(path, f"the STFT's padding is {pad.get('mode')!r} {pads}, expected reflect [0, p, 0, p]")
    side = int(pads[1])
    basis = values[nodes[2].input[1]]
    stft = _attrs(nodes[2])
    n_fft, hop = int(basis.shape[2]), int(stft["strides"][0])
    n_bins = basis.shape[0] // 2
    if basis.shape[1] != 1 or basis.shape[0] != 2 * n_bins or n_bins != n_fft // 2 + 1:
        raise _fail(path, f"STFT basis {list(basis.shape)} is not [2 * (n_fft / 2 + 1), 1, n_fft]")
    # The two slices take the real and imaginary halves, each from frame 1 on (frame 0 dropped).
    real = [values[n].tolist() for n in nodes[3].input[1:]]
    imag = [values[n].tolist() for n in nodes[4].input[1:]]
    if real[0] != [0, 1] or real[1][0] != n_bins or imag[0] != [n_bins, 1] or real[2] != [1, 2] or imag[2] != [1, 2]:
        raise _fail(
            path, f"the magnitude's slices {real} {imag} are not [0, n_bins) and [n_bins, 2 n_bins) from frame 1"
        )
    padded = CONTEXT + WINDOW + 2 * side
    frames = (padded - n_fft) // hop + 1 - 1  # frame 0 is sliced off
    t, convs = frames, []
    for node in nodes[9:17:2]:
        a = _attrs(node)
        w = values[node.input[1]]
        if a["kernel_shape"] != [3] or a["pads"] != [1, 1] or a.get("group", 1) != 1 or a.get("dilations", [1]) != [1]:
            raise _fail(path, f"conv {node.name} has {a}, expected kernel 3, padding 1, one group")
        stride = int(a["strides"][0])
        t = (t + 2 - 3) // stride + 1
        convs.append((node, w, stride))
    if t != 1:
        raise _fail(path, f"the conv stack leaves {t} frames per window, expected 1")
    lstm = _attrs(nodes[18])
    hidden = int(lstm["hidden_size"])
    if lstm.get("direction", b"forward") != b"forward" or convs[-1][1].shape[0] != hidden:
        raise _fail(path, f"LSTM {lstm} is not one forward layer over the last conv's {convs[-1][1].shape[0]} channels")
    return {
        "sample_rate": SAMPLE_RATE,
        "window_samples": WINDOW,
        "context_samples": CONTEXT,
        "n_fft": n_fft,
        "hop_length": hop,
        "frames_per_window": frames,
        **{f"conv_{i}_stride": s for i, (_, _, s) in enumerate(convs)},
        **{f"conv_{i}_channels": int(w.shape[0]) for i, (_, w, _) in enumerate(convs)},
        "lstm_hidden": hidden,
    }


def convert(onnx_path: str) -> tuple[dict, list[tuple[str, str, np.ndarray]], Ledger, list[dict]]:
    """(model_config, tensors to pack, ledger, synthesized) of the model at `onnx_path`."""
    import onnx
    from onnx import numpy_helper

    if not os.path.isfile(onnx_path):
        raise CheckpointError(f"{onnx_path}: no such file; pass --onnx PATH to a {ONNX_NAME}")
    try:
        model = onnx.load(onnx_path)
    except Exception as e:  # onnx raises DecodeError and friends
        raise CheckpointError(f"{onnx_path}: not an ONNX model ({e}); pass a {ONNX_NAME}") from e
    graph = model.graph
    values = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    ledger = Ledger(onnx_path)
    for name, arr in values.items():
        ledger.add(name, str(arr.dtype), arr.shape)
    dims = _check_graph(onnx_path, graph, values)
    nodes = graph.node

    def take(name: str, target: str, reason: str | None = None) -> np.ndarray:
        ledger.use(name, target, reason)
        arr = values[name]
        if arr.dtype != np.float32:
            raise _fail(onnx_path, f"tensor '{name}' is {arr.dtype}, expected float32")
        return arr

    tensors = []
    basis = take(nodes[2].input[1], "stft.basis")
    tensors.append(("stft.basis", basis.reshape(basis.shape[0], basis.shape[2])))
    tensors.append(("stft.bias", np.zeros(basis.shape[0], np.float32)))
    synthesized = [
        {
            "name": "stft.bias",
            "shape": [int(basis.shape[0])],
            "reason": "the STFT basis convolution has no bias; zeros are exact and let it run as a linear op",
        }
    ]
    for i, node in enumerate(nodes[9:17:2]):
        w = take(node.input[1], f"conv.{i}.weight", "taps moved outermost: [Cout, Cin, 3] -> [Cout, 3 * Cin]")
        tensors.append((f"conv.{i}.weight", np.ascontiguousarray(w.transpose(0, 2, 1)).reshape(w.shape[0], -1)))
        tensors.append((f"conv.{i}.bias", take(node.input[2], f"conv.{i}.bias")))
    lstm = nodes[18]
    order = np.concatenate(
        [np.arange(g * dims["lstm_hidden"], (g + 1) * dims["lstm_hidden"]) for g in ONNX_TO_TORCH_GATES]
    )
    gates = "gate blocks (i, o, f, c) reordered to (i, f, g, o)"
    w_ih = take(lstm.input[1], "lstm.weight_ih", gates)[0]
    w_hh = take(lstm.input[2], "lstm.weight_hh", gates)[0]
    b = take(lstm.input[3], "lstm.bias", gates + "; input and recurrent biases summed in float32")[0]
    hidden4 = w_ih.shape[0]
    tensors.append(("lstm.weight_ih", np.ascontiguousarray(w_ih[order])))
    tensors.append(("lstm.weight_hh", np.ascontiguousarray(w_hh[order])))
    tensors.append(("lstm.bias", (b[:hidden4] + b[hidden4:])[order].astype(np.float32)))
    head = nodes[22]
    w = take(head.input[1], "head.weight")
    tensors.append(("head.weight", np.ascontiguousarray(w.reshape(w.shape[0], w.shape[1]))))
    tensors.append(("head.bias", take(head.input[2], "head.bias")))
    for name in values:
        if ledger.entries[name].disposition is None:
            ledger.ignore(
                name, "a shape, axis or exponent constant of the graph, checked against the circuit's structure"
            )
    ledger.require_complete("the model is not the one this converter reads")
    return dims, [(n, "f32", np.ascontiguousarray(a, dtype=np.float32)) for n, a in tensors], ledger, synthesized


def write(onnx_path: str, out_dir: str) -> dict:
    dims, tensors, ledger, synthesized = convert(onnx_path)
    with staged(out_dir, ("weights.bin", "model_config.json", "audit.json", "manifest.json")) as tmp:
        entries, nbytes, weights_sha = write_weights(tensors, os.path.join(tmp, "weights.bin"))
        manifest = manifest_for(entries, nbytes, weights_sha, VARIANT)
        config = {
            **dims,
            "variant": VARIANT,
            "source": os.path.basename(onnx_path),
            "manifest_sha256": manifest["manifest_sha256"],
        }
        entries_ = list(ledger.entries.values())
        used = sum(1 for e in entries_ if e.disposition == "used")
        audit = {
            "format": AUDIT_FORMAT,
            "variant": VARIANT,
            "source_files": [
                {
                    "path": os.path.abspath(onnx_path),
                    "nbytes": os.path.getsize(onnx_path),
                    "sha256": file_sha256(onnx_path),
                }
            ],
            "source_tensors": [
                {
                    "name": e.name,
                    "dtype": e.dtype,
                    "shape": list(e.shape),
                    "disposition": e.disposition,
                    "targets": e.targets,
                    "reason": e.reason,
                }
                for e in entries_
            ],
            "synthesized": synthesized,
            "manifest_sha256": manifest["manifest_sha256"],
            "verdict": (
                f"PASS: {len(entries_)}/{len(entries_)} source entries accounted for (100%): {used} used, "
                f"{len(entries_) - used} ignored with reason; {len(entries)} output tensors, "
                f"{len(synthesized)} synthesized with reason"
            ),
        }
        dump(os.path.join(tmp, "manifest.json"), manifest)
        dump(os.path.join(tmp, "model_config.json"), config)
        dump(os.path.join(tmp, "audit.json"), audit)
    return audit


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="directory to write the packed checkpoint into")
    parser.add_argument("--onnx", help=f"the {ONNX_NAME} to convert (default: faster-whisper's)")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    try:
        audit = write(args.onnx or default_onnx(), args.out)
    except CheckpointError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    if not args.quiet:
        print(audit["verdict"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
