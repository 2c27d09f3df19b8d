"""Damaged checkpoints are refused when the engine is created, with a message that names the file
and the problem; never a transcript. Other weights of the same layout (a fine-tune) are not
damage: they run on the same libraries.

Each case copies the tiny.en checkpoint into a temporary folder (unchanged files as symlinks),
damages it, and expects Engine(...) to raise EngineError containing the listed text:

  weights.bin, one byte flipped (first, middle, last tensor)  -> "fails the xxh64 checksum"
  weights.bin truncated by 4 bytes                             -> "bytes, but the manifest says"
  weights.bin of the base model                                -> "bytes, but the manifest says"
  manifest.json of the base model                              -> "a checkpoint of base (263 tensors, ...), but
                                                                   the tiny libraries were built for another layout"
  manifest.json with one tensor's offset edited                -> "does not hash to its manifest_sha256"
  manifest.json cut in half                                    -> "not readable JSON"
  tokenizer.json missing                                       -> "tokenizer.json: missing"
  tokenizer.json not JSON                                      -> "not a readable tokenizer.json"
  weights.bin missing                                          -> "weights.bin: missing"
  one byte flipped, with verify_weights (full sha256)          -> names the tensor: "tensor '<name>' fails its sha256"

The flipped byte also goes through the CLI (a runfiles tree whose @whisper_tiny is the damaged
copy): exit 1, one line naming weights.bin, no output file. The intact copy still transcribes.
"""

import hashlib
import json
import os
import subprocess

import numpy as np
import pytest
import xxhash

from ckw import runfiles
from ckw.checkpoints.packed import layout_digest, tensors_digest
from ckw.runtime.engine import Engine, EngineError

ROOT = os.environ["TEST_SRCDIR"]
TINY = os.path.dirname(runfiles.locate("whisper_tiny", "weights.bin"))
BASE = os.path.dirname(runfiles.locate("whisper_base", "weights.bin"))
FILES = ("weights.bin", "manifest.json", "model_config.json", "tokenizer.json", "audit.json")


def libraries():
    return tuple(
        runfiles.locate("ckw", f"models/whisper/libckw_{name}.so")
        for name in ("whisper_frontend", "tiny_encoder", "tiny_decoder", "tiny_decoder_paged")
    )


def checkpoint_copy(folder, replace=None):
    """tiny.en's checkpoint in `folder`: symlinks, except `replace` {name: bytes or None (absent)}."""
    os.makedirs(folder)
    replace = replace or {}
    for name in FILES:
        if name not in replace:
            os.symlink(os.path.join(TINY, name), os.path.join(folder, name))
        elif replace[name] is not None:
            with open(os.path.join(folder, name), "wb") as f:
                f.write(replace[name])
    return str(folder)


def read(folder, name):
    with open(os.path.join(folder, name), "rb") as f:
        return f.read()


def flipped(offset):
    data = bytearray(read(TINY, "weights.bin"))
    data[offset] ^= 0x01
    return bytes(data)


@pytest.fixture(scope="module")
def manifest():
    return json.loads(read(TINY, "manifest.json"))


