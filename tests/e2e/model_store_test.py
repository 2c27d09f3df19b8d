"""Checkpoints found at run time (ckw/checkpoints/store.py) and run on the libraries of
their architecture (ckw/runtime/libraries.py):

- a fine-tune as a user has it: tiny.en's real weights perturbed, saved by transformers'
  save_pretrained, given as --model_dir: in float32 (runs on the f32-storage tiny.en libraries)
  and in float16 values (runs on the published tiny.en ones), each equal token for token and
  timestamp for timestamp to openai-whisper holding the same weights (read from the safetensors
  file, not from our conversion);
- the same directory in a Hugging Face cache as huggingface_hub lays it out, found offline by Hub id;
- the cache: converted once, reused; a conversion killed midway leaves no entry and the next run
  converts again; offline with no files, one line naming the model, where it looked and what to do;
- an architecture this build has no libraries for is refused in one line.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import soundfile
import torch
import whisper
from safetensors.numpy import load_file
from transformers import WhisperConfig, WhisperForConditionalGeneration

from ckw import runfiles
from ckw.checkpoints import store, synthetic
from ckw.checkpoints.canonical import DIM_KEYS, is_key_bias
from ckw.checkpoints.convert_openai import canonical_to_openai
from ckw.checkpoints.errors import CheckpointError
from ckw.checkpoints.packed import PackedCheckpoint, runfiles_checkpoint_dir
from ckw.runtime import libraries
from ckw.runtime.engine import Encoder, Engine, EngineError, Frontend

HUB_ID = "someone/whisper-tiny.en-finetuned"


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    root = tmp_path / "ckw-cache"
    monkeypatch.setenv(store.CACHE_ENV, str(root))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf-hub"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # the Hub is out of reach here; its cache is not
    return root


def tiny_en() -> PackedCheckpoint:
    return PackedCheckpoint(runfiles_checkpoint_dir("tiny"), verify=False)


def save_finetune(directory: str, storage: str, seed: int = 1) -> str:
    """tiny.en's weights, each moved by 2% of its spread, saved by transformers as a fine-tune is;
    storage "f16": the moved values rounded to float16 (a fine-tune trained in float16)."""
    ckpt = tiny_en()
    cfg = ckpt.config
    config = WhisperConfig(
        vocab_size=cfg["n_vocab"],
        num_mel_bins=cfg["n_mels"],
        d_model=cfg["n_audio_state"],
        encoder_layers=cfg["n_audio_layer"],
        encoder_attention_heads=cfg["n_audio_head"],
        decoder_layers=cfg["n_text_layer"],
        decoder_attention_heads=cfg["n_text_head"],
        encoder_ffn_dim=4 * cfg["n_audio_state"],
        decoder_ffn_dim=4 * cfg["n_text_state"],
        max_source_positions=cfg["n_audio_ctx"],
        max_target_positions=cfg["n_text_ctx"],
    )
    model = WhisperForConditionalGeneration(config)
    rng = np.random.default_rng(seed)
    state = {}
    for name in ckpt.names():
        if is_key_bias(name):
            continue  # Whisper's key projection has no bias
        value = np.array(ckpt.tensor(name), np.float32)
        value += (0.02 * float(value.std()) * rng.standard_normal(value.shape)).astype(np.float32)
        if storage == "f16":
            value = value.astype(np.float16).astype(np.float32)
        state[name] = torch.from_numpy(value)
    missing, unexpected = model.load_state_dict(state, strict=False)
    assert not unexpected and set(missing) <= {"proj_out.weight"}, (missing, unexpected)  # tied to the embedding
    model.save_pretrained(directory)
    shutil.copy(os.path.join(ckpt.directory, "tokenizer.json"), directory)
    return directory


def openai_model(directory: str):
    """openai-whisper's model holding the weights of the safetensors file in `directory`, with
    tiny.en's alignment heads (what a fine-tune without its own gets from openai-whisper's table)."""
    cfg = tiny_en().config
    model = whisper.model.Whisper(whisper.model.ModelDimensions(**{k: int(cfg[k]) for k in DIM_KEYS}))
    tensors = load_file(os.path.join(directory, "model.safetensors"))
    state = {canonical_to_openai(k): torch.from_numpy(v) for k, v in tensors.items() if k != "proj_out.weight"}
    missing, unexpected = model.load_state_dict(state, strict=False)
    assert not missing and not unexpected, (missing, unexpected)
    model.set_alignment_heads(whisper._ALIGNMENT_HEADS["tiny.en"])
    return model.eval()


def jfk() -> np.ndarray:
    samples, rate = soundfile.read(runfiles.locate("test_audio", "jfk.wav"), dtype="float32")
    assert rate == 16000
    return samples


def segments_of(result: dict) -> list:
    return [(s["tokens"], round(s["start"], 2), round(s["end"], 2), s["text"]) for s in result["segments"]]


@pytest.mark.parametrize("storage,variant", [("f32", "tiny_f32"), ("f16", "tiny")])
def test_a_finetune_runs_token_for_token_as_openai_whisper(tmp_path, storage, variant):
    directory = save_finetune(str(tmp_path / "my-finetune"), storage)
    packed = store.resolve(None, model_dir=directory)
    with open(os.path.join(packed, "model_config.json"), encoding="utf-8") as f:
        assert json.load(f)["storage"] == storage
    with Engine.from_checkpoint(packed) as engine:
        assert engine.variant == variant
        ours = engine.transcribe_long(jfk())
    with torch.no_grad():
        theirs = whisper.transcribe(openai_model(directory), jfk(), fp16=False, verbose=None)
    assert segments_of(ours) == segments_of(theirs)
    assert "ask not what your country can do for you" in ours["text"]  # still a speech model


def test_a_finetune_without_alignment_heads_times_words_with_its_models(tmp_path):
    directory = save_finetune(str(tmp_path / "my-finetune"), "f32")
    packed = store.resolve(None, model_dir=directory)
    with open(os.path.join(packed, "model_config.json"), encoding="utf-8") as f:
        assert json.load(f)["alignment_heads_source"] == "openai-whisper table: tiny.en"
    with Engine.from_checkpoint(packed) as engine:
        ours = engine.transcribe_long(jfk(), engine.check_options(word_timestamps=True))
    with torch.no_grad():
        theirs = whisper.transcribe(openai_model(directory), jfk(), fp16=False, verbose=None, word_timestamps=True)
    words = [[w for s in r["segments"] for w in s["words"]] for r in (ours, theirs)]
    assert [w["word"] for w in words[0]] == [w["word"] for w in words[1]] and len(words[0]) > 15
    for a, b in zip(*words):
        assert abs(a["start"] - b["start"]) <= 0.02 + 1e-9 and abs(a["end"] - b["end"]) <= 0.02 + 1e-9, (a, b)
        assert a["probability"] == pytest.approx(b["probability"], abs=2e-3)


def test_an_openai_whisper_pt_file_runs_with_the_tokenizer_of_its_kind(tmp_path):
    directory = save_finetune(str(tmp_path / "my-finetune"), "f16")
    model = openai_model(directory)
    pt = str(tmp_path / "my-finetune.pt")
    torch.save({"dims": model.dims.__dict__, "model_state_dict": model.state_dict()}, pt)  # openai-whisper's layout
    from_pt, from_hf = store.resolve(None, model_dir=pt), store.resolve(None, model_dir=directory)
    manifests = [json.load(open(os.path.join(d, "manifest.json"), encoding="utf-8")) for d in (from_pt, from_hf)]
    assert manifests[0]["weights_sha256"] == manifests[1]["weights_sha256"]
    with open(os.path.join(from_pt, "audit.json"), encoding="utf-8") as f:
        assert json.load(f)["tokenizer"]["kind"] == "english"
    results = []
    for packed in (from_pt, from_hf):
        with Engine.from_checkpoint(packed) as engine:
            results.append(engine.transcribe_long(jfk(), engine.check_options(word_timestamps=True)))
    assert segments_of(results[0]) == segments_of(results[1])
    assert results[0]["segments"][0]["words"] == results[1]["segments"][0]["words"]


def test_a_legacy_pytorch_model_bin_directory_packs_to_the_same_weights(tmp_path):
    directory = save_finetune(str(tmp_path / "my-finetune"), "f32")
    legacy = tmp_path / "legacy"  # as transformers wrote fine-tunes before safetensors
    shutil.copytree(directory, legacy)
    os.remove(legacy / "model.safetensors")
    state = {k: torch.from_numpy(v) for k, v in load_file(os.path.join(directory, "model.safetensors")).items()}
    torch.save(state, legacy / "pytorch_model.bin")
    packed = [store.resolve(None, model_dir=str(d)) for d in (legacy, directory)]
    manifests = [json.load(open(os.path.join(d, "manifest.json"), encoding="utf-8")) for d in packed]
    assert manifests[0]["weights_sha256"] == manifests[1]["weights_sha256"]


def test_the_cli_takes_a_model_dir_and_converts_it_once(tmp_path, cache):
    directory = save_finetune(str(tmp_path / "my-finetune"), "f32")
    cli = runfiles.locate("ckw", "ckw/cli/transcribe")
    argv = [
        cli,
        "--model_dir",
        directory,
        "--wav",
        runfiles.locate("test_audio", "jfk.wav"),
        "--beam_size=0",
        "--output_format=json",
        "--output=-",
        "--noverbose",
    ]
    env = {**os.environ, "BUILD_WORKING_DIRECTORY": str(tmp_path)}
    first = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=600)
    assert first.returncode == 0, first.stderr
    assert "converting local directory" in first.stderr
    (entry,) = os.listdir(cache / "local")
    stamp = os.stat(cache / "local" / entry / "weights.bin").st_mtime_ns
    again = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=600)
    assert again.returncode == 0 and "converting" not in again.stderr, again.stderr
    assert os.stat(cache / "local" / entry / "weights.bin").st_mtime_ns == stamp
    result = json.loads(first.stdout)
    assert result["model"]["variant"] == "tiny_f32" and json.loads(again.stdout)["segments"] == result["segments"]
    with Engine.from_checkpoint(os.path.join(cache, "local", entry)) as engine:
        assert segments_of(result) == segments_of(engine.transcribe_long(jfk(), engine.check_options(beam_size=None)))


def test_a_finetune_in_the_hugging_face_cache_is_found_offline_by_its_hub_id(tmp_path, cache):
    directory = save_finetune(str(tmp_path / "saved"), "f32")
    repo = tmp_path / "hf-hub" / ("models--" + HUB_ID.replace("/", "--"))
    revision = "0123456789abcdef0123456789abcdef01234567"
    os.makedirs(repo / "refs")
    (repo / "refs" / "main").write_text(revision)
    snapshot, blobs = repo / "snapshots" / revision, repo / "blobs"
    os.makedirs(snapshot)
    os.makedirs(blobs)
    for name in os.listdir(directory):  # huggingface_hub's layout: snapshot files link to blobs
        blob = blobs / f"blob-{name}"
        shutil.copy(os.path.join(directory, name), blob)
        os.symlink(os.path.relpath(blob, snapshot), snapshot / name)
    # A new process, as a user's: huggingface_hub reads HF_HUB_CACHE when it is imported.
    argv = [
        runfiles.locate("ckw", "ckw/cli/transcribe"),
        "--model",
        HUB_ID,
        "--local_files_only",
        "--wav",
        runfiles.locate("test_audio", "jfk.wav"),
        "--output_format=json",
        "--output=-",
        "--noverbose",
    ]
    env = {**os.environ, "HF_HUB_CACHE": str(tmp_path / "hf-hub"), "BUILD_WORKING_DIRECTORY": str(tmp_path)}
    env.pop("HF_HUB_OFFLINE")  # --local_files_only alone keeps it off the network
    run = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=600)
    assert run.returncode == 0, run.stderr
    assert "ask not what your country can do for you" in json.loads(run.stdout)["text"]
    packed = str(cache / "hub" / HUB_ID.replace("/", "--"))
    local = store.resolve(None, model_dir=directory)
    manifests = [json.load(open(os.path.join(d, "manifest.json"), encoding="utf-8")) for d in (packed, local)]
    assert manifests[0]["weights_sha256"] == manifests[1]["weights_sha256"]
    with open(os.path.join(packed, "model_config.json"), encoding="utf-8") as f:
        assert f"Hugging Face Hub {HUB_ID} from the local Hugging Face cache" in json.load(f)["source"]


def test_a_conversion_killed_midway_leaves_no_entry(tmp_path, cache):
    directory = save_finetune(str(tmp_path / "my-finetune"), "f32")
    code = "import sys; from ckw.checkpoints import store; store.resolve(None, model_dir=sys.argv[1])"
    env = {**os.environ, "PYTHONPATH": ":".join(sys.path)}
    child = subprocess.Popen([sys.executable, "-c", code, directory], env=env, stderr=subprocess.PIPE)
    partial = None
    deadline = time.monotonic() + 120
    while partial is None and time.monotonic() < deadline and child.poll() is None:
        local = cache / "local"
        entries = os.listdir(local) if local.is_dir() else []
        partial = next((e for e in entries if ".partial-" in e and os.listdir(local / e)), None)
        time.sleep(0.005)
    assert partial is not None, "the conversion finished before it could be killed"
    child.send_signal(signal.SIGKILL)
    child.wait()
    assert [e for e in os.listdir(cache / "local") if ".partial-" not in e] == []  # no entry
    packed = store.resolve(None, model_dir=directory)  # converts again; the leftovers are swept
    assert os.listdir(cache / "local") == [os.path.basename(packed)]
    assert PackedCheckpoint(packed, verify=True).names()


def test_offline_with_no_files_says_where_it_looked_and_what_to_do(cache):
    with pytest.raises(CheckpointError) as e:
        store.resolve("small", local_files_only=True)
    message = str(e.value)
    assert "\n" not in message and message.startswith("--model small: not found")
    for part in (
        str(cache / "small"),
        "openai/whisper-small",
        "--model_dir",
        "huggingface-cli download",
        "where the Hub is reachable",
    ):
        assert part in message, part
    assert not os.path.exists(cache / "small")


def test_unknown_names_and_missing_directories_are_refused():
    with pytest.raises(CheckpointError, match="--model huge: not a Whisper model"):
        store.resolve("huge")
    with pytest.raises(CheckpointError, match="--model_dir /nonexistent: no such file or directory"):
        store.resolve(None, model_dir="/nonexistent")
    assert store.model_name("turbo") == "large-v3-turbo" and store.hub_repo("small") == "openai/whisper-small"


def test_a_large_v3_layout_runs_on_the_128_band_frontend():
    # Seeded weights of large-v3's widths (2+2 layers) carry no real tokenizer: the libraries the
    # engine would pick for them, without the engine.
    path = runfiles.locate("ckw", "models/whisper/large_v3_l2_seeded_checkpoint/manifest.json")
    with open(path, encoding="utf-8") as f:
        libs = libraries.for_checkpoint(json.load(f), path)
    assert libs.variant == "large_v3_l2" and libs.frontend.endswith("libckw_whisper_128_frontend.so")
    with open(runfiles.locate("test_audio", "jfk.wav"), "rb") as f:
        mel = Frontend(libs.frontend).log_mel(f.read())
    assert mel.shape[0] == 128
    encoder = Encoder(libs.encoder, libs.variant, os.path.join(os.path.dirname(path), "weights.bin"))
    memory = encoder.run(mel[:, :3000])
    assert memory.shape == (1500, 1280) and np.isfinite(memory).all()
    encoder.handle.close()


def test_an_architecture_without_libraries_is_refused_in_one_line(tmp_path):
    directory = synthetic.write_hf_dir(str(tmp_path / "toy"), synthetic.hf_tensors())  # a toy's dimensions
    packed = store.resolve(None, model_dir=directory)
    with pytest.raises(EngineError) as e:
        Engine.from_checkpoint(packed)
    message = str(e.value)
    assert "\n" not in message and "no library of this build was generated for" in message
    assert "tiny.en (f32 storage)" in message and "small" in message
