"""bf16 rounding (nearest even, NaN-safe), the precision policy (what it names, refusals) and the
derived checkpoint (verified by ckw/runtime/checkpoint_check.py, f32 tensors copied bit for bit, the
named ones rounded), on a synthetic Whisper checkpoint and the real tiny manifest's names; the
derivation at run time into the cache (byte for byte the build's tiny bf16 checkpoint) and the
check that the build has libraries at that precision for a checkpoint's architecture."""

import filecmp
import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from ckw import runfiles
from ckw.checkpoints import synthetic
from ckw.checkpoints.errors import CheckpointError
from ckw.checkpoints.fetch import fetch
from ckw.checkpoints.packed import PackedCheckpoint, runfiles_checkpoint_dir
from ckw.checkpoints.precision import bf16, derive, derived, int8, policy
from ckw.runtime import libraries
from ckw.runtime.checkpoint_check import CheckpointFiles
from ckw.runtime.errors import EngineError

POLICY = "models/whisper/precision_bf16.json"
POLICY_INT8 = "models/whisper/precision_int8.json"


def f32(bits):
    return np.array(bits, dtype="<u4").view("<f4")


def test_rounding_ties_go_to_even():
    # 1 + 2^-8 is halfway between bf16 1.0 (0x3F80) and 0x3F81: even 0x3F80; 1 + 3 * 2^-8 is halfway
    # between 0x3F81 and 0x3F82: even 0x3F82. Just above / below halfway round up / down.
    x = f32([0x3F808000, 0x3F818000, 0x3F808001, 0x3F807FFF, 0xBF818000, 0x00008000, 0x00018000])
    assert bf16.round_to_bf16(x).tolist() == [0x3F80, 0x3F82, 0x3F81, 0x3F80, 0xBF82, 0x0000, 0x0002]


def test_rounding_is_nearest_on_random_values():
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(100_000) * np.exp2(rng.integers(-60, 60, 100_000))).astype(np.float32)
    b = bf16.round_to_bf16(x)
    got = bf16.widen(b).astype(np.float64)
    down = bf16.widen((x.view("<u4") >> 16).astype("<u2")).astype(np.float64)  # truncation: one neighbour
    up = bf16.widen(((x.view("<u4") >> 16) + 1).astype("<u2")).astype(np.float64)  # the other
    err = np.abs(got - x)
    assert np.all(err <= np.minimum(np.abs(down - x), np.abs(up - x)))
    assert np.all(np.abs(got - x) <= np.abs(x) * 2.0**-8)


def test_nan_inf_and_overflow():
    x = f32([0x7F800001, 0xFF800001, 0x7FC00000, 0x7F800000, 0xFF800000, 0x7F7FFFFF, 0x7F7F0000])
    b = bf16.round_to_bf16(x)
    assert np.isnan(bf16.widen(b[:3])).all()  # a NaN whose payload is only in the low bits stays NaN
    assert b[0] >> 15 == 0 and b[1] >> 15 == 1  # with its sign
    assert b[3:].tolist() == [0x7F80, 0xFF80, 0x7F80, 0x7F7F]  # inf stays, max float rounds to inf


@pytest.fixture(scope="module")
def fp32_checkpoint(tmp_path_factory):
    """A small Whisper checkpoint converted and packed as @whisper_tiny is (real tensor names)."""
    tmp = tmp_path_factory.mktemp("ckpt")
    hf = synthetic.hf_tensors(synthetic.SMALL, seed=3)
    src = synthetic.write_ct2_dir(
        str(tmp / "ct2"),
        synthetic.ct2_variables(hf, synthetic.SMALL),
        {"decoder/projection/weight": "decoder/embeddings/weight"},
    )
    fetch("tiny", str(tmp / "fp32"), from_dir=src, log=lambda s: None, check_size=False)
    return str(tmp / "fp32")


