"""Python side of the kernel registry (kernels/kernel.bzl) for py_tests.

A kernel is reached through its map: `Kernel("kernels/norm/f32_layer_norm.json")` reads the
map (extends resolved by the compiler's own loader), loads the library's ctypes shared object
(`libckw_<name>.so` beside the map, named after the map's `library`) and declares each entry point
from the map's `abi`, so no test restates a signature or a tolerance.
"""

import ctypes
import functools
import os
from typing import Dict, FrozenSet, List, Optional

import numpy as np

from tools.codegen import load

_CTYPES = {
    "float": ctypes.c_float,
    "int": ctypes.c_int,
    "int64_t": ctypes.c_int64,
}
_POINTEE = {
    "float": np.float32,
    "int32_t": np.int32,
    "uint8_t": np.uint8,
    "int8_t": np.int8,
    "uint16_t": np.uint16,
    "int64_t": np.int64,
    "void": None,
}


def bf16_from_f32(a) -> np.ndarray:
    """bf16 bit patterns (uint16) of float32 values, rounded to nearest even like the checkpoint packer
    (NaN stays a quiet NaN)."""
    u = np.ascontiguousarray(a, np.float32).view(np.uint32)
    rounded = ((u + np.uint32(0x7FFF) + ((u >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16)).astype(np.uint16)
    nan = (u & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000)
    return np.where(nan, ((u >> np.uint32(16)) | np.uint32(0x40)).astype(np.uint16), rounded)


def f32_from_bf16(h) -> np.ndarray:
    """The float32 values of bf16 bit patterns (exact: the top half of an fp32)."""
    return (np.ascontiguousarray(h, np.uint16).astype(np.uint32) << np.uint32(16)).view(np.float32)


class DType:
    """A map port dtype as tests see it: the numpy storage, how random values and given values are
    stored (`store`, from float64 or integers), and the float32 values an oracle reads (`values`;
    None: the storage as it is, e.g. integers)."""

    def __init__(self, storage, store=None, values=None, floating=False):
        self.storage, self.floating = storage, floating
        self.store = store or (lambda a: np.ascontiguousarray(a, storage))
        self.values = values


# Every port dtype a kernel map may state (tools/codegen/schemas/kernel_map.schema.json).
DTYPES = {
    "f32": DType(np.float32, floating=True, values=lambda a: a),
    "bf16": DType(
        np.uint16, store=lambda a: bf16_from_f32(np.asarray(a, np.float32)), values=f32_from_bf16, floating=True
    ),
    "f16": DType(
        np.uint16,
        store=lambda a: np.asarray(a, np.float32).astype(np.float16).view(np.uint16),
        values=lambda h: np.ascontiguousarray(h, np.uint16).view(np.float16).astype(np.float32),
        floating=True,
    ),
    "i64": DType(np.int64),
    "i32": DType(np.int32),
    "i16": DType(np.int16),
    "u8": DType(np.uint8),
    "i8": DType(np.int8),  # int8_t (the int8 build's weights and token table, with f32 scales beside them)
}


def _pointer_type(pointee: str, where: str):
    """A ctypes parameter type for `pointee *`: takes a C-contiguous numpy array of that dtype
    (checked), bytes (for uint8_t), None, an address or a ctypes byref()."""
    if pointee not in _POINTEE:
        raise ValueError(
            f"{where}: pointer to {pointee!r} has no numpy equivalent; add it to kernels/common/kernel_testing.py"
        )
    dtype = _POINTEE[pointee]

    class Pointer:
        @classmethod
        def from_param(cls, obj):
            if isinstance(obj, np.ndarray):
                if not obj.flags["C_CONTIGUOUS"]:
                    raise TypeError(f"{where}: the array must be C-contiguous")
                if dtype is not None and obj.dtype != dtype:
                    raise TypeError(f"{where}: expected {np.dtype(dtype).name}, got {obj.dtype.name}")
                return obj.ctypes.data_as(ctypes.c_void_p)
            if isinstance(obj, (bytes, bytearray)):
                return ctypes.c_char_p(bytes(obj))
            return obj

    return Pointer


def runfile(path: str) -> str:
    """A workspace-relative path inside this test's runfiles."""
    root = os.environ.get("TEST_SRCDIR")
    if root:
        return os.path.join(root, os.environ.get("TEST_WORKSPACE", "ckw"), path)
    return path


def kernel_map(path: str) -> dict:
    """The resolved kernel map (workspace-relative path)."""
    return load.load_kernel_map(runfile(path)).data


def tol_c(path: str) -> float:
    return kernel_map(path)["contract"]["tolerance_c"]


def ctype_of(ctype: str, where: str):
    """ctypes type of a map `ctype` (pointers take numpy arrays of the pointee's dtype)."""
    if ctype.endswith("*"):
        return _pointer_type(ctype[:-1].replace("const", "").strip(), where)
    if ctype not in _CTYPES:
        raise ValueError(
            f"{where}: ctype {ctype!r} has no ctypes equivalent; add it to kernels/common/kernel_testing.py"
        )
    return _CTYPES[ctype]


def _restype(returns, where: str):
    if returns is None:
        return None
    if returns == "status":
        return ctypes.c_int
    if returns == "value":
        return ctypes.c_int64
    return ctype_of(returns["ctype"], where)


def shared_library_path(kernel_map_data: dict) -> str:
    package, _, name = kernel_map_data["library"].lstrip("/").partition(":")
    return runfile(os.path.join(package, f"libckw_{name}.so"))


class Kernel:
    """One kernel map and its library, with ctypes entry points declared from the map."""

    def __init__(self, map_path: str):
        self.path = map_path
        self.map = kernel_map(map_path)
        self.name = self.map["kernel"]
        self.lib = ctypes.CDLL(shared_library_path(self.map))
        self.contract = self.map["contract"]

    @property
    def tol_c(self) -> float:
        return self.contract.get("tolerance_c", 0.0)

    def _declare(self, symbol: str, abi: List[dict], returns) -> ctypes._CFuncPtr:
        fn = getattr(self.lib, symbol)
        fn.argtypes = [ctype_of(a["ctype"], f"{self.path}: {symbol}({a['arg']})") for a in abi]
        fn.restype = _restype(returns, f"{self.path}: {symbol}")
        return fn

    def function(self, isa: str = ""):
        """The entry point (`isa` "": the dispatching one; "__avx2" etc. a fixed ISA path)."""
        return self._declare(self.name + isa, self.map["abi"], self.map.get("returns"))

    def queries(self) -> Dict[str, ctypes._CFuncPtr]:
        return {
            q["function"]: self._declare(q["function"], q["abi"], q.get("returns")) for q in self.map.get("queries", [])
        }

    @property
    def strerror_function(self) -> Optional[str]:
        returns = self.map.get("returns")
        return self.map.get("strerror") or (returns.get("strerror") if isinstance(returns, dict) else None)

    def strerror(self, code: int) -> Optional[str]:
        name = self.strerror_function
        if not name:
            return None
        fn = getattr(self.lib, name)
        fn.argtypes, fn.restype = [ctypes.c_int], ctypes.c_char_p
        return fn(code).decode()


# The /proc/cpuinfo flags each ISA path needs (kernels/common/cpu.h, kernels/kernel.bzl ISAS).
ISA_FLAGS = {
    "avx2": {"avx2", "fma", "f16c"},
    "avx512": {"avx512f", "avx512bw", "avx512dq", "avx512vl", "f16c"},
    "avx512bf16": {"avx512f", "avx512bw", "avx512dq", "avx512vl", "f16c", "avx512_bf16"},
    "amx": {"avx512f", "avx512bw", "avx512dq", "avx512vl", "f16c", "avx512_bf16", "amx_tile", "amx_bf16"},
    "avxvnni": {"avx2", "fma", "f16c", "avx_vnni"},
    "avx512vnni": {"avx512f", "avx512bw", "avx512dq", "avx512vl", "f16c", "avx512_vnni"},
    "amxint8": {"avx512f", "avx512bw", "avx512dq", "avx512vl", "f16c", "avx512_vnni", "amx_tile", "amx_int8"},
}


@functools.lru_cache(maxsize=None)
def cpu_flags() -> FrozenSet[str]:
    """The CPU's flags in /proc/cpuinfo."""
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("flags"):
                return frozenset(line.split(":", 1)[1].split())
    return frozenset()


def missing_flags(isa: str) -> List[str]:
    """The flags an ISA path needs that the CPU lacks (none for scalar)."""
    return sorted(ISA_FLAGS.get(isa, set()) - cpu_flags())


def cpu_isas(isas=("avx2", "avx512")) -> List[str]:
    """ISA suffixes to test: scalar, the dispatching entry (""), and those of `isas` the CPU has."""
    return ["__scalar", ""] + ["__" + i for i in isas if not missing_flags(i)]


def ptr(a):
    assert a.flags["C_CONTIGUOUS"]
    return a.ctypes.data_as(ctypes.c_void_p)


def f32(a):
    return np.ascontiguousarray(a, dtype=np.float32)


class Library:
    """Every entry point the given maps declare (each ISA suffix too), their queries and
    strerror functions, as attributes: `Library(...).ckw_f32_add__avx2(y, a, b, T, D)`."""

    def __init__(self, *map_paths: str):
        self.kernels = [Kernel(p) for p in map_paths]
        self._functions = {}

    def tol_c(self, kernel: str) -> float:
        """contract.tolerance_c of the map of `kernel` (e.g. "ckw_f32_gelu" or "f32_gelu")."""
        name = kernel if kernel.startswith("ckw_") else "ckw_" + kernel
        return next(k.tol_c for k in self.kernels if k.name == name)

    def __getattr__(self, symbol: str):
        if symbol.startswith("_") or symbol == "kernels":
            raise AttributeError(symbol)
        if symbol not in self._functions:
            self._functions[symbol] = self._declare(symbol)
        return self._functions[symbol]

    def _declare(self, symbol: str):
        for k in self.kernels:
            if symbol == k.name or (symbol.startswith(k.name + "__") and "_" not in symbol[len(k.name) + 2 :]):
                return k.function(symbol[len(k.name) :])
            queries = k.queries()
            if symbol in queries:
                return queries[symbol]
            if symbol == k.strerror_function:
                fn = getattr(k.lib, symbol)
                fn.argtypes, fn.restype = [ctypes.c_int], ctypes.c_char_p
                return fn
        raise AttributeError(
            f"{symbol} is declared by none of the maps {[k.path for k in self.kernels]}: "
            "declare it in its kernel map (abi, queries or strerror)"
        )
