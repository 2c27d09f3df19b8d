"""The generic kernel contract test (in the manner of ggml's test-backend-ops).

It walks every registered kernel map (kernels/model_kernels_registry.json, written by
//kernels:model_kernels) and, for each case the map's contract lists, builds the C call from
the map's own `abi` (ports as random arrays of their declared shapes, dims, attrs with their
defaults, constants, scratch of the map's declared size), runs it on every ISA path the CPU
has (a path it lacks is a skipped case naming the missing flags; the kernels' C tests run the
AVX-512 family's paths on emulated intrinsics too), runs the map's stated `oracle` (a PyTorch
expression over the ports, dims and attrs, in float64) and applies the map's own tolerance
(exact kernels: bit for bit). A case's random inputs come from a seed that a stable hash of the
kernel and the case gives (CRC-32; in the case's id and failure messages). A map that cannot
state an oracle over random inputs says where it is proven instead (`oracle_elsewhere`).

Also: a map's declared scratch size is at least what the C side asks for (`scratch_query`)
over a grid of dims, and the registry holds every kernel map in kernels/.
"""

import ctypes
import itertools
import json
import math
import os
import re
import zlib

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from kernels.common import kernel_testing as kt
from kernels.common import tolerance

REGISTRY = kt.runfile("kernels/model_kernels_registry.json")
with open(REGISTRY, encoding="utf-8") as _f:
    ENTRIES = json.load(_f)


def _eval_int(expr, names):
    if isinstance(expr, int):
        return expr
    return int(eval(str(expr), {"__builtins__": {}}, dict(names)))  # noqa: S307 (map expressions, test-only)


def _attr_value(name, spec, case):
    if name in case:
        return case[name]
    default = spec.get("default")
    if isinstance(default, str):
        return eval(default, {"__builtins__": {}, "sqrt": math.sqrt}, dict(case))  # noqa: S307 (map default, test-only)
    if default is None and spec.get("values"):
        return spec["values"][0]
    return default


def _seed(kernel, case):
    """The inputs' seed: the same in every process (unlike hash(), which PYTHONHASHSEED salts)."""
    return zlib.crc32(f"{kernel} {json.dumps(case, sort_keys=True)}".encode("utf-8"))


def _cases():
    for entry in ENTRIES:
        m = kt.kernel_map(entry["map"])
        if "oracle" not in m["contract"]:
            continue
        for n, case in enumerate(m["contract"]["cases"]):
            seed = _seed(m["kernel"], case)
            for isa in [""] + entry["isas"]:
                missing = kt.missing_flags(isa)
                marks = [pytest.mark.skip(reason=f"CPU lacks {', '.join(missing)}")] if missing else []
                sfx = "__" + isa if isa else ""
                yield pytest.param(entry, case, sfx, seed, id=f"{m['kernel']}{sfx}-{n}-seed{seed}", marks=marks)


def _inputs(m, case, rng):
    """Random arrays for every input and weight port in its dtype's storage (the map's `inputs`
    expressions first; float dtypes from standard normals, e.g. bf16 rounded to nearest even)."""
    out = {}
    gen = m["contract"].get("inputs", {})
    for name, port in m["ports"].items():
        if port["role"] == "output":
            continue
        shape = tuple(_eval_int(d, case) for d in port["shape"])
        dtype = kt.DTYPES[port["dtype"]]
        if name in gen:
            value = eval(gen[name], {"__builtins__": {}, "rng": rng}, dict(case))  # noqa: S307 (map inputs, test-only)
            out[name] = dtype.store(np.asarray(value).reshape(shape))
        elif dtype.floating:
            out[name] = dtype.store(rng.standard_normal(shape))
        else:
            raise AssertionError(f"{m['kernel']}: port {name} ({port['dtype']}) needs contract.inputs[{name!r}]")
    return out


