"""//tools:profile_ops on jfk.wav with tiny: the phases a transcription runs, each split between
the circuit's ops so that the split adds up to the phase's time, and the text unchanged by the tap."""

import json
import os
import subprocess
import tempfile

import pytest

from ckw import runfiles


@pytest.fixture(scope="module")
def profile() -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "profile.json")
        cmd = [
            runfiles.locate("ckw", "tools/profile_ops"),
            "--model=tiny",
            "--threads=1",
            "--wav=" + os.path.join(runfiles.locate("test_audio", ""), "jfk.wav"),
            "--json=" + out,
        ]
        result = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
        print(result.stdout, result.stderr[-3000:])
        assert result.returncode == 0
        with open(out, encoding="utf-8") as f:
            return json.load(f), result.stdout


def block_ops() -> set[str]:
    """The op names of the engine's decoder circuit's layer block (summed over layers by the profile)."""
    with open(runfiles.locate("ckw", "circuits/audio_transformer_decoder_paged.json"), encoding="utf-8") as f:
        circuit = json.load(f)
    names = set()

    def walk(x):
        if isinstance(x, dict):
            if x.get("repeat") == "blocks":
                names.update(o["name"] for o in x.get("ops", []) if "name" in o)
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(circuit)
    return names


def test_the_split_adds_up_to_each_phase(profile):
    result, _ = profile
    assert "And so my fellow Americans" in result["text"]
    phases = {(p["library"], p["phase"]): p for p in result["phases"]}
    for key in (("encoder", "run"), ("decoder", "prefill"), ("decoder", "decode")):
        assert key in phases, sorted(phases)
    assert any(library == "frontend" for library, _ in phases), sorted(phases)
    for p in result["phases"]:
        assert sum(o["ms_per_call"] for o in p["ops"]) == pytest.approx(p["ms_per_call_tapped"], rel=1e-6), p
        assert abs(sum(o["share"] for o in p["ops"]) - 1.0) < 1e-6 or not p["ops"]


def test_the_decoder_phases_show_the_circuit_ops(profile):
    result, table = profile
    decoder = [p for p in result["phases"] if p["library"] == "decoder"]
    ops = {o["op"].rsplit(".", 1)[-1] for p in decoder for o in p["ops"] if p["ms_per_call_tapped"] > 0}
    missing = block_ops() - ops
    # every op of the circuit's block runs in some decoder phase of a greedy transcription, except
    # those only word timestamps ask for (cross_qk)
    assert missing <= {"cross_qk"}, missing
    assert "encoder.run" in table and "ms per call" in table