def tensor_offsets(manifest):
    """A byte in the first, a middle and the last tensor (encoder and decoder both read some)."""
    t = manifest["tensors"]
    return [(t[i]["name"], t[i]["offset"] + t[i]["nbytes"] // 2) for i in (0, len(t) // 2, len(t) - 1)]


def edited_manifest():
    m = json.loads(read(TINY, "manifest.json"))
    m["tensors"][3]["offset"] += 64  # manifest_sha256 left as it was
    return json.dumps(m).encode()


def refused(folder, verify_weights=False):
    with pytest.raises(EngineError) as e:
        Engine("tiny", *libraries(), folder, verify_weights=verify_weights)
    message = str(e.value)
    assert "\n" not in message
    print(message)
    return message


def test_intact_copy_transcribes(tmp_path):
    with Engine("tiny", *libraries(), checkpoint_copy(tmp_path / "ok")) as engine:
        text = engine.transcribe_long(read(os.path.join(ROOT, "test_audio"), "jfk.wav"))["text"]
    assert "ask not what your country can do for you" in text


def test_flipped_bytes(tmp_path, manifest):
    for i, (name, offset) in enumerate(tensor_offsets(manifest)):
        folder = checkpoint_copy(tmp_path / str(i), {"weights.bin": flipped(offset)})
        message = refused(folder)
        assert message.startswith(f"{folder}/weights.bin: ") and "fails the xxh64 checksum" in message, (name, message)
        assert "./bazelw sync --only=whisper_tiny" in message


@pytest.mark.parametrize(
    "case,replace,text",
    [
        (
            "truncated",
            lambda: {"weights.bin": read(TINY, "weights.bin")[:-4]},
            "weights.bin: 78197756 bytes, but the manifest says",
        ),
        ("base_weights", lambda: {"weights.bin": read(BASE, "weights.bin")}, "bytes, but the manifest says"),
        (
            "base_manifest",
            lambda: {"manifest.json": read(BASE, "manifest.json")},
            "a checkpoint of base (263 tensors, 149222400 bytes), but the tiny libraries were built for another layout",
        ),
        ("edited_manifest", lambda: {"manifest.json": edited_manifest()}, "does not hash to its manifest_sha256"),
        (
            "cut_manifest",
            lambda: {"manifest.json": read(TINY, "manifest.json")[:1000]},
            "manifest.json: not readable JSON",
        ),
        ("no_tokenizer", lambda: {"tokenizer.json": None}, "tokenizer.json: missing"),
        ("bad_tokenizer", lambda: {"tokenizer.json": b'{"model": 1'}, "not a readable tokenizer.json"),
        ("no_weights", lambda: {"weights.bin": None}, "weights.bin: missing"),
    ],
)
def test_refused(tmp_path, case, replace, text):
    if case == "truncated":
        assert os.path.getsize(os.path.join(TINY, "weights.bin")) == 78197760, "update the expected size"
    message = refused(checkpoint_copy(tmp_path / case, replace()))
    assert text in message and "rebuild it" in message, message


def fine_tuned(manifest):
    """tiny.en with the decoder's final layer norm gain scaled by 1.05 (a float32 tensor, so the
    values stay exact): weights.bin and the manifest that records them (digests redone)."""
    data = bytearray(read(TINY, "weights.bin"))
    entry = next(t for t in manifest["tensors"] if t["name"] == "model.decoder.layer_norm.weight")
    assert entry["dtype"] == "f32", entry
    lo, hi = entry["offset"], entry["offset"] + entry["nbytes"]
    data[lo:hi] = (np.frombuffer(bytes(data[lo:hi]), "<f4") * np.float32(1.05)).astype("<f4").tobytes()
    tensors = [
        dict(t, sha256=hashlib.sha256(data[lo:hi]).hexdigest(), xxh64=xxhash.xxh64_hexdigest(bytes(data[lo:hi])))
        if t is entry
        else t
        for t in manifest["tensors"]
    ]
    tuned = dict(
        manifest,
        tensors=tensors,
        manifest_sha256=tensors_digest(tensors),
        weights_sha256=hashlib.sha256(data).hexdigest(),
    )
    assert tuned["layout_sha256"] == layout_digest(tensors, tuned["weights_nbytes"])  # the layout is tiny.en's
    return bytes(data), json.dumps(tuned, indent=2, sort_keys=True).encode()


def test_a_fine_tune_runs_on_the_same_libraries(tmp_path, manifest):
    """Other weights of tiny.en's layout, with their own manifest: the tiny libraries take them (no
    rebuild), verify_weights passes, and the transcript comes from them (its log-probabilities are
    not the original's). The same weights with tiny.en's manifest are refused."""
    weights, tuned_manifest = fine_tuned(manifest)
    jfk = read(os.path.join(ROOT, "test_audio"), "jfk.wav")
    results = {}
    for name, replace in (("original", {}), ("tuned", {"weights.bin": weights, "manifest.json": tuned_manifest})):
        with Engine("tiny", *libraries(), checkpoint_copy(tmp_path / name, replace), verify_weights=True) as engine:
            results[name] = engine.transcribe_long(jfk)
    assert "ask not what your country can do for you" in results["tuned"]["text"].lower()
    ours = [s["avg_logprob"] for s in results["tuned"]["segments"]]
    assert ours != [s["avg_logprob"] for s in results["original"]["segments"]], "the tuned weights were not used"
    message = refused(checkpoint_copy(tmp_path / "mixed", {"weights.bin": weights}))
    assert "fails the xxh64 checksum" in message, message


def test_verify_weights_names_the_tensor(tmp_path, manifest):
    name, offset = tensor_offsets(manifest)[1]
    message = refused(checkpoint_copy(tmp_path / "v", {"weights.bin": flipped(offset)}), verify_weights=True)
    assert f"tensor '{name}' fails its sha256" in message, message


def test_intact_copy_passes_verify_weights(tmp_path):
    Engine("tiny", *libraries(), checkpoint_copy(tmp_path / "ok"), verify_weights=True).close()


def test_cli_refuses_a_flipped_byte(tmp_path, manifest):
    """The CLI over a runfiles tree whose @whisper_tiny is damaged: one line, exit 1, no output."""
    tree = tmp_path / "runfiles"
    tree.mkdir()
    for entry in os.listdir(ROOT):
        if entry != "whisper_tiny":
            os.symlink(os.path.join(ROOT, entry), tree / entry)
    checkpoint_copy(tree / "whisper_tiny", {"weights.bin": flipped(tensor_offsets(manifest)[2][1])})
    out = tmp_path / "out.txt"
    proc = subprocess.run(
        [
            os.path.join(ROOT, "ckw", "ckw", "cli", "transcribe"),
            "--wav",
            os.path.join(ROOT, "test_audio", "jfk.wav"),
            "--output",
            str(out),
        ],
        env=dict(os.environ, RUNFILES_DIR=str(tree)),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    lines = proc.stderr.splitlines()
    assert proc.returncode == 1 and len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"transcribe: error: {tree}/whisper_tiny/weights.bin: "), lines[0]
    assert "xxh64" in lines[0] and not out.exists() and proc.stdout == ""
