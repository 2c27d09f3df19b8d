"""ckw_f32_complex_magnitude against onnxruntime, bit for bit: the graph Silero VAD's ONNX model
computes its spectrum magnitude with (Slice, Pow(., 2), Add, Sqrt in float32), over magnitudes
from subnormal squares to overflowing ones; and against the fused (one-rounding) sum, which it
must not be."""

import numpy as np
import pytest

from kernels.common import kernel_testing as kt

KERNEL = kt.Kernel("kernels/audio/f32_complex_magnitude.json")
NB = 129


def magnitude(x):
    rows, nb2 = x.shape
    y = np.full((rows, nb2 // 2), np.nan, np.float32)
    KERNEL.function()(y, kt.f32(x), rows, nb2 // 2)
    return y


@pytest.fixture(scope="module")
def session():
    onnx = pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    h, tp = onnx.helper, onnx.TensorProto
    consts = [h.make_tensor("two", tp.FLOAT, [], [2.0])]
    consts += [h.make_tensor(n, tp.INT64, [1], [v]) for n, v in (("b0", 0), ("b1", NB), ("b2", 2 * NB), ("axis", 1))]
    nodes = [
        h.make_node("Slice", ["x", "b0", "b1", "axis"], ["re"]),
        h.make_node("Slice", ["x", "b1", "b2", "axis"], ["im"]),
        h.make_node("Pow", ["re", "two"], ["re2"]),
        h.make_node("Pow", ["im", "two"], ["im2"]),
        h.make_node("Add", ["re2", "im2"], ["sum"]),
        h.make_node("Sqrt", ["sum"], ["y"]),
    ]
    graph = h.make_graph(
        nodes,
        "magnitude",
        [h.make_tensor_value_info("x", tp.FLOAT, [None, 2 * NB])],
        [h.make_tensor_value_info("y", tp.FLOAT, [None, NB])],
        consts,
    )
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


@pytest.mark.parametrize("scale", [1.0, 1e-3, 3e3, 1e-20, 1e19])
def test_bits_of_onnxruntime(session, scale):
    rng = np.random.default_rng(int(np.log10(scale)) + 40)
    x = (rng.standard_normal((500, 2 * NB)) * scale).astype(np.float32)
    got = magnitude(x)
    want = session.run(None, {"x": x})[0]
    assert want.dtype == np.float32
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


def test_not_fused():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((200, 2 * NB)).astype(np.float32)
    re, im = x[:, :NB].astype(np.float64), x[:, NB:].astype(np.float64)
    # re * re + fl(im * im) with one rounding (an FMA), then sqrt: differs from the kernel somewhere.
    fused = np.sqrt((re * re + (im * im).astype(np.float32)).astype(np.float32))
    separate = np.sqrt((re * re).astype(np.float32) + (im * im).astype(np.float32))
    got = magnitude(x)
    np.testing.assert_array_equal(got, separate)
    assert (got != fused).any()
