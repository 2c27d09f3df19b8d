"""Pass 1: read circuit, kernel-map and config JSON and validate them against the schemas."""

import json
import os
from dataclasses import dataclass
from typing import Dict, List

import jsonschema

from tools.codegen import parallel
from tools.codegen.errors import CompileError

_SCHEMA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "schemas")


@dataclass(frozen=True)
class Document:
    path: str  # as given (relative paths stay relative so diagnostics and stamps are stable)
    data: dict


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


def _validate(doc: Document, validator) -> None:
    errors = sorted(validator.iter_errors(doc.data), key=lambda e: (list(map(str, e.absolute_path)), e.message))
    if not errors:
        return
    error = jsonschema.exceptions.best_match(errors)
    # oneOf failures hide the useful message in their context: report the deepest one.
    while error.context:
        error = jsonschema.exceptions.best_match(error.context)
    raise CompileError(f"{doc.path}: {_pointer(error.absolute_path)}: expected {_expected(error)}")


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
    doc = Document(path, _read_json(path))
    _validate(doc, _schema("kernel_map.schema.json"))
    parallel.validate(doc)
    return doc


def find_kernel_maps(roots: List[str]) -> List[str]:
    """Kernel-map files among `roots` (files, or directories searched for *.json declaring a
    kernel); sorted so the order never depends on the disk or the command line."""
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
                if isinstance(data, dict) and "kernel" in data:
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


def load_manifest(path: str) -> Document:
    doc = Document(path, _read_json(path))
    data = doc.data
    if not isinstance(data, dict) or not isinstance(data.get("tensors"), list):
        raise CompileError(f"{path}: /tensors: expected a list of tensors")
    if not isinstance(data.get("manifest_sha256"), str):
        raise CompileError(f"{path}: /manifest_sha256: expected the manifest hash string")
    for i, t in enumerate(data["tensors"]):
        for key in ("name", "dtype", "shape", "offset", "nbytes"):
            if key not in t:
                raise CompileError(f"{path}: /tensors/{i}: expected property '{key}'")
    return doc
