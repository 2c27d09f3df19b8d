"""The converted Silero VAD checkpoint computes what faster-whisper's ONNX model computes.

The packed tensors (their rewritten forms: tap-major conv weights, reordered LSTM gates, summed
biases) are run through a float64 numpy model of circuits/silero_vad.json and compared with
onnxruntime on the original file, window by window with the state carried; bad inputs are refused
with one line and nothing written.
"""

import json
import os
import wave

import numpy as np
import onnxruntime
import pytest

from ckw import runfiles
from ckw.checkpoints.errors import CheckpointError
from ckw.checkpoints.packed import PackedCheckpoint
from models.silero_vad import convert_onnx


def _read_wav(path: str) -> np.ndarray:
    with wave.open(path) as w:
        assert w.getframerate() == 16000 and w.getnchannels() == 1 and w.getsampwidth() == 2
        return np.frombuffer(w.readframes(w.getnframes()), "<i2").astype(np.float32) / 32768.0


def ort_probabilities(onnx_path: str, windows: np.ndarray) -> np.ndarray:
    """faster-whisper's call: [N, 64 + 512] windows with their context, state from zeros."""
    opts = onnxruntime.SessionOptions()
    opts.intra_op_num_threads = opts.inter_op_num_threads = 1
    session = onnxruntime.InferenceSession(onnx_path, sess_options=opts, providers=["CPUExecutionProvider"])
    h = c = np.zeros((1, 1, 128), np.float32)
    out, _, _ = session.run(None, {"input": windows.astype(np.float32), "h": h, "c": c})
    return out.reshape(-1)


def with_context(samples: np.ndarray, window: int, context: int) -> np.ndarray:
    rows = samples.reshape(-1, window)
    prev = np.concatenate([np.zeros((1, context), np.float32), rows[:-1, -context:]])
    return np.concatenate([prev, rows], axis=1)


def reference(ck: PackedCheckpoint, cfg: dict, windows: np.ndarray) -> np.ndarray:
    """The circuit's computation in float64 on the packed tensors."""
    t = {name: ck.tensor(name).astype(np.float64) for name in ck.names()}
    n_fft, hop, frames = cfg["n_fft"], cfg["hop_length"], cfg["frames_per_window"]
    length = windows.shape[1]
    pad = (frames - 1) * hop + n_fft - length
    ext = np.concatenate([windows, windows[:, length - 2 - np.arange(pad)]], axis=1).astype(np.float64)
    x = np.stack([ext[:, f * hop : f * hop + n_fft] for f in range(frames)], axis=1)  # [N, F, n_fft]
    spec = x @ t["stft.basis"].T + t["stft.bias"]
    bins = spec.shape[-1] // 2
    x = np.sqrt(spec[..., :bins] ** 2 + spec[..., bins:] ** 2)  # [N, T, C]
    for i in range(4):
        stride = cfg[f"conv_{i}_stride"]
        n, tin, ch = x.shape
        tout = (tin - 1) // stride + 1
        xp = np.pad(x, ((0, 0), (1, 1), (0, 0)))
        rows = np.stack([xp[:, t0 * stride : t0 * stride + 3].reshape(n, 3 * ch) for t0 in range(tout)], axis=1)
        x = np.maximum(rows @ t[f"conv.{i}.weight"].T + t[f"conv.{i}.bias"], 0)
    gx = x[:, 0] @ t["lstm.weight_ih"].T + t["lstm.bias"]
    hidden = cfg["lstm_hidden"]
    h, c, ys = np.zeros(hidden), np.zeros(hidden), []

    def sig(v):
        return 1 / (1 + np.exp(-v))

    for g in gx:
        g = g + t["lstm.weight_hh"] @ h
        i, f, gg, o = np.split(g, 4)
        c = sig(f) * c + sig(i) * np.tanh(gg)
        h = sig(o) * np.tanh(c)
        ys.append(h)
    logits = np.maximum(np.array(ys), 0) @ t["head.weight"].T + t["head.bias"]
    return sig(logits[:, 0])


@pytest.fixture(scope="module")
def packed(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("vad"))
    audit = convert_onnx.write(convert_onnx.default_onnx(), out)
    assert audit["verdict"].startswith("PASS: 24/24")
    with open(os.path.join(out, "model_config.json")) as f:
        return PackedCheckpoint(out), json.load(f)


@pytest.mark.parametrize("clip", ["jfk.wav", "librispeech/1089-134686-0002.wav"])
def test_reference_matches_onnxruntime(packed, clip):
    ck, cfg = packed
    path = runfiles.locate("test_audio", clip)
    audio = _read_wav(path)
    audio = np.pad(audio, (0, 512 - len(audio) % 512))
    windows = with_context(audio, cfg["window_samples"], cfg["context_samples"])
    ours = reference(ck, cfg, windows)
    theirs = ort_probabilities(convert_onnx.default_onnx(), windows)
    assert ours.shape == theirs.shape
    err = np.abs(ours - theirs).max()
    print(f"{clip}: {len(ours)} windows, max |p - p_ort| = {err:.2e}, speech windows {(theirs > 0.5).sum()}")
    assert err < 1e-5
    assert (theirs > 0.5).any() and (theirs < 0.5).any()  # the clip has both, so the check has teeth


def test_bad_inputs_write_nothing(tmp_path):
    missing = str(tmp_path / "none.onnx")
    with pytest.raises(CheckpointError, match="no such file"):
        convert_onnx.write(missing, str(tmp_path / "out"))
    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"not a model")
    with pytest.raises(CheckpointError, match="not an ONNX model"):
        convert_onnx.write(str(junk), str(tmp_path / "out"))
    assert not (tmp_path / "out").exists() or not os.listdir(tmp_path / "out")


def test_other_graph_is_refused(tmp_path):
    import onnx

    model = onnx.load(convert_onnx.default_onnx())
    model.graph.node[10].op_type = "Sigmoid"  # the first ReLU
    path = str(tmp_path / "changed.onnx")
    onnx.save(model, path)
    with pytest.raises(CheckpointError, match="node 10 is Sigmoid, expected Relu"):
        convert_onnx.write(path, str(tmp_path / "out"))
    assert not (tmp_path / "out").exists() or not os.listdir(tmp_path / "out")