@pytest.mark.parametrize("entry,case,isa,seed", list(_cases()))
def test_kernel_matches_its_oracle(entry, case, isa, seed):
    m = kt.kernel_map(entry["map"])
    contract = m["contract"]
    k = kt.Kernel(entry["map"])
    rng = np.random.default_rng(seed)
    arrays = _inputs(m, case, rng)
    outputs = {}
    for name, port in m["ports"].items():
        if port["role"] == "output":
            shape = tuple(_eval_int(d, case) for d in port["shape"])
            outputs[name] = np.zeros(shape, kt.DTYPES[port["dtype"]].storage)
    attrs = {a: _attr_value(a, spec, case) for a, spec in (m.get("attrs") or {}).items()}
    args, keep = [], []
    for a in m["abi"]:
        kind, _, what = a["bind"].partition(":")
        if kind == "port":
            args.append(outputs[what] if what in outputs else arrays[what])
        elif kind == "dim":
            args.append(_eval_int(what, case))
        elif kind == "attr":
            args.append(attrs[what])
        elif kind == "const":
            args.append(int(what) if re.fullmatch(r"-?\d+", what) else float(what))
        elif kind == "scratch":
            nbytes = _eval_int(what, case)
            scratch = np.zeros(max(nbytes, 4) // 4 + 1, np.float32)
            keep.append(scratch)
            args.append(scratch)
        else:
            raise AssertionError(f"{entry['map']}: bind {a['bind']!r} has no value in the contract test")
    rc = k.function(isa)(*args)
    if m.get("returns") is not None:
        assert rc == 0, f"{m['kernel']}{isa} {case} seed {seed}: returned {rc}"

    names = {**case, **attrs, "torch": torch, "F": F, "np": np, "max": max, "min": min}
    for name, value in arrays.items():  # the oracle reads float ports as their values in float64
        dtype = kt.DTYPES[m["ports"][name]["dtype"]]
        names[name] = torch.from_numpy(dtype.values(value)).double() if dtype.floating else torch.from_numpy(value)
    ref = eval(contract["oracle"], names)  # noqa: S307 (the map's own oracle, test-only)
    ((out_name, got),) = outputs.items()
    ref = ref.numpy().astype(np.float64) if isinstance(ref, torch.Tensor) else np.asarray(ref, np.float64)
    assert ref.shape == got.shape, f"{m['kernel']}: oracle shape {ref.shape}, port {out_name} {got.shape}"
    what = f"{m['kernel']}{isa} {case} seed {seed}"
    out = kt.DTYPES[m["ports"][out_name]["dtype"]]
    if contract["kind"] == "exact" or contract.get("tolerance_c") == 0:
        # the oracle's values stored as the port stores them (f16, bf16: rounded), bit for bit
        np.testing.assert_array_equal(got, out.store(ref), err_msg=what)
    else:
        reduction = contract.get("reduction_dim")
        k_len = _eval_int(reduction, case) if reduction is not None else 1
        tolerance.assert_close(out.values(got) if out.values else got, ref, contract["tolerance_c"], k_len, what)


def test_every_map_states_an_oracle_or_where_it_is_proven():
    for entry in ENTRIES:
        c = kt.kernel_map(entry["map"])["contract"]
        if "oracle" in c:
            assert c.get("cases"), f"{entry['map']}: contract.oracle needs contract.cases"
        else:
            where = c.get("oracle_elsewhere", "")
            assert re.match(r"//kernels/\w+:\w+_test\b", where), (
                f"{entry['map']}: no contract.oracle and no oracle_elsewhere naming the test that proves it"
            )


def _scratch_queries():
    for entry in ENTRIES:
        m = kt.kernel_map(entry["map"])
        if "scratch_query" in m["contract"]:
            yield pytest.param(entry, id=m["kernel"])


@pytest.mark.parametrize("entry", list(_scratch_queries()))
def test_declared_scratch_covers_what_the_kernel_asks(entry):
    m = kt.kernel_map(entry["map"])
    q = m["contract"]["scratch_query"]
    declared = [a["bind"].partition(":")[2] for a in m["abi"] if a["bind"].startswith("scratch:")]
    assert len(declared) == 1, f"{entry['map']}: scratch_query without exactly one scratch: bind"
    fn = getattr(kt.Kernel(entry["map"]).lib, q["function"])
    fn.argtypes, fn.restype = [ctypes.c_int64] * len(q["args"]), ctypes.c_int64
    grid = q["grid"]
    for values in itertools.product(*(grid[a] for a in q["args"])):
        dims = dict(zip(q["args"], values))
        asked = fn(*values)
        assert _eval_int(declared[0], dims) >= asked, (
            f"{m['kernel']} {dims}: map declares {declared[0]}, C asks {asked}"
        )


def test_the_registry_holds_every_kernel_map():
    kernels_dir = kt.runfile("kernels")
    on_disk = set()
    for family in sorted(os.listdir(kernels_dir)):
        folder = os.path.join(kernels_dir, family)
        if not os.path.isdir(folder):
            continue
        for name in os.listdir(folder):
            if name.endswith(".json") and not name.endswith("_registry.json"):
                with open(os.path.join(folder, name), encoding="utf-8") as f:
                    if "kernel" in json.load(f):
                        on_disk.add(f"kernels/{family}/{name}")
    assert on_disk == {e["map"] for e in ENTRIES}, "kernel maps outside the registry (add them to a ckw_kernel line)"
