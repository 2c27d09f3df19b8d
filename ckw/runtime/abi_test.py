"""ckw/runtime/abi.py builds its ctypes table from each library's own `<prefix>_abi_json()`: the table
covers every function the generated header declares, with the ctypes the header's C types map
to; the embedded string is the abi.json written beside the .c; unknown C types, other error codes
or another tap type are refused with a clear error."""

import copy
import io
import json
import wave

import numpy as np
import pytest

from ckw import runfiles
from ckw.runtime import abi
from tools.codegen.testing.c_header import declarations, error_codes

# (name in //models/whisper, symbol prefix, part)
LIBRARIES = [
    ("tiny_encoder", "ckw_tiny_encoder", "encoder"),
    ("tiny_decoder", "ckw_tiny_decoder", "decoder"),
    ("frontend", "ckw_whisper_frontend", "frontend"),
]


def path(target: str, name: str) -> str:
    return runfiles.locate(runfiles.WORKSPACE, f"models/whisper/{target}_c/{name}")


def load(target: str, prefix: str, part: str) -> abi.Library:
    return abi.Library(runfiles.locate(runfiles.WORKSPACE, f"models/whisper/lib{prefix}.so"), prefix, part)


@pytest.fixture(scope="module", params=LIBRARIES, ids=[t for t, _, _ in LIBRARIES])
def library(request):
    target, prefix, part = request.param
    with open(path(target, f"{prefix}.h")) as f:
        header = f.read()
    return load(target, prefix, part), header, target


def test_table_covers_every_function_the_header_declares(library):
    lib, header, _ = library
    prefix = lib.abi["prefix"]
    decls = declarations(header)
    funcs = [d for d in decls.values() if d.get("kind") != "function_pointer"]
    assert sorted(lib.functions) == sorted(d["name"][len(prefix) + 1 :] for d in funcs)
    # The ctypes the header's own C types map to are the ones the library was given.
    from_header = abi.ctypes_table(
        {
            "prefix": prefix,
            "functions": funcs,
            "types": [d for d in decls.values() if d.get("kind") == "function_pointer"],
        }
    )
    for name, (argtypes, restype) in from_header.items():
        fn = getattr(lib.lib, f"{prefix}_{name}")
        assert (list(fn.argtypes), fn.restype) == (argtypes, restype), name
    assert error_codes(header, prefix) == abi.ERROR_CODES


def test_abi_json_file_is_the_embedded_string(library):
    lib, _, target = library
    with open(path(target, "abi.json")) as f:
        text = f.read()
    assert lib.abi_json == text
    assert json.loads(text)["prefix"] == lib.abi["prefix"]


def test_ctypes_mapping(library):
    lib, _, _ = library

    def fn(name):  # the typed attribute, as lib.call uses it
        return getattr(lib.lib, lib.prefix + name)

    create = fn("create_with_threads")
    assert create.argtypes == [
        abi.ctypes.c_char_p,
        abi.ctypes.c_char_p,
        abi.ctypes.c_int,
        abi.ctypes.POINTER(abi.ctypes.c_void_p),
    ]
    assert create.restype is abi.ctypes.c_int
    assert fn("free").restype is None
    assert fn("set_tap").argtypes[1] is abi.TAP_FN
    assert fn("dim").restype is abi.ctypes.c_int64


def test_unknown_ctype_names_function_and_parameter(library):
    lib, _, _ = library
    bad = copy.deepcopy(lib.abi)
    fn = next(f for f in bad["functions"] if f["name"].endswith("_dim"))
    fn["params"][0]["ctype"] = "const wchar_t *"
    with pytest.raises(abi.AbiError) as e:
        abi.ctypes_table(bad, "test")
    msg = str(e.value)
    assert f"{fn['name']}: parameter 0 'name': unknown C type 'const wchar_t *'" in msg and "_CTYPES" in msg
    assert e.value.code is None
    fn["params"][0]["ctype"] = "const char *"
    fn["returns"] = "__int128"
    with pytest.raises(abi.AbiError, match=f"{fn['name']}: return type: unknown C type '__int128'"):
        abi.ctypes_table(bad, "test")


def test_other_error_codes_or_tap_type_are_refused(library):
    lib, _, _ = library
    bad = copy.deepcopy(lib.abi)
    next(e for e in bad["errors"] if e["name"] == "E_KERNEL")["code"] = -99
    with pytest.raises(abi.AbiError, match="E_KERNEL: library -99, runtime -9"):
        abi.check_errors(bad)
    bad = copy.deepcopy(lib.abi)
    tap = next(t for t in bad["types"] if t["name"].endswith("_tap_fn"))
    tap["params"][3]["ctype"] = "int"
    with pytest.raises(abi.AbiError, match="_tap_fn is void .*but TAP_FN is"):
        abi.ctypes_table(bad)


def test_wrong_part_and_unknown_function_are_refused():
    target, prefix, _ = LIBRARIES[0]
    with pytest.raises(abi.AbiError, match="the library is ckw_tiny_encoder \\(part encoder\\), expected"):
        load(target, prefix, "decoder")
    with pytest.raises(abi.AbiError, match="ckw_tiny_encoder_prefill: not in .*'s ABI"):
        load(target, prefix, "encoder").call("prefill")


def test_frontend_through_the_table():
    """uint8 buffers, int64_t out-parameters and handles as the table maps them."""
    lib = load(*LIBRARIES[2])
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(16000)
        w.writeframes(np.zeros(1600, np.int16).tobytes())
    data = np.frombuffer(buf.getvalue(), np.uint8)
    handle = abi.Handle(lib)
    shape = (abi.ctypes.c_int64 * 2)()
    handle("run_shape", data, data.size, shape)
    assert shape[0] == lib.dim("n_mels") > 0 and shape[1] > 3000
    mel = np.empty((shape[0], shape[1]), np.float32)
    handle("run", data, data.size, mel, mel.size)
    with pytest.raises(abi.AbiError) as e:
        handle("run", data, data.size, mel, 1)
    assert e.value.code == abi.E_ARGUMENT
    handle.close()
