"""The compiled Silero VAD (libckw_silero_vad.so) against onnxruntime on faster-whisper's model.

- probabilities: every 512-sample window of the shared audio (16 kHz clips, the 8 kHz file after
  our resampler, the 159 s recording, multilingual clips), framed as faster-whisper frames them,
  within MAX_PROB_ERR of onnxruntime's, and the same speech/non-speech decision at 0.5 wherever
  onnxruntime's probability is not within that error of the threshold;
- X-ray: every edge of the circuit on jfk.wav against the ONNX graph's own intermediate tensors
  (exposed as extra graph outputs), or where the graph has no such tensor against what it is made
  of (the frames: from the ONNX input, the im2row copies: from our own input edge, both exact; the
  LSTM's input projection: float64 of the ONNX tensors);
- streaming: a recording fed in uneven blocks gives bit for bit the probabilities of one call
  (state and context carried by the library), and reset starts over.
"""

import numpy as np
import onnx
import onnxruntime
import pytest

from ckw import runfiles
from ckw.runtime import audio_stream
from ckw.runtime.engine import Frontend
from ckw.runtime.vad import SileroVad
from models.silero_vad import convert_onnx

# Probabilities are sigmoids of a logit computed in float32 on both sides with different
# summation orders. Measured worst over the clips below (Xeon, AVX-512 paths): 9.0e-6
# (michaelandsickmichael.wav), most clips 4e-7 to 3e-6; the STFT and its magnitude are bit-exact.
MAX_PROB_ERR = 5e-5
# Per edge, as the Whisper X-ray: max|ours - ref| <= MAX_ABS_REL * max|ref| (measured worst 2.8e-6,
# lstm.y; a wrong op, weight or gate order is off by 1e-2 and more).
MAX_ABS_REL = 1e-4
CLIPS = [
    "jfk.wav",
    "long/shakespeare_sonnets_I-III_concat.flac",
    "formats/OSR_us_000_0034_8k.wav",
    "formats/michaelandsickmichael.wav",
    "librispeech/1089-134686-0002.wav",
    "multilingual/fleurs-de-000.ogg",
    "multilingual/test_ja.wav",
]


@pytest.fixture(scope="module")
def vad():
    with SileroVad.from_runfiles(threads=2) as v:
        yield v


@pytest.fixture(scope="module")
def frontend():
    return Frontend(runfiles.locate("ckw", "models/whisper/libckw_whisper_frontend.so"))


def samples_16k(frontend, name: str) -> np.ndarray:
    path = runfiles.locate("test_audio", name)
    source = audio_stream.open_source(frontend.handle, path)
    return np.concatenate(list(audio_stream.resample_16k(frontend.handle, source)))


def faster_whisper_windows(audio: np.ndarray) -> np.ndarray:
    """[N, 64 + 512]: what faster-whisper's SileroVADModel feeds onnxruntime (padding, the zeroed
    last 64 samples, each window after its predecessor's last 64)."""
    padded = np.pad(audio, (0, 512 - len(audio) % 512)).astype(np.float32)
    padded[-64:] = 0
    rows = padded.reshape(-1, 512)
    context = np.concatenate([np.zeros((1, 64), np.float32), rows[:-1, -64:]])
    return np.concatenate([context, rows], axis=1)


def ort_session(extra_outputs=()):
    model = onnx.load(convert_onnx.default_onnx())
    for name in extra_outputs:
        model.graph.output.append(onnx.helper.make_empty_tensor_value_info(name))
    opts = onnxruntime.SessionOptions()
    opts.intra_op_num_threads = opts.inter_op_num_threads = 1
    opts.log_severity_level = 4
    return onnxruntime.InferenceSession(
        model.SerializeToString(), sess_options=opts, providers=["CPUExecutionProvider"]
    )


def ort_run(session, windows, outputs=None):
    zeros = np.zeros((1, 1, 128), np.float32)
    return session.run(outputs, {"input": windows, "h": zeros, "c": zeros})


def test_probabilities_match_onnxruntime(vad, frontend):
    session = ort_session()
    rows = []
    for name in CLIPS:
        audio = samples_16k(frontend, name)
        theirs = ort_run(session, faster_whisper_windows(audio))[0].reshape(-1)
        ours = vad.speech_probabilities(audio)
        assert ours.shape == theirs.shape, name
        err = float(np.abs(ours.astype(np.float64) - theirs).max())
        clear = np.abs(theirs - 0.5) > MAX_PROB_ERR
        flips = int(((ours > 0.5) != (theirs > 0.5))[clear].sum())
        rows.append((name, len(ours), err, int((theirs > 0.5).sum()), flips))
    print(f"\n{'clip':40s} {'windows':>8s} {'max |p - p_ort|':>16s} {'speech':>7s} {'flips':>6s}")
    for name, n, err, speech, flips in rows:
        print(f"{name:40s} {n:8d} {err:16.2e} {speech:7d} {flips:6d}")
    assert all(err <= MAX_PROB_ERR for _, _, err, _, _ in rows), rows
    assert all(flips == 0 for *_, flips in rows), rows
    assert sum(r[3] for r in rows) > 0 and sum(r[1] - r[3] for r in rows) > 0  # speech and not


# Circuit edge -> (ONNX tensor, its view as our [rows, columns] token-major edge).
def _frames_major(a):  # [N, C, T] -> [N * T, C]
    return a.transpose(0, 2, 1).reshape(-1, a.shape[1])


