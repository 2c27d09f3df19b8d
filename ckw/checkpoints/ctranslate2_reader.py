"""Reader for CTranslate2 `model.bin` files (binary version 6).

Layout (all integers little-endian; a string is a u16 byte count including a trailing NUL,
then UTF-8 bytes, then the NUL):

    u32 binary_version            6
    str spec_name                 e.g. "WhisperSpec"
    u32 spec_revision             e.g. 3
    u32 n_variables
    n_variables x { str name; u8 ndim; u32 dims[ndim]; u8 dtype_id; u32 nbytes; bytes data }
    u32 n_aliases
    n_aliases x { str alias; str target }

dtype ids follow CTranslate2's DataType enum: 0 float32, 1 int8, 2 int16, 3 int32, 4 float16,
5 bfloat16.

The header is indexed without reading tensor data, so a 150 MB file costs a few hundred small
reads; data is read later, one tensor (or one byte range of it) at a time. A model may be split
into several part files that are concatenated logically (`model.bin.part1` + `model.bin.part2`);
no joined copy is ever written.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from typing import Self

import numpy as np

from ckw.checkpoints.errors import CheckpointError

SUPPORTED_BINARY_VERSION = 6

# Order of CTranslate2's DataType enum (include/ctranslate2/types.h).
DTYPES = ("float32", "int8", "int16", "int32", "float16", "bfloat16")
_ITEMSIZE = {"float32": 4, "int8": 1, "int16": 2, "int32": 4, "float16": 2, "bfloat16": 2}
# bfloat16 has no numpy dtype: its raw bits are read as uint16 and widened by the converter.
NUMPY_DTYPES = {
    "float32": np.dtype("<f4"),
    "int8": np.dtype("i1"),
    "int16": np.dtype("<i2"),
    "int32": np.dtype("<i4"),
    "float16": np.dtype("<f2"),
    "bfloat16": np.dtype("<u2"),
}

_MAX_NDIM = 8
_MAX_COUNT = 1_000_000  # far above any real model; guards against reading garbage as a count


@dataclass(frozen=True)
class Variable:
    """One stored tensor: where its bytes are in the (logically concatenated) file."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    offset: int  # of the first data byte, in the concatenated stream
    nbytes: int

    @property
    def itemsize(self) -> int:
        return _ITEMSIZE[self.dtype]

    @property
    def numel(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n


class PartedFile:
    """Read-only random access over one file or several part files joined end to end."""

    def __init__(self, paths: list[str]):
        if not paths:
            raise CheckpointError("no model.bin file given")
        self.paths = [str(p) for p in paths]
        self.label = "+".join(os.path.basename(p) for p in self.paths)
        self._starts = []
        self._sizes = []
        start = 0
        for p in self.paths:
            try:
                size = os.path.getsize(p)
            except OSError as e:
                raise CheckpointError(f"{p}: cannot read ({e.strerror}); check the path") from e
            self._starts.append(start)
            self._sizes.append(size)
            start += size
        self.size = start
        self._handles = [open(p, "rb") for p in self.paths]  # noqa: SIM115 (closed in close())

    def close(self) -> None:
        for h in self._handles:
            h.close()
        self._handles = []

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def file_at(self, offset: int) -> str:
        """The part file that holds byte `offset` (the last part for end of file)."""
        for p, start, size in zip(self.paths, self._starts, self._sizes):
            if offset < start + size:
                return p
        return self.paths[-1]

    def read(self, offset: int, n: int, what: str) -> bytearray:
        """Exactly `n` bytes at `offset`, or a one-line 'truncated' error naming `what`."""
        if offset < 0 or n < 0 or offset + n > self.size:
            raise CheckpointError(
                f"{self.file_at(self.size)}: truncated: {what} needs {n} bytes at offset {offset} "
                f"but {self.label} ends at byte {self.size}; the file is incomplete, reinstall or "
                "re-download it"
            )
        out = bytearray(n)  # filled in place: no second copy of a 100 MB tensor
        view = memoryview(out)
        pos, done = offset, 0
        for h, start, size in zip(self._handles, self._starts, self._sizes):
            if done == n:
                break
            if pos >= start + size:
                continue
            h.seek(pos - start)
            want = min(n - done, start + size - pos)
            got = h.readinto(view[done : done + want])
            if got != want:  # the file shrank after it was opened
                raise CheckpointError(f"{self.file_at(pos)}: truncated: short read of {what} at offset {pos}")
            pos += got
            done += got
        return out


class Ct2Model:
    """An indexed CTranslate2 model.bin: spec, revision, variables and aliases."""

    def __init__(self, paths: str | list[str]):
        self.file = PartedFile([paths] if isinstance(paths, (str, os.PathLike)) else list(paths))
        self.label = self.file.label
        self.variables: dict[str, Variable] = {}
        self.aliases: dict[str, str] = {}
        try:
            self._index()
        except BaseException:
            self.file.close()
            raise

    def close(self) -> None:
        self.file.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- header parsing -------------------------------------------------------------------

    def _u(self, fmt: str, what: str) -> int:
        n = struct.calcsize("<" + fmt)
        (value,) = struct.unpack("<" + fmt, self.file.read(self._pos, n, what))
        self._pos += n
        return value

    def _str(self, what: str) -> str:
        n = self._u("H", what)
        if n == 0:
            raise self._corrupt(f"{what} has length 0 (even an empty string stores its NUL)")
        raw = self.file.read(self._pos, n, what)
        self._pos += n
        if raw[-1] != 0:
            raise self._corrupt(f"{what} is not NUL-terminated")
        try:
            return raw[:-1].decode("utf-8")
        except UnicodeDecodeError as e:
            raise self._corrupt(f"{what} is not UTF-8") from e

    def _corrupt(self, why: str) -> CheckpointError:
        return CheckpointError(
            f"{self.file.file_at(self._pos)}: corrupt CTranslate2 model at byte {self._pos}: {why}; "
            "the file is damaged or not a model.bin, re-download or reinstall it"
        )

    def _index(self) -> None:
        self._pos = 0
        first = self.file.paths[0]
        if self.file.size < 4:
            raise CheckpointError(
                f"{first}: truncated: {self.file.size} bytes is too short for a CTranslate2 "
                "model.bin; reinstall or re-download it"
            )
        self.binary_version = self._u("I", "binary version")
        if self.binary_version != SUPPORTED_BINARY_VERSION:
            raise CheckpointError(
                f"{first}: bad version: CTranslate2 binary version {self.binary_version}, only "
                f"{SUPPORTED_BINARY_VERSION} is supported; re-convert the model with "
                "ctranslate2>=3 or check that this is a model.bin"
            )
        self.spec = self._str("spec name")
        self.revision = self._u("I", "spec revision")
        n_vars = self._u("I", "variable count")
        if n_vars > _MAX_COUNT:
            raise self._corrupt(f"variable count {n_vars} is implausible")
        for i in range(n_vars):
            name = self._str(f"name of variable #{i}")
            ndim = self._u("B", f"rank of '{name}'")
            if ndim > _MAX_NDIM:
                raise self._corrupt(f"tensor '{name}' has rank {ndim}")
            shape = tuple(self._u("I", f"shape of '{name}'") for _ in range(ndim))
            dtype_id = self._u("B", f"dtype of '{name}'")
            if dtype_id >= len(DTYPES):
                raise self._corrupt(f"tensor '{name}' has unknown dtype id {dtype_id}")
            dtype = DTYPES[dtype_id]
            nbytes = self._u("I", f"byte count of '{name}'")
            var = Variable(name, shape, dtype, self._pos, nbytes)
            if nbytes != var.numel * var.itemsize:
                raise self._corrupt(
                    f"tensor '{name}' declares {nbytes} bytes but shape {list(shape)} {dtype} "
                    f"needs {var.numel * var.itemsize}"
                )
            if self._pos + nbytes > self.file.size:
                self.file.read(self._pos, nbytes, f"data of tensor '{name}'")  # raises truncated
            if name in self.variables:
                raise self._corrupt(f"tensor '{name}' is stored twice")
            self.variables[name] = var
            self._pos += nbytes
        n_aliases = self._u("I", "alias count")
        if n_aliases > _MAX_COUNT:
            raise self._corrupt(f"alias count {n_aliases} is implausible")
        for i in range(n_aliases):
            alias = self._str(f"alias #{i}")
            target = self._str(f"target of alias '{alias}'")
            if alias in self.variables or alias in self.aliases:
                raise self._corrupt(f"alias '{alias}' shadows another entry")
            self.aliases[alias] = target
        if self._pos != self.file.size:
            raise self._corrupt(f"{self.file.size - self._pos} unexpected bytes after the alias table")
        for alias in self.aliases:
            self.resolve(alias)  # reject dangling or cyclic aliases now, not at first use

    # -- access ---------------------------------------------------------------------------

    def names(self) -> list[str]:
        """Every entry: stored variables, then aliases (both in file order)."""
        return list(self.variables) + list(self.aliases)

    def __contains__(self, name: str) -> bool:
        return name in self.variables or name in self.aliases

    def resolve(self, name: str) -> Variable:
        """The stored variable behind `name`, following aliases."""
        seen = []
        while name in self.aliases:
            if name in seen:
                raise CheckpointError(f"{self.file.paths[0]}: corrupt: alias cycle {' -> '.join(seen + [name])}")
            seen.append(name)
            name = self.aliases[name]
        if name not in self.variables:
            raise CheckpointError(
                f"{self.file.paths[0]}: corrupt: alias '{seen[0] if seen else name}' points at missing tensor '{name}'"
            )
        return self.variables[name]

    def read_bytes(self, name: str, start: int = 0, length: int | None = None) -> bytes:
        """Raw bytes of `name` (or of the byte range [start, start+length) of it)."""
        var = self.resolve(name)
        if length is None:
            length = var.nbytes - start
        if start < 0 or start + length > var.nbytes:
            raise ValueError(f"byte range {start}+{length} outside tensor '{name}'")
        return self.file.read(var.offset + start, length, f"data of tensor '{name}'")

    def read_array(self, name: str) -> np.ndarray:
        """The tensor as a numpy array in its stored dtype (bfloat16 as raw uint16 bits)."""
        var = self.resolve(name)
        raw = self.read_bytes(name)
        return np.frombuffer(raw, dtype=NUMPY_DTYPES[var.dtype]).reshape(var.shape)

    def read_scalar(self, name: str) -> int | float:
        var = self.resolve(name)
        if var.shape != ():
            raise CheckpointError(
                f"{self.file.paths[0]}: tensor '{name}' has shape {list(var.shape)}, expected a scalar"
            )
        return self.read_array(name).item()
