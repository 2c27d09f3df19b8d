"""The audio kernel maps: schema-valid, the frontend's ops (the seven of a whole file, the six of
a stream's blocks and Silero VAD's two), and each `abi`/`queries` entry matching its C prototype in the
header (names, types, order)."""

import glob
import os
import re

import pytest

from kernels.audio import audio_testlib as lib
from tools.codegen import load

OPS = {
    "audio_wav_decode",
    "audio_resample",
    "audio_pad_or_truncate",
    "audio_stft_tables",
    "audio_stft",
    "audio_mel_filters",
    "audio_log_mel",
    # a stream's blocks (ckw/runtime/audio_stream.py)
    "audio_wav_info",
    "audio_wav_decode_range",
    "audio_resample_range",
    "audio_resample_input_span",
    "audio_log_mel_block",
    "audio_log_mel_clamp",
    # Silero VAD's front (models/silero_vad)
    "stream_frames",
    "complex_magnitude",
}
WORKSPACE = lib.runfile("ckw")
MAPS = sorted(p for p in glob.glob(os.path.join(lib.kernel_dir(), "*.json")) if not p.endswith("_registry.json"))


def _load(path):
    """The map as the compiler reads it: `extends` resolved, schema-checked (CompileError)."""
    return load.resolve_kernel_map(path)


def _prototypes(header_text):
    """name -> (return type, [(ctype, arg name)]) for every function declared in the header."""
    text = re.sub(r"//[^\n]*", "", header_text)
    protos = {}
    for ret, name, params in re.findall(r"^\s*((?:const )?\w+\*?)\s+(ckw_\w+)\(([^)]*)\);", text, re.MULTILINE):
        args = []
        for p in params.split(","):
            m = re.fullmatch(r"\s*((?:const )?\w+)\s*(\*?)\s*(\w+)\s*", p)
            assert m, f"cannot parse parameter '{p}' of {name}"
            args.append((m.group(1) + (" *" if m.group(2) else ""), m.group(3)))
        protos[name] = (ret, args)
    return protos


def test_every_op_exactly_once():
    assert len(MAPS) == len(OPS), MAPS
    provides = sorted(_load(p)["provides"] for p in MAPS)
    assert sorted(OPS) == provides


@pytest.mark.parametrize("path", MAPS, ids=os.path.basename)
def test_schema_valid(path):
    load.load_kernel_map(path)  # raises CompileError naming the file and JSON pointer


@pytest.mark.parametrize("path", MAPS, ids=os.path.basename)
def test_abi_matches_header(path):
    m = _load(path)
    base = os.path.basename(path)[: -len(".json")]
    assert m["kernel"] == "ckw_" + base, "file names repeat the kernel name"
    library = m["library"].split(":")[1]  # a library may implement several kernels
    assert m["header"] == f"kernels/audio/{library}.h"
    with open(os.path.join(WORKSPACE, m["header"])) as f:
        protos = _prototypes(f.read())
    calls = [(m["kernel"], m["abi"], "int" if m.get("returns") == "status" else "void")]
    for q in m.get("queries", []):
        calls.append((q["function"], q["abi"], "int" if q["returns"] == "status" else "int64_t"))
    for fn, abi, ret in calls:
        assert fn in protos, f"{fn} is not declared in {m['header']}"
        want_ret, params = protos[fn]
        assert want_ret == ret, f"{fn} returns {want_ret}, map says {ret}"
        assert [(a["ctype"], a["arg"]) for a in abi] == params, f"{fn}: map abi differs from the header"
    if "strerror" in m:
        assert protos[m["strerror"]] == ("const char*", [("int", "code")])


@pytest.mark.parametrize("path", MAPS, ids=os.path.basename)
def test_binds_name_declared_things(path):
    m = _load(path)
    dims = set(m["dims"])
    for q in m.get("queries", []):
        dims |= {a["bind"][4:] for a in q["abi"] if a["bind"].startswith("out:")}
        if q["returns"] == "value":
            dims.add(q["value"])
    for port, spec in m["ports"].items():
        for d in spec["shape"]:
            if isinstance(d, str):
                names = set(re.findall(r"[A-Za-z_]\w*", d))
                assert names <= dims, f"port {port} shape {d} uses undeclared dims {names - dims}"
    bound_ports = set()
    for a in m["abi"] + [a for q in m.get("queries", []) for a in q["abi"]]:
        kind, _, what = a["bind"].partition(":")
        if kind == "port":
            assert what in m["ports"], a
            bound_ports.add(what)
        elif kind in ("dim", "scratch"):
            assert set(re.findall(r"[A-Za-z_]\w*", what)) <= dims, a
    assert bound_ports == set(m["ports"]), "every port is passed to the kernel"