ONNX_EDGES = {
    "magnitude.y": ("/encoder/feature_extractor/Sqrt_output_0", _frames_major),
    **{f"conv{i}.y": (f"/encoder/conv_layers.{i}/Conv_output_0", _frames_major) for i in range(4)},
    **{f"relu{i}.y": (f"/encoder/relu{'_' + str(i) if i else ''}/Relu_output_0", _frames_major) for i in range(4)},
    "lstm.y": ("/decoder/rnn/LSTM_output_0", lambda a: a.reshape(a.shape[0], -1)),
    "head_relu.y": ("/decoder/relu/Relu_output_0", lambda a: a.reshape(a.shape[0], -1)),
    "head.y": ("/decoder/conv1d/Conv_output_0", lambda a: a.reshape(-1, 1)),
    "probability.y": ("speech_probs", lambda a: a.reshape(-1, 1)),
    "lstm.h_out": ("hn", lambda a: a.reshape(-1)),  # the state the call leaves
    "lstm.c_out": ("cn", lambda a: a.reshape(-1)),
}


def _im2row(x, n, stride):
    """[n * Tin, C] -> [n * Tout, 3 * C], kernel 3, padding 1, taps outermost."""
    tin = x.shape[0] // n
    xp = np.pad(x.reshape(n, tin, -1), ((0, 0), (1, 1), (0, 0)))
    tout = (tin - 1) // stride + 1
    return np.stack([xp[:, t * stride : t * stride + 3].reshape(n, -1) for t in range(tout)], 1).reshape(n * tout, -1)


def test_xray_every_edge(vad, frontend):
    audio = samples_16k(frontend, "jfk.wav")
    windows = faster_whisper_windows(audio)
    n = len(windows)
    names = [t for t, _ in ONNX_EDGES.values()] + ["/encoder/feature_extractor/Conv_output_0"]
    values = dict(zip(names, ort_run(ort_session(names), windows, names)))
    ref = {edge: view(values[t]) for edge, (t, view) in ONNX_EDGES.items()}
    conv = values["/encoder/feature_extractor/Conv_output_0"]  # [N, 258, 5]; frame 0 is dropped
    ref["stft.y"] = _frames_major(conv[:, :, 1:])
    ext = np.concatenate([windows, windows[:, 574 - np.arange(64)]], axis=1)
    ref["frames.y"] = np.stack([ext[:, f * 128 : f * 128 + 256] for f in range(4)], 1).reshape(-1, 256)
    ref["frames.ctx_out"] = windows[-1, -64:]  # the context the next call would start from
    w = _checkpoint_tensors()
    ref["lstm_in.y"] = (ref["relu3.y"].astype(np.float64) @ w["lstm.weight_ih"].T + w["lstm.bias"]).astype(np.float32)

    edges = {}
    vad.reset()
    vad.handle.set_tap(lambda edge, data: edges.setdefault(edge, []).append(data.copy()))
    try:
        padded = np.pad(audio, (0, 512 - len(audio) % 512)).astype(np.float32)
        padded[-64:] = 0
        vad.feed(padded)
    finally:
        vad.handle.set_tap()
        vad.reset()
    ours = {edge: np.concatenate(parts) for edge, parts in edges.items()}
    # The im2row copies against the same copy of our own input edge: exact on every path.
    for i, stride in enumerate([1, 2, 2, 1]):
        ref[f"conv{i}_rows.y"] = _im2row(ours["magnitude.y" if i == 0 else f"relu{i - 1}.y"], n, stride)
    print(f"\n{'edge':20s} {'shape':>14s} {'max|err| / max|ref|':>20s}")
    worst = {}
    for edge, r in sorted(ref.items()):
        assert edge in ours, f"no tap for {edge}; taps: {sorted(ours)}"
        o = ours[edge].reshape(r.shape)
        scale = max(float(np.abs(r).max()), 1e-30)
        worst[edge] = float(np.abs(o.astype(np.float64) - r).max()) / scale
        print(f"{edge:20s} {str(r.shape):>14s} {worst[edge]:20.2e}")
    for exact in ("frames.y", "frames.ctx_out", *(f"conv{i}_rows.y" for i in range(4))):
        assert worst[exact] == 0.0, exact
    bad = {e: v for e, v in worst.items() if v > MAX_ABS_REL}
    assert not bad, bad
    assert set(ours) == set(ref), sorted(set(ours) ^ set(ref))  # every tapped edge is checked


def vad_checkpoint() -> str:
    return runfiles.locate("ckw", "models/silero_vad/checkpoint")


def _checkpoint_tensors():
    from ckw.checkpoints.packed import PackedCheckpoint

    ck = PackedCheckpoint(vad_checkpoint())
    return {name: ck.tensor(name).astype(np.float64) for name in ck.names()}


def test_blocks_equal_one_call_and_reset(vad, frontend):
    audio = samples_16k(frontend, "long/shakespeare_sonnets_I-III_concat.flac")
    whole = vad.speech_probabilities(audio)
    padded = np.pad(audio, (0, 512 - len(audio) % 512)).astype(np.float32)
    padded[-64:] = 0
    rng = np.random.default_rng(0)
    cuts = np.sort(rng.choice(np.arange(1, len(padded)), 12, replace=False))
    vad.reset()
    parts = [vad.feed(block) for block in np.split(padded, cuts)]
    assert sum(len(p) for p in parts) == len(whole)
    np.testing.assert_array_equal(np.concatenate(parts), whole)
    # reset forgets the recording: the first window again gets the fresh state's probability
    vad.reset()
    again = vad.feed(padded[: 512 * 40])
    np.testing.assert_array_equal(again, whole[:40])
    vad.reset()