def test_derived_checkpoint_verifies_and_rounds_only_what_the_policy_names(fp32_checkpoint, tmp_path):
    out = str(tmp_path / "bf16")
    derive.derive(POLICY, fp32_checkpoint, out)
    files = CheckpointFiles(out, "tiny")
    files.verify_weights()  # layout, 64-byte alignment, every sha256 and xxh64, the digest
    src, got = PackedCheckpoint(fp32_checkpoint), PackedCheckpoint(out)
    m = got.manifest
    assert m["precision"] == "bf16" and m["derived_from"]["source_manifest_sha256"] == src.manifest_sha256
    with open(os.path.join(out, "manifest.json")) as f:  # the generated create() reads the first such key
        text = f.read()
    assert re.search(r'"layout_sha256":\s*"([0-9a-f]{64})"', text).group(1) == m["layout_sha256"]
    assert m["layout_sha256"] != src.manifest["layout_sha256"]  # bf16 storage: another layout, its own libraries
    assert files.config["manifest_sha256"] == m["manifest_sha256"] != src.manifest_sha256
    assert all(e["offset"] % 64 == 0 for e in m["tensors"])
    narrow = {e["name"] for e in m["tensors"] if e["dtype"] == "bf16"}
    assert "model.decoder.embed_tokens.weight" in narrow and "model.encoder.layers.1.fc2.weight" in narrow
    for e in m["tensors"]:
        raw = np.frombuffer(got.raw(e["name"]), dtype="<u2" if e["name"] in narrow else "<f4")
        want = src.tensor(e["name"]).reshape(-1)
        if e["name"] in narrow:
            assert e["nbytes"] == 2 * int(np.prod(e["shape"]))  # the source may hold it as f32 or exact f16
            assert np.array_equal(raw, bf16.round_to_bf16(want))
            assert np.array_equal(got.tensor(e["name"]).reshape(-1), bf16.widen(raw))  # the reader widens
        else:
            assert np.array_equal(raw.view("<u4"), want.view("<u4")), e["name"]  # copied bit for bit
    with (
        open(os.path.join(out, "tokenizer.json"), "rb") as a,
        open(os.path.join(fp32_checkpoint, "tokenizer.json"), "rb") as b,
    ):
        assert a.read() == b.read()


def test_int8_rows_are_symmetric_round_half_even_with_their_scale():
    # Row 1: scale 15.875 / 127 = 1/8 exactly, so 0.5, 1.5 and 2.5 steps are exact ties.
    x = np.array([[0.0, 0.0, 0.0, 0.0], [15.875, -0.1875, 0.3125, 0.0625], [-2.54, 0.01, 0.03, 1.0]], dtype=np.float32)
    q, scale = int8.quantize_rows(x, "w")
    assert q.dtype == np.int8 and scale.dtype == np.float32 and scale.shape == (3,)
    assert scale[0] == 0 and not q[0].any()  # a row of zeros
    assert np.abs(q).max(axis=1)[1:].tolist() == [127, 127]  # each row's largest value is +-127
    assert scale[1] == 0.125 and q[1].tolist() == [127, -2, 2, 0]  # ties to even
    rng = np.random.default_rng(1)
    w = (rng.standard_normal((64, 96)) * np.exp2(rng.integers(-8, 8, (64, 1)))).astype(np.float32)
    q, scale = int8.quantize_rows(w, "w")
    err = np.abs(int8.dequantize_rows(q, scale).astype(np.float64) - w)
    assert np.all(err <= scale[:, None].astype(np.float64) * 0.5 * (1 + 1e-6))  # half a step at most
    with pytest.raises(CheckpointError, match="^tensor w: holds NaN or infinity"):
        int8.quantize_rows(np.array([[1.0, np.nan]], dtype=np.float32), "w")


