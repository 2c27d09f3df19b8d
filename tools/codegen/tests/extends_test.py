"""Kernel maps that extend another map in their folder: merge semantics, validation of the raw and
the resolved document, chains, cycles and missing bases, and directory scanning."""

import json
import os

import pytest

from tools.codegen import load
from tools.codegen.compiler import compile_circuit
from tools.codegen.errors import CompileError
from tools.codegen.testing.toy import ROOT, circuit, kmap, port, run_pytest, unary, write_case

BASE = kmap(
    "ckw_base",
    "base_op",
    {"x": port("input", ["M", "N"]), "b": port("weight", ["N"], "vector", "weights"), "y": port("output", ["M", "N"])},
    ["M", "N"],
)
BASE["contract"] = {
    "kind": "float",
    "reference": "x + b",
    "reduction_dim": None,
    "tolerance_c": 2.0,
    "notes": "one add per output",
}


def write(folder, name, data):
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, name)
    with open(path, "w") as f:
        json.dump(data, f)
    return path


def error(path) -> str:
    with pytest.raises(CompileError) as e:
        load.load_kernel_map(path)
    return str(e.value)


def test_objects_merge_lists_and_scalars_replace(tmp_path):
    d = str(tmp_path)
    write(d, "base.json", BASE)
    child = write(
        d,
        "child.json",
        {
            "extends": "base.json",
            "kernel": "ckw_child",
            "provides": "child_op",
            "ports": {"x": {"layout": "head_major"}},  # one field of one port
            "dims": ["M", "N", "Q"],  # a list replaces the base's whole list
            "contract": {"tolerance_c": 4.0},  # the rest of the contract stays
        },
    )
    m = load.resolve_kernel_map(child)
    assert m["kernel"] == "ckw_child" and m["provides"] == "child_op" and "extends" not in m
    assert m["ports"]["x"] == dict(BASE["ports"]["x"], layout="head_major")
    assert m["ports"]["b"] == BASE["ports"]["b"] and m["ports"]["y"] == BASE["ports"]["y"]
    assert m["dims"] == ["M", "N", "Q"]
    assert m["abi"] == BASE["abi"] and m["header"] == BASE["header"]
    assert m["contract"] == dict(BASE["contract"], tolerance_c=4.0)
    assert load.load_kernel_map(child).bases == (os.path.join(d, "base.json"),)
    assert load.resolve_kernel_map(os.path.join(d, "base.json")) == BASE  # the base is untouched


def test_null_deletes_a_key_at_any_depth(tmp_path):
    d = str(tmp_path)
    write(d, "base.json", BASE)
    child = write(
        d,
        "child.json",
        {
            "extends": "base.json",
            "kernel": "ckw_child",
            "ports": {"b": None},
            "abi": [a for a in BASE["abi"] if a["arg"] != "b"],
            "contract": {"notes": None, "reduction_dim": None},
            "doc": None,  # absent in the base: nothing to delete
        },
    )
    m = load.resolve_kernel_map(child)
    assert sorted(m["ports"]) == ["x", "y"]
    assert m["contract"] == {"kind": "float", "reference": "x + b", "tolerance_c": 2.0}
    assert "doc" not in m


def test_chain_resolves_through_every_base(tmp_path):
    d = str(tmp_path)
    write(d, "a.json", BASE)
    write(d, "b.json", {"extends": "a.json", "kernel": "ckw_b", "contract": {"tolerance_c": 3.0}})
    c = write(d, "c.json", {"extends": "b.json", "kernel": "ckw_c", "provides": "c_op", "contract": {"reference": "c"}})
    doc = load.load_kernel_map(c)
    assert doc.data["contract"] == dict(BASE["contract"], tolerance_c=3.0, reference="c")
    assert doc.bases == (os.path.join(d, "b.json"), os.path.join(d, "a.json"))


def test_cycle_names_the_chain(tmp_path):
    d = str(tmp_path)
    write(d, "a.json", {"extends": "b.json", "kernel": "ckw_a"})
    write(d, "b.json", {"extends": "c.json", "kernel": "ckw_b"})
    write(d, "c.json", {"extends": "a.json", "kernel": "ckw_c"})
    a, b, c = (os.path.join(d, n) for n in ("a.json", "b.json", "c.json"))
    assert (
        error(a) == f"{c}: /extends: cycle: {a} -> {b} -> {c} -> {a}: a chain of extends must end at a map without one"
    )
    write(d, "self.json", {"extends": "self.json", "kernel": "ckw_self"})
    assert "/extends: cycle:" in error(os.path.join(d, "self.json"))


def test_missing_base(tmp_path):
    child = write(str(tmp_path), "child.json", {"extends": "nowhere.json", "kernel": "ckw_child"})
    msg = error(child)
    assert msg.startswith(f"{child}: /extends: no base kernel map {os.path.join(str(tmp_path), 'nowhere.json')}")
    assert "same folder" in msg


