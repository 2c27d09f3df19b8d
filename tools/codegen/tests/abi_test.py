"""The ABI as data (abi.json, `<prefix>_abi_json()`): the header declares exactly the functions,
types and error codes it lists, the .c embeds the very same text, and both are deterministic."""

import json
import re

from tools.codegen import abi as abi_data
from tools.codegen.compiler import compile_circuit
from tools.codegen.testing.c_header import declarations, error_codes
from tools.codegen.testing.toy import TOY, run_pytest

SUPPORT_HANDLE_H = "tools/codegen/support/ckw_handle.h"
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "'": "'"}


def c_literals(text: str) -> str:
    """The value of adjacent C string literals (the escapes the generator writes)."""
    out = []
    for lit in re.findall(r'"((?:[^"\\]|\\.)*)"', text):
        i = 0
        while i < len(lit):
            if lit[i] != "\\":
                out.append(lit[i])
                i += 1
            elif lit[i + 1] in "01234567":
                m = re.match(r"[0-7]{1,3}", lit[i + 1 :])
                out.append(chr(int(m.group(0), 8)))
                i += 1 + len(m.group(0))
            else:
                out.append(_ESCAPES[lit[i + 1]])
                i += 2
    return "".join(out)


def embedded_abi_json(c_source: str, prefix: str) -> str:
    m = re.search(
        rf"API const char \*{prefix}_abi_json\(void\) {{\n  static const char kAbiJson\[\] =\n(.*?);\n",
        c_source,
        re.DOTALL,
    )
    assert m, f"{prefix}_abi_json() not found in the generated C"
    return c_literals(m.group(1))


def _sig(item: dict) -> dict:
    return {"returns": item["returns"], "params": [{"name": p["name"], "ctype": p["ctype"]} for p in item["params"]]}


def toy():
    return compile_circuit(
        f"{TOY}/toy_decoder.json", [f"{TOY}/kernels"], f"{TOY}/config.json", f"{TOY}/manifest.json", "toy"
    )


def test_header_declares_exactly_the_abi_functions_and_types():
    r = toy()
    abi = json.loads(r.files["abi.json"])
    header = declarations(r.files["ckw_toy_decoder.h"])
    funcs = {k: _sig(v) for k, v in header.items() if v.get("kind") != "function_pointer"}
    assert funcs == {f["name"]: _sig(f) for f in abi["functions"]}
    assert [f["name"] for f in abi["functions"]] == list(funcs)  # same order, too
    pointers = {k: _sig(v) for k, v in header.items() if v.get("kind") == "function_pointer"}
    assert pointers == {t["name"]: _sig(t) for t in abi["types"] if t["kind"] == "function_pointer"}
    assert "typedef struct ckw_toy_decoder_handle ckw_toy_decoder_handle;" in r.files["ckw_toy_decoder.h"]


def test_every_entry_point_of_the_ir_is_described():
    r = toy()
    names = {f["name"] for f in json.loads(r.files["abi.json"])["functions"]}
    for ph in r.ir["phases"]:
        assert ph["function"] in names
    for s in r.ir["setters"]:
        assert f"ckw_toy_decoder_set_{s['name']}" in names
    assert {
        "ckw_toy_decoder_abi_json",
        "ckw_toy_decoder_create",
        "ckw_toy_decoder_reset",
        "ckw_toy_decoder_position",
        "ckw_toy_decoder_cross_kv_projections",
    } <= names


def test_error_codes_come_from_the_one_table():
    r = toy()
    abi = json.loads(r.files["abi.json"])
    assert [(e["name"], e["code"], e["text"]) for e in abi["errors"]] == abi_data.ERRORS
    assert error_codes(r.files["ckw_toy_decoder.h"], "ckw_toy_decoder") == {n: c for n, c, _ in abi_data.ERRORS}
    # strerror() renders the support code's table (the generated C asserts its codes are the header's).
    assert 'return "ckw_toy_decoder: " text;' in r.files["ckw_toy_decoder.c"]
    assert "CKW_STATUS_TABLE(TEXT)" in r.files["ckw_toy_decoder.c"]
    assert support_errors() == abi_data.ERRORS


def support_errors() -> list:
    """(name, code, text) of CKW_STATUS_TABLE in tools/codegen/support/ckw_handle.h."""
    with open(SUPPORT_HANDLE_H, encoding="utf-8") as f:
        text = f.read().replace("\\\n", " ")
    table = text[text.index("#define CKW_STATUS_TABLE(X)") :]
    table = table[: table.index("\n")]
    rows = re.findall(r'X\((\w+),\s*(-?\d+),\s*"((?:[^"\\]|\\.)*)"\)', table)
    return [(name, int(code), c_literals(f'"{msg}"')) for name, code, msg in rows]


def test_embedded_string_is_abi_json_and_output_is_deterministic():
    r = toy()
    text = r.files["abi.json"]
    assert embedded_abi_json(r.files["ckw_toy_decoder.c"], "ckw_toy_decoder") == text
    data = json.loads(text)
    assert text == json.dumps(data, indent=2, sort_keys=True) + "\n"
    assert (data["prefix"], data["part"], data["abi_version"]) == ("ckw_toy_decoder", "decoder", abi_data.ABI_VERSION)
    assert toy().files == r.files


def test_parameter_docs_are_kept():
    abi = json.loads(toy().files["abi.json"])
    prefill = next(f for f in abi["functions"] if f["name"] == "ckw_toy_decoder_prefill")
    assert [(p["name"], p["ctype"], p["doc"]) for p in prefill["params"]] == [
        ("h", "ckw_toy_decoder_handle *", ""),
        ("tokens", "const int32_t *", "token ids"),
        ("n_tokens", "int64_t", "1 <= n_tokens <= 6"),
        ("logits", "float *", "[n_tokens, 11]"),
    ]
    assert prefill["returns"] == "int" and prefill["doc"]


if __name__ == "__main__":
    run_pytest(__file__)