def test_int8_checkpoint_stores_each_linear_weight_with_its_scales(fp32_checkpoint, tmp_path):
    out = str(tmp_path / "int8")
    derive.derive(POLICY_INT8, fp32_checkpoint, out)
    CheckpointFiles(out, "tiny").verify_weights()
    src, got = PackedCheckpoint(fp32_checkpoint), PackedCheckpoint(out)
    dtypes = {e["name"]: e["dtype"] for e in got.manifest["tensors"]}
    narrow = sorted(n for n, d in dtypes.items() if d == "i8")
    assert got.manifest["precision"] == "int8" and "model.decoder.embed_tokens.weight" in narrow
    assert sorted(n for n in dtypes if n.endswith(".scale")) == sorted(n + ".scale" for n in narrow)
    for name in narrow:
        q = np.frombuffer(got.raw(name), dtype=np.int8).reshape(got.entries[name]["shape"])
        want_q, want_scale = int8.quantize_rows(src.tensor(name), name)
        assert np.array_equal(q, want_q) and np.array_equal(got.tensor(name + ".scale"), want_scale)
        assert np.array_equal(got.tensor(name), int8.dequantize_rows(q, want_scale))  # the reader's values
    kept = [n for n, d in dtypes.items() if d == "f32" and not n.endswith(".scale")]
    assert kept and all(np.array_equal(got.tensor(n).view("<u4"), src.tensor(n).view("<u4")) for n in kept)


def test_real_policy_names_the_linear_weights_and_token_embedding_only():
    with open(os.path.join(os.environ["TEST_SRCDIR"], "whisper_tiny", "manifest.json")) as f:
        names = [t["name"] for t in json.load(f)["tensors"]]
    dtypes = policy.assign(policy.load(POLICY), names, "tiny")
    narrow = sorted(n for n, d in dtypes.items() if d == "bf16")
    linear = [n for n in names if n.endswith(("_proj.weight", ".fc1.weight", ".fc2.weight"))]
    assert narrow == sorted(linear + ["model.decoder.embed_tokens.weight"])
    assert len(narrow) == 4 * 6 + 4 * 10 + 1
    for kept in (
        "model.encoder.conv1.weight",
        "model.encoder.embed_positions.weight",
        "model.decoder.embed_positions.weight",
        "model.decoder.layers.0.fc1.bias",
        "model.decoder.layer_norm.weight",
    ):
        assert dtypes[kept] == "f32"


def write_policy(tmp_path, patterns):
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"format": policy.FORMAT, "precision": "bf16", "dtypes": {"bf16": patterns}}))
    return str(path)


def test_a_pattern_that_matches_nothing_is_refused_naming_the_policy(fp32_checkpoint, tmp_path):
    path = write_policy(tmp_path, ["model.decoder.embed_tokens.weight", "model.decoder.lm_head.weight"])
    with pytest.raises(CheckpointError) as e:
        derive.derive(path, fp32_checkpoint, str(tmp_path / "out"))
    msg = str(e.value)
    assert msg.startswith(f"{path}: /dtypes/bf16/1: pattern 'model.decoder.lm_head.weight' matches no tensor of ")
    assert "\n" not in msg
    assert not os.path.exists(tmp_path / "out" / "manifest.json")


@pytest.mark.parametrize(
    "doc, where",
    [
        ({"format": "x"}, "/format"),
        ({"format": policy.FORMAT, "precision": "bf16", "dtypes": {"f16": ["*"]}}, "/dtypes/f16"),
        ({"format": policy.FORMAT, "precision": "bf16", "dtypes": {"bf16": []}}, "/dtypes/bf16"),
        ({"format": policy.FORMAT, "precision": "bf16", "dtypes": {"bf16": ["*"]}, "extra": 1}, "/extra"),
        (
            {"format": policy.FORMAT, "precision": "bf16", "dtypes": {"bf16": ["*"]}, "states": {"i8": ["cross_k"]}},
            "/states/i8",
        ),
        (
            {"format": policy.FORMAT, "precision": "bf16", "dtypes": {"bf16": ["*"]}, "states": {"f16": ["cross k"]}},
            "/states/f16",
        ),
        (
            {
                "format": policy.FORMAT,
                "precision": "bf16",
                "dtypes": {"bf16": ["*"]},
                "states": {"bf16": ["cross_k"], "f16": ["cross_k"]},
            },
            "/states/f16: state cross_k is also named under bf16",
        ),
    ],
)
def test_malformed_policies_are_refused(tmp_path, doc, where):
    path = tmp_path / "p.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(CheckpointError, match=f"^{path}: {where}"):
        policy.load(str(path))


