"""Pass 1: read circuit, kernel-map and config JSON and validate them against the schemas.

A kernel map may state only how it differs from another map in its folder:
`"extends": "f32_gemm_nt_bias.json"`. The loader reads the base (recursively), deep-merges the
extending map over it (objects merge key by key and the extending map's value wins; lists and
scalars replace whole; a JSON null deletes the key) and validates the resolved document with
kernel_map.schema.json; the raw extending document is validated first with
kernel_map_extends.schema.json. Everything else reads maps through `resolve_kernel_map`.
"""

import copy
import json
import os
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

import jsonschema

from tools.codegen import parallel
from tools.codegen.errors import CompileError

_SCHEMA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "schemas")


@dataclass(frozen=True)
class Document:
    path: str  # as given (relative paths stay relative so diagnostics and stamps are stable)
    data: dict  # for a kernel map: resolved (no `extends`)
    bases: Tuple[str, ...] = ()  # kernel map: the `extends` chain, nearest base first


def _read_json(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except OSError as e:
        raise CompileError(f"{path}: cannot read: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise CompileError(f"{path}:{e.lineno}:{e.colno}: invalid JSON: {e.msg}") from None


def _schema(name: str) -> jsonschema.protocols.Validator:
    with open(os.path.join(_SCHEMA_DIR, name), encoding="utf-8") as f:
        schema = json.load(f)
    return jsonschema.Draft202012Validator(schema)


def _pointer(path) -> str:
    return "/" + "/".join(str(p).replace("~", "~0").replace("/", "~1") for p in path)


def _validate(doc: Document, validator, note: str = "") -> None:
    errors = sorted(validator.iter_errors(doc.data), key=lambda e: (list(map(str, e.absolute_path)), e.message))
    if not errors:
        return
    error = jsonschema.exceptions.best_match(errors)
    # oneOf failures hide the useful message in their context: report the deepest one.
    while error.context:
        error = jsonschema.exceptions.best_match(error.context)
    raise CompileError(f"{doc.path}: {_pointer(error.absolute_path)}: expected {_expected(error)}{note}")


def _expected(error) -> str:
    if error.validator == "required":
        return f"property {error.message.split(' is a required')[0]} (it is required)"
    if error.validator == "additionalProperties":
        return f"only known properties: {error.message}"
    if error.validator == "pattern":
        return f"a string matching {error.validator_value!r}, got {error.instance!r}"
    return error.message


def load_circuit(path: str) -> Document:
    doc = Document(path, _read_json(path))
    _validate(doc, _schema("circuit.schema.json"))
    return doc


def load_kernel_map(path: str) -> Document:
    """A kernel map, its `extends` chain resolved, validated (schema and `parallel`)."""
    return _load_kernel_map(path, ())


def resolve_kernel_map(path: str) -> dict:
    """The resolved, validated kernel map at `path`: what tests and tools read instead of the raw
    JSON (an extending map's file holds only its differences). Raises CompileError."""
    return load_kernel_map(path).data


def _load_kernel_map(path: str, chain: Tuple[str, ...]) -> Document:
    data = _read_json(path)
    if isinstance(data, dict) and "extends" in data:
        doc = _extend(path, data, chain)
        note = f" (as resolved through extends: {' -> '.join((path,) + doc.bases)})"
    else:
        doc, note = Document(path, data), ""
    _validate(doc, _schema("kernel_map.schema.json"), note)
    parallel.validate(doc)
    return doc


def _extend(path: str, raw: dict, chain: Tuple[str, ...]) -> Document:
    _validate(Document(path, raw), _schema("kernel_map_extends.schema.json"))
    chain = chain + (path,)
    base_path = os.path.join(os.path.dirname(path), raw["extends"])
    seen = [os.path.normpath(p) for p in chain]
    if os.path.normpath(base_path) in seen:
        cycle = chain[seen.index(os.path.normpath(base_path)) :] + (base_path,)
        raise CompileError(
            f"{path}: /extends: cycle: {' -> '.join(cycle)}: a chain of extends must end at a map without one"
        )
    if not os.path.isfile(base_path):
        raise CompileError(
            f"{path}: /extends: no base kernel map {base_path}: extends names a file in the same "
            "folder (under Bazel, the base must also be in the action's inputs or the test's data)"
        )
    base = _load_kernel_map(base_path, chain)
    if raw["kernel"] == base.data["kernel"]:
        raise CompileError(
            f"{path}: /kernel: {raw['kernel']} is also the kernel of its base {base_path}: an "
            "extending map declares another kernel (the kernel name is the map's identity)"
        )
    return Document(path, merge(base.data, {k: v for k, v in raw.items() if k != "extends"}), (base_path,) + base.bases)


def merge(base, over):
    """`over` deep-merged onto `base` (neither is modified): objects merge key by key, `over`
    wins; lists and scalars replace whole; a None (JSON null) in `over` deletes the key."""
    if not isinstance(base, dict) or not isinstance(over, dict):
        return _without_nulls(over)
    out = copy.deepcopy(base)
    for key, value in over.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge(out[key], value) if isinstance(out.get(key), dict) else _without_nulls(value)
    return out


def _without_nulls(value):
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    return copy.deepcopy(value)


def find_kernel_maps(roots: List[str]) -> List[str]:
    """Kernel-map files among `roots` (files, or directories searched for *.json declaring a
    kernel or extending a map); sorted so the order never depends on the disk or the command line."""
    found = []
    for root in roots:
        if os.path.isfile(root):
            found.append(root)
            continue
        if not os.path.isdir(root):
            raise CompileError(f"{root}: no such kernel-map file or directory")
        found += _maps_under(root)
    return sorted(set(found))


def _maps_under(root: str) -> List[str]:
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            if name.endswith(".json") and not name.startswith("."):
                path = os.path.join(dirpath, name)
                data = _read_json(path)
                # An extending map without its own `kernel` is found too, so its schema reports it.
                if isinstance(data, dict) and ("kernel" in data or "extends" in data):
                    found.append(path)
    return sorted(found)


def load_kernel_maps(paths: List[str]) -> List[Document]:
    docs = [load_kernel_map(p) for p in paths]
    seen: Dict[str, str] = {}
    for d in docs:
        name = d.data["kernel"]
        if name in seen:
            raise CompileError(f"{d.path}: /kernel: kernel {name} is also mapped by {seen[name]}")
        seen[name] = d.path
    return docs


def load_config(path: str) -> Document:
    doc = Document(path, _read_json(path))
    if not isinstance(doc.data, dict):
        raise CompileError(f"{path}: /: expected a JSON object of model dimensions")
    return doc


# Manifest dtype spellings -> the dtype names kernel-map ports use. Packed checkpoints write the
# port spelling (ckw/checkpoints/packed.py); the others are numpy's and safetensors'.
MANIFEST_DTYPES = {
    "f32": "f32",
    "float32": "f32",
    "F32": "f32",
    "<f4": "f32",
    "bf16": "bf16",
    "bfloat16": "bf16",
    "BF16": "bf16",
    "f16": "f16",
    "float16": "f16",
    "F16": "f16",
    "<f2": "f16",
    "i8": "i8",
    "int8": "i8",
    "I8": "i8",
    "|i1": "i8",
}


def weight_dtypes(doc: Document) -> Dict[str, str]:
    """Tensor name -> its dtype in kernel-map spelling (what selection matches weight ports on)."""
    return {t["name"]: MANIFEST_DTYPES[t["dtype"]] for t in doc.data["tensors"]}


def build_precision(doc: Document) -> Optional[str]:
    """The build a derived checkpoint states (`precision`: bf16, int8), None for the converted one."""
    return doc.data.get("precision")


def state_dtypes(doc: Document) -> Dict[str, str]:
    """State name -> the dtype a derived checkpoint's build stores it in (`state_dtypes`: e.g. the
    cross-attention K/V as f16), {} for the converted one. The circuit's dtype holds for the rest."""
    return dict(doc.data.get("state_dtypes", {}))


def load_manifest(path: str) -> Document:
    doc = Document(path, _read_json(path))
    data = doc.data
    if not isinstance(data, dict) or not isinstance(data.get("tensors"), list):
        raise CompileError(f"{path}: /tensors: expected a list of tensors")
    layout = data.get("layout_sha256")
    if not (isinstance(layout, str) and len(layout) == 64 and all(c in "0123456789abcdef" for c in layout)):
        raise CompileError(
            f"{path}: /layout_sha256: expected the layout digest (64 lowercase hex digits); repack the "
            "checkpoint (ckw/checkpoints/pack.py)"
        )
    if not isinstance(data.get("precision", ""), str):
        raise CompileError(
            f'{path}: /precision: expected the build\'s name (a string, e.g. "bf16"), got '
            f"{data['precision']!r}; rederive the checkpoint (ckw/checkpoints/precision)"
        )
    states = data.get("state_dtypes", {})
    if not isinstance(states, dict) or not all(
        isinstance(n, str) and MANIFEST_DTYPES.get(d) == d for n, d in states.items()
    ):
        raise CompileError(
            f"{path}: /state_dtypes: expected {{state name: dtype}} with dtypes among "
            f"{', '.join(sorted(set(MANIFEST_DTYPES.values())))}, got {states!r}; rederive the "
            "checkpoint (ckw/checkpoints/precision)"
        )
    for i, t in enumerate(data["tensors"]):
        for key in ("name", "dtype", "shape", "offset", "nbytes"):
            if key not in t:
                raise CompileError(f"{path}: /tensors/{i}: expected property '{key}'")
        if t["dtype"] not in MANIFEST_DTYPES:
            raise CompileError(
                f"{path}: /tensors/{i}/dtype: tensor {t['name']} has dtype {t['dtype']!r}; the "
                f"compiler knows {', '.join(sorted(MANIFEST_DTYPES))}"
            )
    return doc
