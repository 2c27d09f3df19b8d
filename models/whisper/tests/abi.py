"""ctypes declarations of the generated ABI (see tools/codegen/README.md), for the tests."""

import ctypes

import numpy as np

OK, E_ARGUMENT, E_IO, E_MANIFEST_MISMATCH = 0, -1, -2, -3
E_MISSING_INPUT, E_CROSS_KV_INVALID, E_CONTEXT_FULL, E_KERNEL = -6, -7, -8, -9

_F32 = np.ctypeslib.ndpointer(np.float32, flags="C_CONTIGUOUS")
_I32 = np.ctypeslib.ndpointer(np.int32, flags="C_CONTIGUOUS")
_H = ctypes.c_void_p

_COMMON = {
    "create": ([ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(_H)], ctypes.c_int),
    "free": ([_H], None),
    "strerror": ([ctypes.c_int], ctypes.c_char_p),
    "last_error": ([_H], ctypes.c_char_p),
    "manifest_sha256": ([], ctypes.c_char_p),
    "dim": ([ctypes.c_char_p], ctypes.c_int64),
}
_PARTS = {
    "encoder": {"run": ([_H, _F32, _F32], ctypes.c_int)},
    "decoder": {
        "set_encoder_memory": ([_H, _F32], ctypes.c_int),
        "prefill": ([_H, _I32, ctypes.c_int64, _F32], ctypes.c_int),
        "decode": ([_H, ctypes.c_int32, _F32], ctypes.c_int),
        "reset": ([_H], ctypes.c_int),
        "position": ([_H], ctypes.c_int64),
        "cross_kv_projections": ([_H], ctypes.c_int64),
    },
}


class Library:
    """One generated library: `lib.call("prefill", h, ...)` calls ckw_<variant>_<part>_prefill."""

    def __init__(self, path: str, variant: str, part: str):
        self.lib = ctypes.CDLL(path)
        self.prefix = f"ckw_{variant}_{part}_"
        for name, (args, res) in {**_COMMON, **_PARTS[part]}.items():
            fn = getattr(self.lib, self.prefix + name)
            fn.argtypes, fn.restype = args, res

    def call(self, name, *args):
        return getattr(self.lib, self.prefix + name)(*args)

    def dim(self, name: str) -> int:
        return self.call("dim", name.encode())

    def create(self, weights: str, manifest=None):
        """(status, handle)."""
        h = _H()
        rc = self.call("create", weights.encode(), manifest.encode() if manifest else None, ctypes.byref(h))
        return rc, h
