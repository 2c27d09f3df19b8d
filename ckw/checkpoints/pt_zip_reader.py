"""Reader for PyTorch zip checkpoints (what `torch.save` writes since 1.6), without torch.

The file is a zip archive with one top folder `<archive>/` holding `data.pkl` (the pickled object:
for openai-whisper `{"dims": {...}, "model_state_dict": {name: tensor}}`), `data/<key>` (each
storage's raw bytes), `byteorder` (absent before torch 1.10: little) and `version`. A tensor is
pickled as `torch._utils._rebuild_tensor_v2(storage, offset, size, stride, ...)`, its storage as a
persistent id `("storage", torch.<Type>Storage, key, location, numel)`.

Unpickling runs code named by the file, so `find_class` admits only what a state dict needs
(OrderedDict, the tensor rebuild functions, the storage types) and refuses every other global
without calling it. Tensors come back as `TorchTensor` records; their bytes are read from the zip
on demand, one tensor at a time. bfloat16 stays raw uint16 bits (widened exactly by the converter).
"""

from __future__ import annotations

import collections
import io
import pickle
import zipfile
from dataclasses import dataclass

import numpy as np

from ckw.checkpoints.errors import CheckpointError

# torch.<name> storage type -> (dtype name, little-endian numpy storage dtype)
_STORAGES = {
    "HalfStorage": ("float16", "<f2"),
    "FloatStorage": ("float32", "<f4"),
    "BFloat16Storage": ("bfloat16", "<u2"),  # raw bits
    "DoubleStorage": ("float64", "<f8"),
    "LongStorage": ("int64", "<i8"),
    "IntStorage": ("int32", "<i4"),
    "ShortStorage": ("int16", "<i2"),
    "CharStorage": ("int8", "i1"),
    "ByteStorage": ("uint8", "u1"),
    "BoolStorage": ("bool", "?"),
    "UntypedStorage": ("uint8", "u1"),  # numel counts bytes
}
_NUMPY = dict(_STORAGES.values())
_MAX_PICKLE = 64 << 20  # a state dict's pickle is a few hundred kB; refuse to inflate a bomb


@dataclass(frozen=True)
class Storage:
    key: str  # the zip member is <archive>/data/<key>
    dtype: str
    numel: int


@dataclass(frozen=True)
class TorchTensor:
    storage: Storage
    offset: int  # in elements
    shape: tuple[int, ...]
    stride: tuple[int, ...]

    @property
    def dtype(self) -> str:
        return self.storage.dtype


class _StorageType:
    """Stands for a torch.<name>Storage class inside the pickle; never instantiated by it."""

    def __init__(self, name: str):
        self.name = name


