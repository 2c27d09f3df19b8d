"""Reader for Hugging Face safetensors checkpoints (single file or sharded with an index).

A safetensors file is: u64 little-endian header length N, N bytes of JSON
`{name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {...}}`, then the
data block; offsets are relative to the data block. Only the header is parsed up front; tensor
bytes are read one tensor at a time, like the CTranslate2 reader, so both feed the same packer.
"""

from __future__ import annotations

import json
import os
import struct
from dataclasses import dataclass

import numpy as np

from ckw.checkpoints.errors import CheckpointError

_DTYPES = {
    "F32": ("float32", np.dtype("<f4")),
    "F16": ("float16", np.dtype("<f2")),
    "BF16": ("bfloat16", np.dtype("<u2")),  # raw bits; widened by the converter
    "I64": ("int64", np.dtype("<i8")),
    "I32": ("int32", np.dtype("<i4")),
    "I16": ("int16", np.dtype("<i2")),
    "I8": ("int8", np.dtype("i1")),
    "U8": ("uint8", np.dtype("u1")),
    "BOOL": ("bool", np.dtype("?")),
    "F64": ("float64", np.dtype("<f8")),
}
_MAX_HEADER = 100 * 1024 * 1024


@dataclass(frozen=True)
class StTensor:
    name: str
    path: str
    shape: tuple[int, ...]
    dtype: str  # "float32", "float16", "bfloat16", ...
    offset: int  # absolute byte offset in `path`
    nbytes: int


class SafetensorsCheckpoint:
    """All tensors of a safetensors checkpoint directory, indexed by name."""

    def __init__(self, paths: list[str]):
        self.paths = [str(p) for p in paths]
        self.tensors: dict[str, StTensor] = {}
        for p in self.paths:
            for t in _index_file(p):
                if t.name in self.tensors:
                    raise CheckpointError(f"{p}: tensor '{t.name}' also appears in {self.tensors[t.name].path}")
                self.tensors[t.name] = t

    @classmethod
    def from_dir(cls, directory: str) -> SafetensorsCheckpoint:
        index = os.path.join(directory, "model.safetensors.index.json")
        single = os.path.join(directory, "model.safetensors")
        if os.path.exists(single):
            return cls([single])
        if os.path.exists(index):
            try:
                with open(index, encoding="utf-8") as f:
                    weight_map = json.load(f)["weight_map"]
            except (OSError, ValueError, KeyError) as e:
                raise CheckpointError(f"{index}: unreadable shard index ({e}); re-download it") from e
            shards = sorted(set(weight_map.values()))
            return cls([os.path.join(directory, s) for s in shards])
        raise CheckpointError(
            f"{directory}: no model.safetensors (or model.safetensors.index.json); only safetensors "
            "weights are supported in a Hugging Face directory"
        )

    def read_bytes(self, name: str, start: int = 0, length: int | None = None) -> bytes:
        t = self.tensors[name]
        if length is None:
            length = t.nbytes - start
        with open(t.path, "rb") as f:
            f.seek(t.offset + start)
            data = f.read(length)
        if len(data) != length:
            raise CheckpointError(
                f"{t.path}: truncated: short read of tensor '{name}' ({len(data)} of {length} "
                "bytes); re-download the file"
            )
        return data

    def read_array(self, name: str) -> np.ndarray:
        t = self.tensors[name]
        np_dtype = next(nd for d, nd in _DTYPES.values() if d == t.dtype)
        return np.frombuffer(self.read_bytes(name), dtype=np_dtype).reshape(t.shape)


def _index_file(path: str) -> list[StTensor]:
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            head = f.read(8)
            if len(head) < 8:
                raise CheckpointError(f"{path}: truncated: {size} bytes is too short for safetensors")
            (n,) = struct.unpack("<Q", head)
            if n > _MAX_HEADER or 8 + n > size:
                raise CheckpointError(
                    f"{path}: corrupt safetensors header length {n} (file has {size} bytes); re-download it"
                )
            header_bytes = f.read(n)
    except OSError as e:
        raise CheckpointError(f"{path}: cannot read ({e.strerror})") from e
    try:
        header = json.loads(header_bytes)
    except ValueError as e:
        raise CheckpointError(f"{path}: corrupt safetensors header ({e}); re-download it") from e
    data_start = 8 + n
    out = []
    for name, info in header.items():
        if name == "__metadata__":
            continue
        try:
            dtype, np_dtype = _DTYPES[info["dtype"]]
            shape = tuple(int(d) for d in info["shape"])
            begin, end = (int(x) for x in info["data_offsets"])
        except (KeyError, TypeError, ValueError) as e:
            raise CheckpointError(f"{path}: tensor '{name}' has an unreadable header entry ({e})") from e
        numel = int(np.prod(shape, dtype=np.int64)) if shape else 1
        if end - begin != numel * np_dtype.itemsize or begin < 0:
            raise CheckpointError(
                f"{path}: corrupt: tensor '{name}' spans {end - begin} bytes but shape "
                f"{list(shape)} {info['dtype']} needs {numel * np_dtype.itemsize}"
            )
        if data_start + end > size:
            raise CheckpointError(
                f"{path}: truncated: tensor '{name}' ends at byte {data_start + end} but the file "
                f"has {size}; re-download it"
            )
        out.append(StTensor(name, path, shape, dtype, data_start + begin, end - begin))
    return out
