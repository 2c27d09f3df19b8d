"""ckw_f32_stream_frames (the map's oracle_elsewhere) against numpy and torch: faster-whisper's
SileroVADModel windows (its own __call__, the ONNX session replaced by one that records its
input) reflect-padded with numpy.pad and framed; torch.cat + F.pad(mode='reflect') + unfold over
several geometries; in place and streamed in pieces, bit for bit."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from kernels.common import kernel_testing as kt

KERNEL = kt.Kernel("kernels/audio/f32_stream_frames.json")
SILERO = dict(W=512, C=64, FL=256, H=128, P=64, NF=4)


def frames(x, ctx, g, ctx_out=None):
    """(y, ctx_out) from the kernel; ctx_out=ctx runs it in place."""
    n = x.size // g["W"]
    y = np.full((n * g["NF"], g["FL"]), np.nan, np.float32)
    out = np.full(g["C"], np.nan, np.float32) if ctx_out is None else ctx_out
    KERNEL.function()(y, out, kt.f32(x), ctx, n, g["W"], g["C"], g["FL"], g["H"], g["P"], g["NF"])
    return y, out


def numpy_frames(rows, g):
    """numpy.pad(mode='reflect') on the right of each row, then frames of FL at hop H."""
    ext = np.pad(rows, ((0, 0), (0, g["P"])), mode="reflect")
    windows = np.lib.stride_tricks.sliding_window_view(ext, g["FL"], axis=1)[:, :: g["H"]]
    assert windows.shape[1] == g["NF"]
    return windows.reshape(-1, g["FL"])


def torch_frames(x, ctx, g):
    s = torch.cat([torch.from_numpy(ctx), torch.from_numpy(x)])
    rows = s.unfold(0, g["C"] + g["W"], g["W"])
    ext = F.pad(rows[:, None], (0, g["P"]), mode="reflect")[:, 0]
    return ext.unfold(1, g["FL"], g["H"]).reshape(-1, g["FL"]).numpy(), s[x.size :].numpy()


class _Recorder:
    """Stands in for SileroVADModel's onnxruntime session: records the windows it is given."""

    def __init__(self):
        self.inputs = []

    def run(self, _names, feed):
        self.inputs.append(feed["input"].copy())
        return np.zeros((feed["input"].shape[0], 1), np.float32), feed["h"], feed["c"]


@pytest.mark.parametrize("n_windows", [1, 2, 7, 40])
def test_faster_whisper_silero_windows(n_windows):
    from faster_whisper.vad import SileroVADModel

    rng = np.random.default_rng(n_windows)
    audio = rng.uniform(-1, 1, n_windows * 512).astype(np.float32)
    model = SileroVADModel.__new__(SileroVADModel)  # no ONNX model: only its framing is under test
    model.session = _Recorder()
    model(audio.copy())  # __call__ writes into its argument (below)
    rows = np.concatenate(model.session.inputs)
    assert rows.shape == (n_windows, 576)
    ctx = np.zeros(64, np.float32)  # a stream's start
    y, ctx_out = frames(audio, ctx, SILERO)
    want = numpy_frames(rows, SILERO)
    # Every window but the last is framed as faster-whisper frames it. Its __call__ zeroes the
    # last window's final 64 samples (`context[-1] = 0` writes through a view of the audio), so
    # the last window matches once the input has those zeros too.
    last = (n_windows - 1) * 4
    np.testing.assert_array_equal(y[:last], want[:last])
    quirk = audio.copy()
    quirk[-64:] = 0
    y_quirk, _ = frames(quirk, ctx, SILERO)
    np.testing.assert_array_equal(y_quirk, want)
    np.testing.assert_array_equal(ctx_out, audio[-64:])


GEOMETRIES = [
    SILERO,
    dict(W=256, C=32, FL=128, H=64, P=32, NF=4),  # Silero at 8 kHz
    dict(W=4, C=10, FL=5, H=2, P=3, NF=7),  # C > W
    dict(W=6, C=0, FL=4, H=2, P=2, NF=3),
    dict(W=3, C=2, FL=9, H=1, P=4, NF=1),  # P == C + W - 1
    dict(W=5, C=3, FL=2, H=3, P=3, NF=4),  # hop > frame
]


@pytest.mark.parametrize("g", GEOMETRIES, ids=lambda g: "W{W}_C{C}_F{FL}_H{H}_P{P}".format(**g))
@pytest.mark.parametrize("n", [0, 1, 3, 9])
def test_matches_torch(g, n):
    assert (g["NF"] - 1) * g["H"] + g["FL"] == g["C"] + g["W"] + g["P"]
    rng = np.random.default_rng(n * 100 + g["W"])
    x = rng.standard_normal(n * g["W"]).astype(np.float32)
    ctx = rng.standard_normal(g["C"]).astype(np.float32)
    ctx_before = ctx.copy()
    y, ctx_out = frames(x, ctx, g)
    np.testing.assert_array_equal(ctx, ctx_before)
    if n == 0:
        assert y.shape == (0, g["FL"])
        np.testing.assert_array_equal(ctx_out, ctx)
    else:
        want_y, want_ctx = torch_frames(x, ctx, g)
        np.testing.assert_array_equal(y, want_y)
        np.testing.assert_array_equal(ctx_out, want_ctx)
    # In place: ctx and ctx_out one buffer, as the circuit's persistent state binds them.
    state = ctx.copy()
    y2, _ = frames(x, state, g, ctx_out=state)
    np.testing.assert_array_equal(y2, y)
    np.testing.assert_array_equal(state, ctx_out)


@pytest.mark.parametrize("g", GEOMETRIES, ids=lambda g: "W{W}_C{C}_F{FL}_H{H}_P{P}".format(**g))
def test_streamed_in_pieces_equals_one_call(g):
    rng = np.random.default_rng(g["W"] + g["C"])
    pieces = [3, 0, 1, 5, 2, 0, 1]
    x = rng.standard_normal(sum(pieces) * g["W"]).astype(np.float32)
    state = np.zeros(g["C"], np.float32)
    whole, whole_ctx = frames(x, state.copy(), g)
    got, at = [], 0
    for p in pieces:
        y, _ = frames(x[at * g["W"] : (at + p) * g["W"]], state, g, ctx_out=state)
        got.append(y)
        at += p
    np.testing.assert_array_equal(np.concatenate(got), whole)
    np.testing.assert_array_equal(state, whole_ctx)