class TorchZipCheckpoint:
    """An open PyTorch zip checkpoint: `load()` the pickled object, `read_bytes(tensor)` its data."""

    def __init__(self, path: str):
        self.path = path
        try:
            with open(path, "rb") as f:
                magic = f.read(4)
        except OSError as e:
            raise CheckpointError(f"{path}: cannot read ({e.strerror})") from e
        if magic != b"PK\x03\x04":
            raise CheckpointError(
                f"{path}: not a zip archive, so not a PyTorch >= 1.6 checkpoint (a legacy torch.save file or "
                "another format); re-save it with a current torch (torch.save(torch.load(f), f))"
            )
        try:
            self._zip = zipfile.ZipFile(path)
            names = self._zip.namelist()
        except (zipfile.BadZipFile, OSError, ValueError) as e:
            raise CheckpointError(f"{path}: corrupt or truncated zip archive ({e}); re-download it") from e
        pickles = [n for n in names if n.count("/") == 1 and n.endswith("/data.pkl")]
        if len(pickles) != 1:
            self._zip.close()
            raise CheckpointError(
                f"{path}: {len(pickles)} '<archive>/data.pkl' members, expected 1; not a torch.save checkpoint"
            )
        self._prefix = pickles[0][: -len("data.pkl")]
        self._members = set(names)
        order = (
            self._read(self._prefix + "byteorder", 16).decode("ascii", "replace").strip()
            if self._prefix + "byteorder" in self._members
            else "little"
        )
        if order not in ("little", "big"):
            self._zip.close()
            raise CheckpointError(f"{path}: byteorder '{order}' is neither little nor big; the file is corrupt")
        self._big_endian = order == "big"

    def __enter__(self) -> TorchZipCheckpoint:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self._zip.close()

    def _read(self, member: str, limit: int | None = None) -> bytes:
        try:
            info = self._zip.getinfo(member)
            if limit is not None and info.file_size > limit:
                raise CheckpointError(
                    f"{self.path}: member '{member}' is {info.file_size} bytes, more than "
                    f"the {limit} expected; not a PyTorch state-dict checkpoint"
                )
            return self._zip.read(info)
        except KeyError as e:
            raise CheckpointError(f"{self.path}: zip member '{member}' is missing; the file is incomplete") from e
        except (zipfile.BadZipFile, OSError, EOFError, ValueError, zipfile.LargeZipFile) as e:
            raise CheckpointError(
                f"{self.path}: zip member '{member}' is corrupt or truncated ({e}); re-download the file"
            ) from e

    def load(self) -> object:
        """The pickled object, tensors as `TorchTensor` records (no tensor data is read)."""
        data = self._read(self._prefix + "data.pkl", _MAX_PICKLE)
        try:
            return _Unpickler(io.BytesIO(data), self).load()
        except CheckpointError:
            raise
        except Exception as e:  # noqa: BLE001 (any failure of a corrupt pickle is the file's fault)
            raise CheckpointError(
                f"{self.path}: corrupt pickle in '{self._prefix}data.pkl' "
                f"({type(e).__name__}: {e}); re-download or re-save the file"
            ) from e

    def _storage(self, pid) -> Storage:
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"):
            raise CheckpointError(f"{self.path}: unknown persistent id {str(pid)[:80]!r}; not a torch.save checkpoint")
        _, kind, key, _location, numel = pid
        if not isinstance(kind, _StorageType) or not isinstance(key, str) or not isinstance(numel, int) or numel < 0:
            raise CheckpointError(f"{self.path}: malformed storage record {str(pid)[:80]!r}; the file is corrupt")
        member = f"{self._prefix}data/{key}"
        if member not in self._members:
            raise CheckpointError(f"{self.path}: zip member '{member}' is missing; the file is incomplete")
        dtype, np_dtype = _STORAGES[kind.name]
        size = self._zip.getinfo(member).file_size
        if size != numel * np.dtype(np_dtype).itemsize:
            raise CheckpointError(
                f"{self.path}: zip member '{member}' has {size} bytes but its storage needs {numel} x {dtype}; "
                "the file is corrupt"
            )
        return Storage(key, dtype, numel)

    def read_array(self, tensor: TorchTensor, what: str) -> np.ndarray:
        """The tensor's values, C-contiguous, little-endian (bfloat16 as uint16 bits)."""
        np_dtype = np.dtype(_NUMPY[tensor.dtype])
        raw = self._read(f"{self._prefix}data/{tensor.storage.key}")
        storage = np.frombuffer(raw, dtype=np_dtype.newbyteorder(">") if self._big_endian else np_dtype)
        shape, stride, offset = tensor.shape, tensor.stride, tensor.offset
        last = offset + sum((n - 1) * s for n, s in zip(shape, stride)) if all(shape) else offset - 1
        if len(stride) != len(shape) or offset < 0 or any(s < 0 for s in stride) or last >= storage.size:
            raise CheckpointError(
                f"{what}: shape {list(shape)} stride {list(stride)} offset {offset} lies outside its storage of "
                f"{storage.size} elements; the file is corrupt"
            )
        view = np.lib.stride_tricks.as_strided(
            storage[offset:], shape, [s * storage.itemsize for s in stride], writeable=False
        )
        return np.ascontiguousarray(view, dtype=np_dtype)  # also swaps a big-endian file's bytes

    def read_bytes(self, tensor: TorchTensor, what: str) -> bytes:
        return self.read_array(tensor, what).tobytes()


def _rebuild_tensor(storage, storage_offset, size, stride, *_rest) -> TorchTensor:
    if not isinstance(storage, Storage):
        raise TypeError(f"tensor storage is {type(storage).__name__}, not a storage record")
    return TorchTensor(storage, int(storage_offset), tuple(int(n) for n in size), tuple(int(s) for s in stride))


def _rebuild_parameter(data, *_rest):  # an nn.Parameter pickled as itself: keep its tensor
    return data


class _Unpickler(pickle.Unpickler):
    def __init__(self, file, owner: TorchZipCheckpoint):
        super().__init__(file)
        self._owner = owner

    def find_class(self, module: str, name: str):
        if (module, name) == ("collections", "OrderedDict"):
            return collections.OrderedDict
        if (module, name) == ("torch._utils", "_rebuild_tensor_v2"):
            return _rebuild_tensor
        if (module, name) == ("torch._utils", "_rebuild_parameter"):
            return _rebuild_parameter
        if module in ("torch", "torch.storage") and name in _STORAGES:
            return _StorageType(name)
        raise CheckpointError(
            f"{self._owner.path}: refuses to unpickle global '{module}.{name}': a Whisper checkpoint holds only "
            "tensors, dicts and numbers, and unpickling another global could run code; do not use this file"
        )

    def persistent_load(self, pid):
        return self._owner._storage(pid)