def test_raw_extending_map_schema(tmp_path):
    d = str(tmp_path)
    write(d, "base.json", BASE)
    cases = [
        ({"extends": "../base.json", "kernel": "ckw_child"}, "/extends: expected a string matching"),
        ({"extends": "sub/base.json", "kernel": "ckw_child"}, "/extends: expected a string matching"),
        ({"extends": "base.json"}, "/: expected property 'kernel' (it is required)"),
        ({"extends": "base.json", "kernel": None}, "/kernel: expected None is not of type 'string'"),
        ({"extends": "base.json", "kernel": "ckw_child", "port": {}}, "/: expected only known properties"),
        ({"extends": 3, "kernel": "ckw_child"}, "/extends: expected 3 is not of type 'string'"),
    ]
    for raw, want in cases:
        path = write(d, "child.json", raw)
        assert f"{path}: {want}" in error(path), raw


def test_extending_map_declares_its_own_kernel(tmp_path):
    d = str(tmp_path)
    write(d, "base.json", BASE)
    child = write(d, "child.json", {"extends": "base.json", "kernel": "ckw_base", "provides": "other"})
    assert "/kernel: ckw_base is also the kernel of its base" in error(child)


def test_resolved_map_invalid_names_the_file_pointer_and_chain(tmp_path):
    d = str(tmp_path)
    base = write(d, "base.json", BASE)
    child = write(d, "child.json", {"extends": "base.json", "kernel": "ckw_child", "ports": {"x": {"layout": None}}})
    assert error(child) == (
        f"{child}: /ports/x: expected property 'layout' (it is required) "
        f"(as resolved through extends: {child} -> {base})"
    )
    child = write(d, "child.json", {"extends": "base.json", "kernel": "ckw_child", "ports": {"y": {"dtype": "f64"}}})
    assert f"{child}: /ports/y/dtype: expected 'f64' is not one of" in error(child)
    # The load-time `parallel` checks see the resolved map too.
    child = write(
        d,
        "child.json",
        {
            "extends": "base.json",
            "kernel": "ckw_child",
            "returns": "status",
            "parallel": [{"split": "M", "grain": 2, "chunk": {"y": "start * N", "M": "count"}}],
        },
    )
    assert f"{child}: /parallel: only kernels returning void may be split" in error(child)


def test_invalid_base_is_reported_at_the_base(tmp_path):
    d = str(tmp_path)
    bad = dict(BASE, dims="M")
    base = write(d, "base.json", bad)
    child = write(d, "child.json", {"extends": "base.json", "kernel": "ckw_child", "dims": ["M", "N"]})
    assert error(child).startswith(f"{base}: /dims: expected 'M' is not of type 'array'")


def test_directory_scan_finds_and_compiles_extending_maps(tmp_path):
    relu = unary("ckw_relu", "relu")
    args = write_case(tmp_path, circuit([{"name": "a", "kind": "relu_variant", "inputs": {"x": "external:x"}}]), [relu])
    write(
        str(tmp_path / "maps"),
        "relu_variant.json",
        {"extends": "ckw_relu.json", "kernel": "ckw_relu_variant", "provides": "relu_variant"},
    )
    write(str(tmp_path / "maps"), "notes.json", {"not": "a kernel map"})
    found = load.find_kernel_maps(args["kernel_map_paths"])
    assert [os.path.basename(p) for p in found] == ["ckw_relu.json", "relu_variant.json"]
    result = compile_circuit(**args)
    assert [c["kernel"] for c in result.plans[0]["calls"]] == ["ckw_relu_variant"]
    # A scanned extending map that forgot its own kernel name is an error, not silently skipped.
    bad = write(str(tmp_path / "maps"), "zz_bad.json", {"extends": "ckw_relu.json", "provides": "relu_bad"})
    with pytest.raises(CompileError, match=f"^{bad}: /: expected property 'kernel' \\(it is required\\)$"):
        compile_circuit(**args)


def test_extends_schema_knows_exactly_the_kernel_map_properties():
    def props(name):
        with open(os.path.join(ROOT, "schemas", name)) as f:
            return set(json.load(f)["properties"])

    assert props("kernel_map_extends.schema.json") == props("kernel_map.schema.json") | {"extends"}


def test_merge_never_modifies_its_arguments():
    base = {"a": {"b": [1, 2], "c": 1}, "d": 2}
    over = {"a": {"b": [3], "c": None, "e": {"f": None, "g": 1}}, "d": None}
    assert load.merge(base, over) == {"a": {"b": [3], "e": {"g": 1}}}
    assert base == {"a": {"b": [1, 2], "c": 1}, "d": 2}
    assert over == {"a": {"b": [3], "c": None, "e": {"f": None, "g": 1}}, "d": None}


if __name__ == "__main__":
    run_pytest(__file__)