def test_cli_error_is_one_line_naming_the_policy(fp32_checkpoint, tmp_path):
    path = write_policy(tmp_path, ["nothing.*"])
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "ckw.checkpoints.precision.derive",
            "--policy",
            path,
            "--source",
            fp32_checkpoint,
            "--out",
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.startswith(f"error: {path}: /dtypes/bf16/0: pattern 'nothing.*'") and r.stderr.count("\n") == 1


def test_the_states_a_policy_narrows_reach_the_manifest(fp32_checkpoint, tmp_path):
    path = tmp_path / "p.json"
    path.write_text(
        json.dumps(
            {
                "format": policy.FORMAT,
                "precision": "bf16",
                "dtypes": {"bf16": ["*.fc1.weight"]},
                "states": {"f16": ["cross_k", "cross_v"]},
            }
        )
    )
    derive.derive(str(path), fp32_checkpoint, str(tmp_path / "out"))
    assert PackedCheckpoint(str(tmp_path / "out")).manifest["state_dtypes"] == {"cross_k": "f16", "cross_v": "f16"}
    derive.derive(write_policy(tmp_path, ["*.fc1.weight"]), fp32_checkpoint, str(tmp_path / "none"))
    assert "state_dtypes" not in PackedCheckpoint(str(tmp_path / "none")).manifest


def test_deriving_from_a_derived_checkpoint_is_refused(fp32_checkpoint, tmp_path):
    derive.derive(POLICY, fp32_checkpoint, str(tmp_path / "bf16"))
    with pytest.raises(CheckpointError, match="is bf16; derive from the fp32 checkpoint"):
        derive.derive(POLICY, str(tmp_path / "bf16"), str(tmp_path / "again"))


def test_derived_at_run_time_equals_the_builds_bf16_checkpoint(tmp_path):
    source = runfiles_checkpoint_dir("tiny")
    logs = []
    out = derived.derived(source, "bf16", log=logs.append, cache_root=str(tmp_path))
    assert out.startswith(str(tmp_path / "derived")) and len(logs) == 1 and "deriving the bf16 weights" in logs[0]
    build = runfiles.locate("ckw", "models/whisper/tiny_bf16_checkpoint")
    for name in ("manifest.json", "weights.bin", "model_config.json", "tokenizer.json", "audit.json"):
        assert filecmp.cmp(os.path.join(out, name), os.path.join(build, name), shallow=False), name
    assert derived.derived(source, "bf16", log=logs.append, cache_root=str(tmp_path)) == out and len(logs) == 1
    assert derived.derived(source, "fp32", cache_root=str(tmp_path)) == source


def test_precision_needs_libraries_of_the_checkpoints_architecture(tmp_path):
    index = libraries.load_index()
    libraries.check_precision(runfiles_checkpoint_dir("tiny"), "bf16", index)  # tiny.en: built
    assert libraries.models_at("bf16", index) == ["base", "tiny.en"]
    f32_storage = next(k for k, e in index.items() if e["name"] == "tiny_f32")
    for layout, what in [(f32_storage, "tiny.en (f32 storage)"), ("0" * 64, "an architecture without libraries")]:
        (tmp_path / "manifest.json").write_text(json.dumps({"layout_sha256": layout}), encoding="utf-8")
        with pytest.raises(EngineError) as e:
            libraries.check_precision(str(tmp_path), "bf16", index)
        assert f"{tmp_path}: {what}; this build has bf16 libraries for base, tiny.en" in str(e.value)
